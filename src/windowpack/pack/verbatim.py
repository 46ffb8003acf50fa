"""The verbatim phase of an allocation: which chunks go in word for word, unit by unit.

Units of meaning (design §4.8). A conversation turn and a record are *units* a window holds
whole, summarized or not at all, unless the unit alone costs more than `UNIT_SHARE` of the
budget; such a unit may be cut (a chunk taken from it brings the unit's first chunk, the
request of a turn, so a cut unit still says what it is), and the layout says how much of it
is missing. A section is a unit too, but one a window takes chunk by chunk: its passages
carry the section's heading path in their headers, and on the development manuals
(`examples/manuals`: the Debian handbook, PostgreSQL's, Python's and SQLite's) whole sections,
context grown around a hit and a section's first chunk each cost recall at every budget
from 2K to 8K tokens (docs/evidence.md), while the question's own evidence earned it.
`SECTION_SHARE` (0) is the share of the budget under which a section would still go whole.
Chunks outside any unit (plain prose) are atoms of their own.

Order. Chunks are taken by their scores, best first (ties by index), and the budget is met
in doubling tiers (`budget_tiers`): each tier's phase stops at the first item that does not
fit, and the next tier starts there. Every budget takes a prefix of the same sequence of
takes, so a chunk verbatim at one budget is verbatim at every larger one (design §4.6).

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

# A turn or record costing more than this share of the budget may be cut; a smaller one goes
# in whole.
UNIT_SHARE = 0.25
SECTION_SHARE = 0.0
"""A section goes in whole when it costs at most this share of the budget: never, as measured
on the development manuals (see module)."""
# The first phase's limit in tokens (`budget_tiers`): about one header and a short chunk;
# not tuned (any limit keeps budgets monotone; a smaller one only adds phases).
FIRST_TIER = 64


@dataclass(frozen=True, kw_only=True)
class Runs:
    """The corpus's runs of chunks of one unit each (a chunk outside any unit is a run of its
    own): `start[g]`/`end[g]` bound run g, `of_chunk[i]` is the run of chunk i, `cost` what
    each costs, `in_unit` whether it is a unit (a turn, record or section). Computed once per
    corpus (`unit_runs`)."""

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


@dataclass(frozen=True, kw_only=True)
class _Items:
    """The corpus's chunk and run arrays as lists, for the phase's reads one item at a time
    (reading a numpy scalar costs several times what reading a list item does, and a phase
    reads a few items for each chunk it takes). Made once per corpus (`_items`)."""

    cost: list[int]
    document: list[int]
    unit: list[int]
    opening: list[int] | None
    document_cost: list[int]
    run_of: list[int]
    run_start: list[int]
    run_end: list[int]
    run_cost: list[int]
    run_in_unit: list[bool]


def _items(corpus: Corpus) -> _Items:
    return corpus.derived("verbatim items", _listed)


def _listed(corpus: Corpus) -> _Items:
    runs = unit_runs(corpus)
    opening = corpus.chunk_opening
    return _Items(
        cost=corpus.chunk_cost.tolist(),
        document=corpus.chunk_document.tolist(),
        unit=corpus.chunk_unit.tolist(),
        opening=opening.tolist() if opening is not None else None,
        document_cost=corpus.document_cost.tolist(),
        run_of=runs.of_chunk.tolist(),
        run_start=runs.start.tolist(),
        run_end=runs.end.tolist(),
        run_cost=runs.cost.tolist(),
        run_in_unit=runs.in_unit.tolist(),
    )


class _Selection:
    """Chunks chosen so far and the tokens they cost with their headers."""

    def __init__(self, corpus: Corpus, overheads: Overheads) -> None:
        self.items = _items(corpus)
        self.overheads = overheads
        self.chosen = bytearray(corpus.chunks)  # 1 where chosen
        self.documents: set[int] = set()
        self.used = 0

    def cost(self, members: list[int]) -> int:
        """What adding `members` (unchosen chunks, sorted) would cost, headers included."""
        items = self.items
        costs = items.cost
        cost = sum(costs[member] for member in members)
        cost += sum(self._opens_passage(first, last) for first, last in _runs(members))
        document = items.document[members[0]]
        if document not in self.documents:
            cost += items.document_cost[document]
        return cost

    def take(self, members: list[int], cost: int) -> None:
        chosen = self.chosen
        for member in members:
            chosen[member] = 1
        self.documents.add(self.items.document[members[0]])
        self.used += cost

    def _opens_passage(self, first: int, last: int) -> int:
        """A run next to a chosen chunk of its unit extends that passage, else opens one."""
        items, chosen = self.items, self.chosen
        documents, units = items.document, items.unit
        document, unit = documents[first], units[first]
        for neighbour in (first - 1, last + 1):
            if (
                0 <= neighbour < len(chosen)
                and chosen[neighbour]
                and documents[neighbour] == document
                and units[neighbour] == unit
            ):
                return 0
        opening = items.opening[first] if items.opening is not None else 0
        return int(self.overheads.passage + self.overheads.gap) + opening

    def chosen_array(self) -> BoolArray:
        return np.frombuffer(self.chosen, dtype=np.uint8).astype(bool)


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
    units = unit_runs(corpus)
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
    shown: BoolArray | None = None,
) -> tuple[BoolArray, int]:
    """The chunks taken verbatim within `budget`, and the tokens they cost.

    `shown` marks chunks already in the window (a session's earlier material): they are
    neither taken nor paid for, and a unit they belong to brings only its other chunks. A
    chunk whose text an earlier document holds (`Corpus.repeats`) is never taken: a pin on
    it pins the chunk it repeats.

    `pins` are chunk indices whose units go first, whole, in the given order (those that do
    not fit are left to the normal order with the rest). A unit may be cut when it costs more
    than `UNIT_SHARE` of its tier's rule budget (`budget_tiers`), scaled by `share_of` (the
    window's whole budget, of which `budget` is what the overview left; default: `budget`).
    """
    sections = corpus.chunk_in_section
    scale = (share_of / budget) if share_of is not None and budget > 0 else 1.0
    selection = _Selection(corpus, overheads)
    items = selection.items
    repeats = corpus.repeats
    if repeats is not None:
        shown = repeats if shown is None else shown | repeats
        twin = twins(corpus)
        pins = [int(twin[pin]) if twin[pin] >= 0 else pin for pin in pins or []]
    if shown is not None:
        selection.chosen = bytearray(shown.astype(np.uint8).tobytes())
    attempted: set[int] = set()
    for chunk in pins or []:
        run = items.run_of[chunk]
        if run in attempted:
            continue
        attempted.add(run)
        members = _rest_of(items, run, selection.chosen)
        if not members:
            continue
        # A pinned unit's header carries its label ("instance 2 of 4").
        cost = selection.cost(members) + overheads.label * len(_runs(members))
        if selection.used + cost > budget:
            break
        selection.take(members, cost)
    priority = corpus.chunk_score.astype(np.float64)
    order = _priority_order(priority, _expected_takes(corpus, budget))
    waiting: int | None = None
    cut: list[int] = []  # runs of turns and records taken in part, in the order first taken
    for limit, rule in budget_tiers(budget):
        # A unit goes in whole when it costs at most its share of the tier's rule budget.
        whole = max(1, int(rule * scale * UNIT_SHARE))
        whole_section = int(rule * scale * SECTION_SHARE)
        # A unit an earlier tier had to cut is completed first once this tier takes it whole.
        if not _completed(cut, selection, whole, limit):
            continue  # the rest of one did not fit: the next tier starts with it
        while True:
            index = waiting if waiting is not None else next(order, None)
            waiting = None
            if index is None:
                break
            run = items.run_of[index]
            if selection.chosen[index] or run in attempted:
                continue
            in_section = sections is not None and bool(sections[index])
            if in_section:
                members = _members(items, run, index, selection.chosen, whole_section, head=False)
            else:
                members = _members(items, run, index, selection.chosen, whole)
            cost = selection.cost(members)
            if selection.used + cost > limit:
                waiting = index  # the next tier starts here: every budget takes a prefix
                break
            selection.take(members, cost)
            start, end = items.run_start[run], items.run_end[run]
            in_part = items.run_in_unit[run] and not all(selection.chosen[start:end])
            if in_part and not in_section and run not in cut:
                cut.append(run)
    chosen = selection.chosen_array()
    if shown is not None:
        return chosen & ~shown, selection.used
    return chosen, selection.used


def _rest_of(items: _Items, run: int, chosen: bytearray) -> list[int]:
    """The chunks of `run` not chosen yet."""
    return [i for i in range(items.run_start[run], items.run_end[run]) if not chosen[i]]


def _completed(cut: list[int], selection: _Selection, whole: int, limit: int) -> bool:
    """Take the rest of each unit of `cut` (in order) that costs at most `whole` tokens,
    dropping it from `cut`; False when one's rest does not fit within `limit`."""
    items = selection.items
    for run in [run for run in cut if items.run_cost[run] <= whole]:
        members = _rest_of(items, run, selection.chosen)
        cost = selection.cost(members) if members else 0
        if selection.used + cost > limit:
            return False
        if members:
            selection.take(members, cost)
        cut.remove(run)
    return True


def unit_rule(budget: int) -> int:
    """The budget whose `UNIT_SHARE` a turn or record must exceed to stay cut in a window of
    `budget` tokens that has room for its rest: the last tier's rule, between `budget` and
    twice it."""
    return budget_tiers(budget)[-1][1]


def budget_tiers(budget: int) -> list[tuple[int, int]]:
    """The phases of a verbatim allocation of `budget` tokens: (token limit, rule budget).

    Limits double from `FIRST_TIER` up to `budget`, each phase's rule (which units go in
    whole: those costing at most `UNIT_SHARE` of it) its own limit; a last phase takes the
    rest of `budget` by the rule of the next doubling. Two budgets share every phase up to
    the smaller one's last, and the larger one's next phase has the same rule as that last
    and a limit at least as high: so whatever a budget takes, every larger budget takes too
    (design §4.6), while a larger budget takes larger units whole (and completes, first in a
    phase, the units an earlier phase had to cut)."""
    tiers: list[tuple[int, int]] = []
    limit = FIRST_TIER
    while limit <= budget:
        tiers.append((limit, limit))
        limit *= 2
    tiers.append((budget, limit))
    return tiers


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


def _members(
    items: _Items, run: int, index: int, chosen: bytearray, whole: int, *, head: bool = True
) -> list[int]:
    """What taking chunk `index` brings in: its whole unit when the unit costs at most `whole`
    tokens, or (in a unit that may be cut) itself and, with `head`, the unit's first chunk."""
    first = items.run_start[run]
    if items.run_in_unit[run] and items.run_cost[run] <= whole:
        return _rest_of(items, run, chosen)
    if not head:
        return [] if chosen[index] else [index]
    return sorted({index, first} - {i for i in (index, first) if chosen[i]})
