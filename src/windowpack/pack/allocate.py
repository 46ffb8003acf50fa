"""Choosing what goes into a window: verbatim chunks first, then summaries, then gap markers.

The corpus is a sequence of chunks in document order, with summary nodes standing for ranges
of them. Given a relevance score per chunk and per node and a cost in tokens for each, the
allocator picks, for every part of the corpus, one resolution: verbatim chunks, a summary,
or a gap marker.

Why this algorithm (a greedy tree cut in two phases rather than a knapsack solver):

1. *Verbatim phase* (`verbatim.py`). Chunks are taken by score, best first, while they fit,
   in doubling budget tiers whose phases each stop at the first take that does not fit; a
   chunk of a turn or record brings its whole unit (units are atoms). What a budget takes is
   therefore a prefix of a sequence that does not depend on the budget: a larger budget keeps
   everything a smaller one kept, so recall never falls as B grows (design §4.6). A knapsack
   optimum would re-shuffle the set between budgets and lose that.
2. *Summary phase.* The budget left covers the parts with no verbatim chunk: the largest
   summary nodes lying wholly in uncovered ranges are taken by relevance (a node's relevance
   is the best evidence beneath it), then the most relevant ones are refined into their
   child nodes while that fits: a greedy refinement of a tree cut, coarse far from the
   question and finer near it.
3. Whatever is still uncovered becomes a gap marker saying how many tokens were left out.

Everything is sorted with index tie-breaks, so the same inputs give the same allocation.
Costs here are per-item token counts plus layout overheads (`Overheads`); the layout counts
the rendered text exactly afterwards and the caller trims if it is ever over.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from windowpack.pack.corpus import Corpus, IntArray, Overheads, text_ids
from windowpack.pack.verbatim import verbatim_phase


@dataclass(frozen=True, kw_only=True)
class Allocation:
    """Chosen chunk indices and node indices, both sorted; `lossless` when everything fit."""

    chunks: IntArray
    nodes: IntArray
    lossless: bool


def lossless_cost(corpus: Corpus, overheads: Overheads) -> int:
    """Tokens of the window holding every chunk verbatim: a header per document, and one
    passage per document, or per unit in documents that have units. Computed once per
    corpus and kept (`Corpus.derived`): the state and every pack's allocation ask for it."""
    return corpus.derived(f"lossless cost {overheads}", lambda c: _lossless_cost(c, overheads))


def _lossless_cost(corpus: Corpus, overheads: Overheads) -> int:
    kept = lossless_chunks(corpus)
    document, unit = corpus.chunk_document[kept], corpus.chunk_unit[kept]
    if not len(kept):
        return 0
    # Chunks are in document order: a document (or a passage) starts wherever its id changes.
    new_document = document[1:] != document[:-1]
    shown = document[np.concatenate(([True], new_document))]
    opens = np.concatenate(([True], new_document | (unit[1:] != unit[:-1])))
    passages = int(opens.sum())
    chunks = int(corpus.chunk_cost[kept].sum())
    headers = (
        int(corpus.chunk_opening[kept[opens]].sum()) if corpus.chunk_opening is not None else 0
    )
    return chunks + int(corpus.document_cost[shown].sum()) + passages * overheads.passage + headers


def lossless_chunks(corpus: Corpus) -> IntArray:
    """The chunks the lossless window shows: all but those whose text an earlier document
    holds (`Corpus.repeats`)."""
    repeats = corpus.repeats
    if repeats is None:
        return np.arange(corpus.chunks, dtype=np.int64)
    return np.flatnonzero(~repeats).astype(np.int64)


def allocate(
    corpus: Corpus,
    budget: int,
    overheads: Overheads,
    pins: list[int] | None = None,
    *,
    window_budget: int | None = None,
    shown_nodes: Sequence[int] = (),
) -> Allocation:
    """The allocation for `budget` tokens (layout overheads included). `pins` are chunks whose
    units go in first, whole, in that order; a unit may be cut only when it costs more than
    its share of `window_budget` (the whole window's budget; default `budget`), see
    `verbatim.verbatim_phase`. `shown_nodes` are in the window already
    (the overview's): neither they, their ancestors nor a node of the same text is taken."""
    if corpus.chunks and lossless_cost(corpus, overheads) <= budget:
        return Allocation(
            chunks=lossless_chunks(corpus),
            nodes=np.zeros(0, dtype=np.int64),
            lossless=True,
        )
    share_of = window_budget if window_budget is not None else budget
    selected, used = verbatim_phase(corpus, budget, overheads, pins, share_of=share_of)
    nodes = _summary_phase(corpus, selected, budget - used, overheads, shown_nodes)
    return Allocation(
        chunks=np.flatnonzero(selected).astype(np.int64),
        nodes=np.asarray(sorted(nodes), dtype=np.int64),
        lossless=False,
    )


def _summary_phase(
    corpus: Corpus,
    selected: npt.NDArray[np.bool_],
    budget: int,
    overheads: Overheads,
    shown_nodes: Sequence[int] = (),
) -> set[int]:
    covered = np.concatenate(([0], np.cumsum(selected, dtype=np.int64)))
    uncovered = covered[corpus.node_last] - covered[corpus.node_first] == 0
    if not uncovered.any() or budget <= 0:
        return set()
    parent = corpus.node_parent
    texts = text_ids(corpus)
    # A text is shown once: a node the overview holds, and its ancestors (coarser than what
    # is shown), are not taken again; nor is a node of the same text as one taken.
    taken = {int(texts[node]) for node in shown_nodes}
    candidate = uncovered.copy()
    for node in shown_nodes:
        while node >= 0 and candidate[node]:
            candidate[node] = False
            node = int(parent[node])
    parent_candidate = np.where(parent >= 0, candidate[np.maximum(parent, 0)], False)
    maximal = np.flatnonzero(candidate & ~parent_candidate)
    chosen: set[int] = set()
    shown = set(np.unique(corpus.chunk_document[selected]).tolist())
    spent = 0
    # By relevance, ties by index; read as Python numbers once, not element by element.
    order = maximal[np.lexsort((maximal, -corpus.node_score[maximal]))]
    costs = corpus.node_cost[order] + (overheads.summary + overheads.gap)
    for node, document, base, text in zip(
        order.tolist(),
        corpus.node_document[order].tolist(),
        costs.tolist(),
        texts[order].tolist(),
        strict=True,
    ):
        if text in taken:
            continue
        opens = document >= 0 and document not in shown
        cost = base + int(corpus.document_cost[document]) if opens else base
        if spent + cost <= budget:
            chosen.add(node)
            taken.add(text)
            shown.add(document)
            spent += cost
    _refine(corpus, chosen, budget - spent, overheads, taken)
    return chosen


def _refine(
    corpus: Corpus, chosen: set[int], budget: int, overheads: Overheads, taken: set[int]
) -> None:
    """Replace the most relevant chosen summaries by their child summaries while that fits
    and no child's text is shown already (`taken`: the text ids in the window)."""
    children = corpus.derived("children", _Children)
    texts = text_ids(corpus)
    heap = [(-float(corpus.node_score[node]), node) for node in chosen]
    heapq.heapify(heap)
    while heap:
        _, node = heapq.heappop(heap)
        kids = children.of(node)
        covered = sum(int(corpus.node_last[k] - corpus.node_first[k]) for k in kids)
        if not kids or covered != corpus.node_last[node] - corpus.node_first[node]:
            continue  # its children do not tile it (e.g. one-chunk documents): keep it
        own = int(texts[node])
        kid_texts = [int(texts[k]) for k in kids]
        if len(set(kid_texts)) < len(kids) or any(t in taken and t != own for t in kid_texts):
            continue  # a child's text is in the window already: the node says it once
        extra = sum(int(corpus.node_cost[k]) + overheads.summary for k in kids)
        extra -= int(corpus.node_cost[node]) + overheads.summary
        if extra <= budget:
            chosen.discard(node)
            taken.discard(own)
            chosen.update(kids)
            taken.update(kid_texts)
            budget -= extra
            for kid in kids:
                heapq.heappush(heap, (-float(corpus.node_score[kid]), kid))


def overview_cut(corpus: Corpus, budget: int, overheads: Overheads) -> list[int]:
    """The finest query-independent cut of the top of the tree that fits in `budget`.

    Start from the root(s) — nodes with no parent that no other root contains — and refine
    the whole cut one depth at a time while it fits; a node whose children do not tile its
    range (documents of one chunk) stays whole. Scores play no part: the overview must be the
    same for every question.
    """
    roots = [n for n in range(len(corpus.node_parent)) if corpus.node_parent[n] < 0]
    roots = [
        n for n in roots if not any(_contains(corpus, other, n) for other in roots if other != n)
    ]
    cut = _once(corpus, sorted(roots, key=lambda n: (int(corpus.node_first[n]), n)))
    if _cut_cost(corpus, cut, overheads) > budget:
        return []
    children = corpus.derived("children", _Children)
    while True:
        finer = []
        for node in cut:
            kids = sorted(children.of(node), key=lambda n: int(corpus.node_first[n]))
            span = sum(int(corpus.node_last[k] - corpus.node_first[k]) for k in kids)
            tiles = kids and span == corpus.node_last[node] - corpus.node_first[node]
            finer.extend(kids if tiles else [node])
        finer = _once(corpus, finer)
        if finer == cut or _cut_cost(corpus, finer, overheads) > budget:
            return cut
        cut = finer


def _once(corpus: Corpus, cut: list[int]) -> list[int]:
    """`cut` without a node whose text an earlier node of it has (pages that end alike)."""
    if corpus.node_text is None:
        return cut
    seen: set[int] = set()
    kept = []
    for node in cut:
        text = int(corpus.node_text[node])
        if text not in seen:
            seen.add(text)
            kept.append(node)
    return kept


class _Children:
    """Each node's children, sorted by index: a node's run in the nodes sorted by parent.

    One argsort instead of a Python loop over every node of the tree: a pack refines a few
    nodes of a tree that may hold thousands.
    """

    def __init__(self, corpus: Corpus) -> None:
        parents = corpus.node_parent
        # Stable: the children of one parent stay in index order.
        self._order = np.argsort(parents, kind="stable")
        self._parents = parents[self._order]

    def of(self, node: int) -> list[int]:
        low, high = np.searchsorted(self._parents, (node, node + 1))
        return [int(kid) for kid in self._order[low:high]]


def _contains(corpus: Corpus, outer: int, inner: int) -> bool:
    return bool(
        corpus.node_first[outer] <= corpus.node_first[inner]
        and corpus.node_last[inner] <= corpus.node_last[outer]
        and (corpus.node_first[outer], corpus.node_last[outer])
        != (corpus.node_first[inner], corpus.node_last[inner])
    )


def _cut_cost(corpus: Corpus, cut: list[int], overheads: Overheads) -> int:
    return sum(int(corpus.node_cost[node]) + overheads.summary for node in cut)
