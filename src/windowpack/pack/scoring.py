"""Relevance of every chunk and summary node of the states packed, for one question.

The ranking is retrieval's (`search.retrieve`: BM25, chunk vectors, sentence vectors, the
question's literals and the feedback hop, fused by rank), the one `search` returns too. Here
it is put on a z-score scale (order kept: the allocator's margins are in standard
deviations of the candidates' scores), scattered onto each state's units, and a summary is
given the best evidence beneath it; the reranker, when the request runs it, reorders the
leading chunks.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from windowpack.index import CollectionIndexes, split_index_ids
from windowpack.pack import evidence
from windowpack.pack.corpus import Corpus
from windowpack.pack.reasons import Found, RankedLists, found_in
from windowpack.pack.request import PackRequest
from windowpack.pack.state import PackingState
from windowpack.pack.twins import folded
from windowpack.pack.verbatim import mean_chunk_cost
from windowpack.rerank import RerankBounds, Reranker
from windowpack.search import (
    MIN_CANDIDATES,
    Evidence,
    QueryEmbeddingCache,
    read_question,
    retrieve,
)

FloatArray = npt.NDArray[np.float64]
Fused = tuple[npt.NDArray[np.int64], npt.NDArray[np.floating[Any]]]


@dataclass(frozen=True, kw_only=True)
class Scored:
    """One state's corpus scored for the question."""

    corpus: Corpus
    found: Found
    """Which lists found each chunk: why it is in a window (`reasons`)."""


def scored_corpora(
    sources: Sequence[tuple[PackingState, CollectionIndexes]],
    query_vectors: QueryEmbeddingCache,
    request: PackRequest,
    reranker: Reranker | None = None,
) -> tuple[list[Scored], Evidence]:
    """Each state's corpus scored for the request's question on one scale across all the
    states (see module), and the evidence it came from."""
    settings = request.evidence
    found = find_evidence(sources, query_vectors, request)
    fused = (found.ids, _standardised(found.scores))
    lists = RankedLists(words=found.words, meaning=found.meaning)
    results = []
    for state, _ in sources:
        chunk_score, node_score = _scores(state, fused)
        if reranker is not None and settings.rerank_depth:
            bounds = RerankBounds(depth=settings.rerank_depth, time_ms=settings.rerank_time_ms)
            chunk_score = evidence.reranked(state, chunk_score, request.query, reranker, bounds)
        # What is found in a document repeating another's text counts for the first one's.
        chunk_score = folded(state.corpus.chunk_twin, chunk_score)
        floor = float(chunk_score.min()) if len(chunk_score) else 0.0
        node_score = _with_best_evidence_beneath(state, chunk_score, node_score, floor)
        corpus = state.corpus.with_scores(chunk_score, node_score)
        linked = _positions(state, found.linked)
        results.append(Scored(corpus=corpus, found=found_in(state, lists, linked)))
    return results, found


def find_evidence(
    sources: Sequence[tuple[PackingState, CollectionIndexes]],
    query_vectors: QueryEmbeddingCache,
    request: PackRequest,
) -> Evidence:
    """Retrieval's evidence for the request's question over every source, each list read
    deep enough to rank about twice what the budget holds."""
    indexes = [indexes for _, indexes in sources]
    depth = max(_candidates(state, request.budget) for state, _ in sources)

    def texts_of(index_ids: Sequence[int]) -> list[str]:
        return [_chunk_text_by_id(sources, index_id) for index_id in index_ids]

    return retrieve(
        read_question(request.query, indexes),
        indexes,
        query_vectors.get_soon(request.query),  # the model runs beside the lexical searches
        depth=depth,
        settings=request.evidence,
        texts_of=texts_of,
        model_languages=query_vectors.languages,
    )


def _chunk_text_by_id(
    sources: Sequence[tuple[PackingState, CollectionIndexes]], index_id: int
) -> str:
    """The text of the chunk with this index id, in whichever state holds it ("" if none)."""
    for state, _ in sources:
        keys = state.chunk_keys
        slot = bisect.bisect_left(keys, index_id) if len(keys) else 0
        if slot < len(keys) and keys[slot] == index_id:
            return evidence.chunk_text(state, int(state.chunk_positions[slot]))
    return ""


def _positions(state: PackingState, index_ids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The positions in `state` of the chunks among `index_ids` it holds, sorted."""
    keys = state.chunk_keys
    if not len(keys) or not len(index_ids):
        return np.zeros(0, dtype=np.int64)
    slots = np.minimum(np.searchsorted(keys, index_ids), len(keys) - 1)
    held = keys[slots] == index_ids
    return np.sort(state.chunk_positions[slots[held]]).astype(np.int64)


def _standardised(scores: npt.NDArray[np.float64]) -> FloatArray:
    """`scores` as z-scores over the candidates (order kept; all 0 when they are equal)."""
    if not len(scores):
        return scores.astype(np.float64)
    spread = float(scores.std())
    if spread == 0:
        return np.zeros(len(scores), dtype=np.float64)
    return np.asarray((scores - scores.mean()) / spread, dtype=np.float64)


def _candidates(state: PackingState, budget: int) -> int:
    """Enough candidates to rank about twice what the budget can hold, at least a few hundred."""
    corpus = state.corpus
    units = corpus.chunks + corpus.nodes
    mean_cost = max(1.0, corpus.derived("mean chunk cost", mean_chunk_cost))
    return max(1, min(units, max(MIN_CANDIDATES, int(2 * budget / mean_cost))))


def _scores(state: PackingState, fused: Fused) -> tuple[FloatArray, FloatArray]:
    """Each chunk's and node's fused relevance; units no retriever proposed get the floor."""
    ids, values = fused
    floor = (values.min() if len(values) else 0.0) - 1.0
    is_chunk, node_ids = split_index_ids(ids)
    corpus = state.corpus
    chunk_score = _lookup(
        state.chunk_keys,
        state.chunk_positions,
        ids[is_chunk],
        values[is_chunk],
        floor,
        corpus.chunks,
    )
    node_score = _lookup(
        state.node_keys, state.node_positions, node_ids, values[~is_chunk], floor, corpus.nodes
    )
    return chunk_score, node_score


def _lookup(
    keys: npt.NDArray[np.int64],
    positions: npt.NDArray[np.int64],
    ids: npt.NDArray[np.int64],
    values: npt.NDArray[np.floating[Any]],
    floor: float,
    size: int,
) -> FloatArray:
    """Scatter (id, value) pairs into an array indexed by unit position, via sorted keys."""
    result = np.full(size, floor)
    if not len(keys) or not len(ids):
        return result
    slots = np.minimum(np.searchsorted(keys, ids), len(keys) - 1)
    found = keys[slots] == ids
    result[positions[slots[found]]] = values[found]
    return result


def _with_best_evidence_beneath(
    state: PackingState, chunk_score: FloatArray, node_score: FloatArray, floor: float
) -> FloatArray:
    """A summary is as relevant as the best chunk it stands for, or its own score if higher.

    Chunks no retriever proposed are at `floor`, below every proposed one: a node's best is
    the best proposed chunk in its range, found among the few proposed (searchsorted), or
    the floor; no pass over every chunk of the corpus."""
    if not len(node_score):
        return node_score
    proposed = np.flatnonzero(chunk_score > floor)
    bounds = state.corpus.derived("node bounds", _node_bounds)
    slots = np.searchsorted(proposed, bounds)  # per node: its proposed chunks, [low, high)
    # reduceat over (low, high) pairs: the even results are the max over [low, high).
    padded = np.append(chunk_score[proposed], -np.inf)
    best = np.maximum.reduceat(padded, slots)[::2]
    best = np.where(slots[1::2] > slots[::2], best, floor)
    return np.asarray(np.maximum(node_score, best))


def _node_bounds(corpus: Corpus) -> npt.NDArray[np.int64]:
    """Every node's (first, last) chunk, flattened: first0, last0, first1, last1, ..."""
    return np.column_stack((corpus.node_first, corpus.node_last)).ravel()
