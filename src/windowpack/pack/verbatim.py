"""The verbatim phase of an allocation: which chunks go in word for word, unit by unit.

Units of meaning are atoms (design §4.8). A conversation turn, a record and a section are
*units*: a window holds a unit whole, or summarized, or not at all — never a part of it —
unless the unit alone costs more than `UNIT_SHARE` of the budget; such a unit may be cut, and
the layout says how much of it is missing. Chunks outside any unit (plain prose) are atoms of
their own.

Order. Chunks are taken in one fixed priority order — their own score, or a neighbour's in the
same unit less a margin (so context grows within the hit's unit first: the reply after a
request, the rest of a section; never into the previous turn) — and the phase stops at the
first item that does not fit. Taking a chunk of a unit that may not be cut takes the whole
unit; taking a chunk of a unit that may be cut also takes the unit's first chunk (the request
of a turn, the heading of a section), so a cut unit still says what it is.

Pinned units come first. A caller that knows which units the question is about (the
instances of a repeated request, `pack.repeats`) pins them in the order they are needed;
each is taken whole while it fits, before anything else.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from windowpack.pack.corpus import Corpus, Overheads, twins

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# How far below its neighbour's score a chunk next to a hit is ranked (in z-score units).
NEIGHBOUR_MARGIN = 1.0
# A unit costing more than this share of the budget may be cut; a smaller one goes in whole.
UNIT_SHARE = 0.25


@dataclass(frozen=True, kw_only=True)
class Units:
    """Runs of consecutive chunks forming one unit each (a chunk outside any unit is a run of
    its own): `start[g]`/`end[g]` bound run g, `of_chunk[i]` is the run of chunk i."""

    start: IntArray
    end: IntArray
    of_chunk: IntArray
    cost: IntArray
    atomic: BoolArray
    """Whether run g must go in whole (it is a unit that fits in its share of the budget)."""


def units_of(corpus: Corpus, budget: int, *, whole_units: bool = True) -> Units:
    """The corpus's units and which of them may not be cut at this budget (none, without
    `whole_units`)."""
    runs = unit_runs(corpus)
    atomic = runs.in_unit & (runs.cost <= max(1, int(budget * UNIT_SHARE)))
    if not whole_units:
        atomic = np.zeros_like(atomic)
    return Units(
        start=runs.start, end=runs.end, of_chunk=runs.of_chunk, cost=runs.cost, atomic=atomic
    )


@dataclass(frozen=True, kw_only=True)
class Runs:
    """The budget-free part of `Units`, computed once per corpus (`unit_runs`)."""

    start: IntArray
    end: IntArray
    of_chunk: IntArray
    cost: IntArray
    in_unit: BoolArray


def unit_runs(corpus: Corpus) -> Runs:
    """The corpus's runs of chunks of one unit each (a chunk outside any unit alone): kept
    for the corpus and its scored copies."""
    return corpus.derived("unit runs", _unit_runs)


def _unit_runs(corpus: Corpus) -> Runs:
    count = corpus.chunks
    unit, document = corpus.chunk_unit, corpus.chunk_document
    opens = np.ones(count, dtype=bool)
    if count > 1:
        changed = (document[1:] != document[:-1]) | (unit[1:] != unit[:-1])
        opens[1:] = changed | (unit[1:] < 0)
    start = np.flatnonzero(opens).astype(np.int64)
    end = np.append(start[1:], count).astype(np.int64)
    cost = np.add.reduceat(corpus.chunk_cost, start) if count else np.zeros(0, dtype=np.int64)
    in_unit = unit[start] >= 0 if count else np.zeros(0, dtype=bool)
    of_chunk = (np.cumsum(opens) - 1).astype(np.int64)
    return Runs(start=start, end=end, of_chunk=of_chunk, cost=cost, in_unit=in_unit)


def chunk_priority(corpus: Corpus) -> FloatArray:
    """Own score, or a neighbour's score less the margin, whichever is higher. Neighbours are
    the chunks of the same unit, or, outside units, of the same document."""
    score = corpus.chunk_score.astype(np.float64)
    priority = score.copy()
    for source, target in _raising_neighbours(corpus, score):
        priority[target] = np.maximum(priority[target], score[source] - NEIGHBOUR_MARGIN)
    return priority


def _raising_neighbours(corpus: Corpus, score: FloatArray) -> list[tuple[IntArray, IntArray]]:
    """(sources, targets) pairs, once towards the next chunk and once towards the previous:
    a chunk scored above the lowest score lends it to a neighbour of its unit. A chunk at the
    lowest score cannot raise a neighbour (its score less the margin is below theirs), so
    only the scored few are visited, not every chunk of the corpus."""
    if len(score) < 2:
        return []
    sources = np.flatnonzero(score > score.min())
    document, unit = corpus.chunk_document, corpus.chunk_unit
    pairs = []
    for step in (1, -1):
        target = sources + step
        inside = (target >= 0) & (target < len(score))
        source, target = sources[inside], target[inside]
        together = (document[source] == document[target]) & (unit[source] == unit[target])
        pairs.append((source[together], target[together]))
    return pairs


class _Selection:
    """Chunks chosen so far and the tokens they cost with their headers."""

    def __init__(self, corpus: Corpus, overheads: Overheads) -> None:
        # Items are read one by one for the few chunks a window takes: converting whole
        # arrays to lists would cost what the corpus costs, not what the window does.
        self.costs = corpus.chunk_cost
        self.document_costs = corpus.document_cost
        self.documents_of = corpus.chunk_document
        self.units_of = corpus.chunk_unit
        self.openings = corpus.chunk_opening
        self.overheads = overheads
        self.chosen = np.zeros(corpus.chunks, dtype=bool)
        self.documents: set[int] = set()
        self.used = 0

    def cost(self, members: list[int]) -> int:
        """What adding `members` (unchosen chunks, sorted) would cost, headers included."""
        # Most takes are one chunk: a scalar read, not a fancy-indexed copy and its sum.
        first = members[0]
        cost = int(self.costs[first]) if len(members) == 1 else int(self.costs[members].sum())
        cost += sum(self._opens_passage(first, last) for first, last in _runs(members))
        document = int(self.documents_of[first])
        if document not in self.documents:
            cost += int(self.document_costs[document])
        return cost

    def take(self, members: list[int], cost: int) -> None:
        self.chosen[members] = True
        self.documents.add(int(self.documents_of[members[0]]))
        self.used += cost

    def _opens_passage(self, first: int, last: int) -> int:
        """A run next to a chosen chunk of its unit extends that passage, else opens one."""
        document, unit = self.documents_of[first], self.units_of[first]
        for neighbour in (first - 1, last + 1):
            if (
                0 <= neighbour < len(self.costs)
                and self.chosen[neighbour]
                and self.documents_of[neighbour] == document
                and self.units_of[neighbour] == unit
            ):
                return 0
        opening = int(self.openings[first]) if self.openings is not None else 0
        return int(self.overheads.passage + self.overheads.gap) + opening


def _runs(members: list[int]) -> list[tuple[int, int]]:
    """The maximal runs of consecutive indices in sorted `members`, as (first, last)."""
    runs: list[tuple[int, int]] = []
    for member in members:
        if runs and runs[-1][1] == member - 1:
            runs[-1] = (runs[-1][0], member)
        else:
            runs.append((member, member))
    return runs


def mean_chunk_cost(corpus: Corpus) -> float:
    """The mean tokens of a chunk (1 for an empty corpus)."""
    return float(corpus.chunk_cost.mean()) if corpus.chunks else 1.0


def pinned_cost(corpus: Corpus, pins: list[int], overheads: Overheads) -> int:
    """What the whole units of `pins` cost together, headers included (0 without pins)."""
    if not pins:
        return 0
    units = units_of(corpus, 0)
    runs = sorted({int(units.of_chunk[pin]) for pin in pins})
    documents = {int(corpus.chunk_document[pin]) for pin in pins}
    per_unit = overheads.passage + overheads.gap + overheads.label
    openings = corpus.chunk_opening
    total = sum(
        int(units.cost[run])
        + per_unit
        + (int(openings[units.start[run]]) if openings is not None else 0)
        for run in runs
    )
    return int(total + sum(int(corpus.document_cost[d]) for d in documents))


def verbatim_phase(
    corpus: Corpus,
    budget: int,
    overheads: Overheads,
    pins: list[int] | None = None,
    *,
    share_of: int | None = None,
    context: bool = True,
    shown: BoolArray | None = None,
) -> tuple[BoolArray, int]:
    """The chunks taken verbatim within `budget`, and the tokens they cost.

    `shown` marks chunks already in the window (a session's earlier material): they are
    neither taken nor paid for, and a unit they belong to brings only its other chunks. A
    chunk whose text an earlier document holds (`Corpus.repeats`) is never taken: a pin on
    it pins the chunk it repeats.

    `pins` are chunk indices whose units go first, whole, in the given order (those that do
    not fit are left to the normal order with the rest). A unit may be cut when it costs more
    than `UNIT_SHARE` of `share_of`: the window's whole budget, of which `budget` is what the
    overview left (default: `budget`). Without `context` (a set question packed for
    coverage), a hit lends no priority to its neighbours and no unit is taken whole.
    """
    units = units_of(corpus, share_of if share_of is not None else budget, whole_units=context)
    selection = _Selection(corpus, overheads)
    repeats = corpus.repeats
    if repeats is not None:
        shown = repeats if shown is None else shown | repeats
        twin = twins(corpus)
        pins = [int(twin[pin]) if twin[pin] >= 0 else pin for pin in pins or []]
    if shown is not None:
        selection.chosen |= shown
    attempted: set[int] = set()
    for chunk in pins or []:
        run = int(units.of_chunk[chunk])
        if run in attempted:
            continue
        attempted.add(run)
        members = [
            i for i in range(int(units.start[run]), int(units.end[run])) if not selection.chosen[i]
        ]
        if not members:
            continue
        # A pinned unit's header carries its label ("instance 2 of 4").
        cost = selection.cost(members) + overheads.label * len(_runs(members))
        if selection.used + cost > budget:
            break
        selection.take(members, cost)
    priority = chunk_priority(corpus) if context else corpus.chunk_score.astype(np.float64)
    for index in _priority_order(priority, _expected_takes(corpus, budget)):
        run = int(units.of_chunk[index])
        if selection.chosen[index] or run in attempted:
            continue
        members = _members(units, run, index, selection.chosen)
        cost = selection.cost(members)
        if selection.used + cost > budget:
            break  # a prefix of a fixed order: recall is monotone in the budget
        selection.take(members, cost)
    if shown is not None:
        return selection.chosen & ~shown, selection.used
    return selection.chosen, selection.used


def _expected_takes(corpus: Corpus, budget: int) -> int:
    """About how many chunks a budget holds (four times over): the order is sorted that far."""
    mean = corpus.derived("mean chunk cost", mean_chunk_cost)
    return max(256, int(4 * budget / max(mean, 1.0)))


def _priority_order(priority: FloatArray, first: int) -> Iterator[int]:
    """Chunk indices by priority, highest first, ties by index: the order of a full sort,
    but only the first `first` or so are sorted unless the caller reads on. The phase stops
    after about what the budget holds, so sorting a 100M-token corpus would be wasted.

    Every chunk no retriever proposed shares the lowest priority: those come last, in index
    order, and are only listed if the caller reads that far; the few above it are sorted."""
    count = len(priority)
    if not count:
        return
    lowest = priority.min()
    raised = np.flatnonzero(priority > lowest)
    if 0 < first < len(raised):
        # Every index at or above the `first`-th largest priority: ties at the boundary are
        # all in, so the sorted head is exactly a full sort's head.
        values = priority[raised]
        threshold = np.partition(values, len(raised) - first)[len(raised) - first]
        head = raised[values >= threshold]
        yield from head[np.lexsort((head, -priority[head]))].tolist()
        rest = raised[values < threshold]
        yield from rest[np.lexsort((rest, -priority[rest]))].tolist()
    else:
        yield from raised[np.lexsort((raised, -priority[raised]))].tolist()
    yield from np.flatnonzero(priority <= lowest).tolist()


def _members(units: Units, run: int, index: int, chosen: BoolArray) -> list[int]:
    """What taking chunk `index` brings in: its whole unit, or (in a unit that may be cut)
    itself and the unit's first chunk."""
    first, end = int(units.start[run]), int(units.end[run])
    if units.atomic[run]:
        return [i for i in range(first, end) if not chosen[i]]
    return sorted({index, first} - {i for i in (index, first) if chosen[i]})
