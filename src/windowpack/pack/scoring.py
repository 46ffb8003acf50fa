"""Relevance of every chunk and summary node of the states packed, for one question.

Dense and lexical candidates of every source are fused into one ranking (`search.fusion`),
scattered onto each state's units, and a summary is given the best evidence beneath it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from windowpack.index import CollectionIndexes, split_index_ids
from windowpack.pack.corpus import Corpus
from windowpack.pack.state import PackingState
from windowpack.pack.verbatim import mean_chunk_cost
from windowpack.search import MIN_CANDIDATES, QueryEmbeddingCache, z_scores_fused

FloatArray = npt.NDArray[np.float64]
Fused = tuple[npt.NDArray[np.int64], npt.NDArray[np.floating[Any]]]


def scored_corpora(
    sources: Sequence[tuple[PackingState, CollectionIndexes]],
    query_vectors: QueryEmbeddingCache,
    query: str,
    budget: int,
) -> list[Corpus]:
    """Each state's corpus scored for `query` on one scale across all the states."""
    fused = _fused_scores(sources, query_vectors, query, budget)
    return [state.corpus.with_scores(*_scores(state, fused)) for state, _ in sources]


def _fused_scores(
    sources: Sequence[tuple[PackingState, CollectionIndexes]],
    query_vectors: QueryEmbeddingCache,
    query: str,
    budget: int,
) -> Fused:
    """One fused ranking over every source, so that relevance is comparable between them.

    Cosine similarities from one embedder share a scale across collections, and so do BM25
    scores roughly; standardising per collection instead would promote the best of an
    irrelevant collection to the level of the best of a relevant one. Chunk and node ids are
    database keys, unique across the collections of a store.
    """
    vector_of = query_vectors.get_soon(query)  # the model runs beside the lexical searches
    searched = [(indexes, _candidates(state, budget)) for state, indexes in sources]
    lexical = [indexes.lexical.search(query, k) for indexes, k in searched]
    vector = vector_of()
    dense = [indexes.dense.search(vector, k) for indexes, k in searched]
    return z_scores_fused([_merged(dense), _merged(lexical)])


def _candidates(state: PackingState, budget: int) -> int:
    """Enough candidates to rank about twice what the budget can hold, at least a few hundred."""
    corpus = state.corpus
    units = corpus.chunks + corpus.nodes
    mean_cost = max(1.0, corpus.derived("mean chunk cost", mean_chunk_cost))
    return max(1, min(units, max(MIN_CANDIDATES, int(2 * budget / mean_cost))))


def _merged(results: list[Fused]) -> Fused:
    ids = np.concatenate([ids for ids, _ in results]).astype(np.int64)
    scores = np.concatenate([scores for _, scores in results]).astype(np.float32)
    return ids, scores


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
    return chunk_score, _with_best_evidence_beneath(state, chunk_score, node_score, floor)


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
