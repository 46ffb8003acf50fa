"""Choosing what goes into a window: verbatim chunks first, then summaries, then gap markers.

The corpus is a sequence of chunks in document order, with summary nodes standing for ranges
of them. Given a relevance score per chunk and per node and a cost in tokens for each, the
allocator picks, for every part of the corpus, one resolution: verbatim chunks, a summary,
or a gap marker.

Why this algorithm (a greedy tree cut in two phases rather than a knapsack solver):

1. *Verbatim phase.* Chunks are taken in one fixed priority order — their own score, or a
   strong neighbour's score less a margin, so the context around a hit comes before an
   isolated weak chunk — while they fit, and the phase stops at the first chunk that does
   not. The chosen set is therefore a prefix of an order that does not depend on the budget:
   a larger budget keeps everything a smaller one kept, so recall never falls as B grows
   (design §4.6). A knapsack optimum would re-shuffle the set between budgets and lose that.
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
from dataclasses import dataclass, fields, replace

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# How far below its neighbour's score a chunk next to a hit is ranked (in z-score units).
NEIGHBOUR_MARGIN = 1.0


@dataclass(frozen=True, kw_only=True)
class Corpus:
    """Chunks in document order and summary nodes over chunk ranges, with costs and scores.

    `chunk_unit` (conversation turn or record, -1 for none) splits passages: the layout starts
    a new passage, with its own header, at every unit.

    `node_first`/`node_last` are global chunk indices `[first, last)`; `node_parent` is a node
    index or -1; collection-level nodes span several documents (`node_document` -1).
    """

    chunk_document: IntArray
    chunk_cost: IntArray
    chunk_score: FloatArray
    node_first: IntArray
    node_last: IntArray
    node_parent: IntArray
    node_document: IntArray
    node_cost: IntArray
    node_score: FloatArray
    chunk_unit: IntArray

    @property
    def chunks(self) -> int:
        return len(self.chunk_cost)

    @property
    def nodes(self) -> int:
        return len(self.node_cost)

    def with_scores(self, chunk_score: FloatArray, node_score: FloatArray) -> Corpus:
        """The same corpus scored for one question."""
        return replace(self, chunk_score=chunk_score, node_score=node_score)

    def shifted(self, *, chunks: int, nodes: int, documents: int) -> Corpus:
        """This corpus placed after `chunks` chunks, `nodes` nodes and `documents` documents."""
        return replace(
            self,
            chunk_document=self.chunk_document + documents,
            node_first=self.node_first + chunks,
            node_last=self.node_last + chunks,
            node_parent=np.where(self.node_parent >= 0, self.node_parent + nodes, -1),
            node_document=np.where(self.node_document >= 0, self.node_document + documents, -1),
        )


def combined(corpora: Sequence[Corpus], documents: Sequence[int]) -> Corpus:
    """One corpus over several (the i-th has `documents[i]` documents), indices shifted, so
    that one allocation spans them all and the budget follows relevance across them."""
    if len(corpora) == 1:
        return corpora[0]
    shifted, chunks, nodes, before = [], 0, 0, 0
    for corpus, count in zip(corpora, documents, strict=True):
        shifted.append(corpus.shifted(chunks=chunks, nodes=nodes, documents=before))
        chunks, nodes, before = chunks + corpus.chunks, nodes + corpus.nodes, before + count
    arrays = {f.name: np.concatenate([getattr(c, f.name) for c in shifted]) for f in fields(Corpus)}
    return Corpus(**arrays)


@dataclass(frozen=True, kw_only=True)
class Overheads:
    """Tokens the layout adds: per document shown, per passage or summary, per gap marker."""

    document: int
    passage: int
    summary: int
    gap: int


@dataclass(frozen=True, kw_only=True)
class Allocation:
    """Chosen chunk indices and node indices, both sorted; `lossless` when everything fit."""

    chunks: IntArray
    nodes: IntArray
    lossless: bool


def lossless_cost(corpus: Corpus, overheads: Overheads) -> int:
    """Tokens of the window holding every chunk verbatim (one passage per document)."""
    documents = len(np.unique(corpus.chunk_document))
    per_document = overheads.document + overheads.passage
    return int(corpus.chunk_cost.sum()) + documents * per_document


def allocate(corpus: Corpus, budget: int, overheads: Overheads) -> Allocation:
    """The allocation for `budget` tokens (layout overheads included)."""
    if corpus.chunks and lossless_cost(corpus, overheads) <= budget:
        return Allocation(
            chunks=np.arange(corpus.chunks, dtype=np.int64),
            nodes=np.zeros(0, dtype=np.int64),
            lossless=True,
        )
    selected, used = _verbatim_phase(corpus, budget, overheads)
    nodes = _summary_phase(corpus, selected, budget - used, overheads)
    return Allocation(
        chunks=np.flatnonzero(selected).astype(np.int64),
        nodes=np.asarray(sorted(nodes), dtype=np.int64),
        lossless=False,
    )


def chunk_priority(corpus: Corpus) -> FloatArray:
    """Own score, or a same-document neighbour's score less the margin, whichever is higher."""
    score = corpus.chunk_score.astype(np.float64)
    priority = score.copy()
    same_as_next = corpus.chunk_document[:-1] == corpus.chunk_document[1:]
    from_next = np.where(same_as_next, score[1:] - NEIGHBOUR_MARGIN, -np.inf)
    from_previous = np.where(same_as_next, score[:-1] - NEIGHBOUR_MARGIN, -np.inf)
    priority[:-1] = np.maximum(priority[:-1], from_next)
    priority[1:] = np.maximum(priority[1:], from_previous)
    return priority


def _verbatim_phase(
    corpus: Corpus, budget: int, overheads: Overheads
) -> tuple[npt.NDArray[np.bool_], int]:
    selected = np.zeros(corpus.chunks, dtype=bool)
    shown_documents: set[int] = set()
    order = np.lexsort((np.arange(corpus.chunks), -chunk_priority(corpus)))
    used = 0
    for index in order.tolist():
        cost = int(corpus.chunk_cost[index]) + _passage_overhead(corpus, selected, index, overheads)
        document = int(corpus.chunk_document[index])
        if document not in shown_documents:
            cost += overheads.document
        if used + cost > budget:
            break  # a prefix of a fixed order: recall is monotone in the budget
        selected[index] = True
        shown_documents.add(document)
        used += cost
    return selected, used


def _passage_overhead(
    corpus: Corpus, selected: npt.NDArray[np.bool_], index: int, overheads: Overheads
) -> int:
    """A chunk next to a chosen one extends its passage; otherwise it opens one (and a gap)."""
    document = corpus.chunk_document[index]
    units = corpus.chunk_unit
    for neighbour in (index - 1, index + 1):
        if (
            0 <= neighbour < corpus.chunks
            and selected[neighbour]
            and corpus.chunk_document[neighbour] == document
            and units[neighbour] == units[index]
        ):
            return 0
    return overheads.passage + overheads.gap


def _summary_phase(
    corpus: Corpus, selected: npt.NDArray[np.bool_], budget: int, overheads: Overheads
) -> set[int]:
    covered = np.concatenate(([0], np.cumsum(selected, dtype=np.int64)))
    uncovered = covered[corpus.node_last] - covered[corpus.node_first] == 0
    if not uncovered.any() or budget <= 0:
        return set()
    parent = corpus.node_parent
    parent_uncovered = np.where(parent >= 0, uncovered[np.maximum(parent, 0)], False)
    maximal = np.flatnonzero(uncovered & ~parent_uncovered)
    chosen: set[int] = set()
    shown = set(np.unique(corpus.chunk_document[selected]).tolist())
    spent = 0
    for node in sorted(maximal.tolist(), key=lambda n: (-corpus.node_score[n], n)):
        document = int(corpus.node_document[node])
        cost = int(corpus.node_cost[node]) + overheads.summary + overheads.gap
        if document >= 0 and document not in shown:
            cost += overheads.document
        if spent + cost <= budget:
            chosen.add(node)
            shown.add(document)
            spent += cost
    _refine(corpus, chosen, budget - spent, overheads)
    return chosen


def _refine(corpus: Corpus, chosen: set[int], budget: int, overheads: Overheads) -> None:
    """Replace the most relevant chosen summaries by their child summaries while that fits."""
    children: dict[int, list[int]] = {}
    for node, parent in enumerate(corpus.node_parent.tolist()):
        if parent >= 0:
            children.setdefault(parent, []).append(node)
    heap = [(-float(corpus.node_score[node]), node) for node in chosen]
    heapq.heapify(heap)
    while heap:
        _, node = heapq.heappop(heap)
        kids = sorted(children.get(node, []))
        covered = sum(int(corpus.node_last[k] - corpus.node_first[k]) for k in kids)
        if not kids or covered != corpus.node_last[node] - corpus.node_first[node]:
            continue  # its children do not tile it (e.g. one-chunk documents): keep it
        extra = sum(int(corpus.node_cost[k]) + overheads.summary for k in kids)
        extra -= int(corpus.node_cost[node]) + overheads.summary
        if extra <= budget:
            chosen.discard(node)
            chosen.update(kids)
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
    cut = sorted(roots, key=lambda n: (int(corpus.node_first[n]), n))
    if _cut_cost(corpus, cut, overheads) > budget:
        return []
    children: dict[int, list[int]] = {}
    for node, parent in enumerate(corpus.node_parent.tolist()):
        if parent >= 0:
            children.setdefault(parent, []).append(node)
    while True:
        finer = []
        for node in cut:
            kids = sorted(children.get(node, []), key=lambda n: int(corpus.node_first[n]))
            span = sum(int(corpus.node_last[k] - corpus.node_first[k]) for k in kids)
            tiles = kids and span == corpus.node_last[node] - corpus.node_first[node]
            finer.extend(kids if tiles else [node])
        if finer == cut or _cut_cost(corpus, finer, overheads) > budget:
            return cut
        cut = finer


def _contains(corpus: Corpus, outer: int, inner: int) -> bool:
    return bool(
        corpus.node_first[outer] <= corpus.node_first[inner]
        and corpus.node_last[inner] <= corpus.node_last[outer]
        and (corpus.node_first[outer], corpus.node_last[outer])
        != (corpus.node_first[inner], corpus.node_last[inner])
    )


def _cut_cost(corpus: Corpus, cut: list[int], overheads: Overheads) -> int:
    return sum(int(corpus.node_cost[node]) + overheads.summary for node in cut)
