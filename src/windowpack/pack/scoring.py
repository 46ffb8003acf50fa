"""Relevance of every chunk and summary node of the states packed, for one question.

The first look-up asks each source's indexes: BM25 (a chunk scored by its best sentence),
the chunk vectors, and the sentence vectors (a chunk scored by its best sentence's vector,
`index.sentences`). Their rankings are fused into one (`search.fusion`: z-scores, the
sentence ranking weighted 2 and BM25 1 against 1 for the chunk vectors, by default), scattered onto
each state's units, and a summary is given the best evidence beneath it. Then the second hop
and the reranker (`evidence`) adjust the chunks' scores, when the request runs them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from windowpack.embed import Vectors
from windowpack.index import (
    PIECES_PER_CHUNK,
    CollectionIndexes,
    best_per_chunk,
    chunk_ids_of,
    ordinals_of,
    split_index_ids,
)
from windowpack.pack import evidence
from windowpack.pack.corpus import Corpus
from windowpack.pack.evidence import PieceHits
from windowpack.pack.reasons import Found, RankedLists, found_in
from windowpack.pack.request import PackRequest
from windowpack.pack.state import PackingState
from windowpack.pack.twins import folded
from windowpack.pack.verbatim import mean_chunk_cost
from windowpack.rerank import RerankBounds, Reranker
from windowpack.search import (
    MIN_CANDIDATES,
    QueryEmbeddingCache,
    asks_for_person,
    z_scores_fused,
)

FloatArray = npt.NDArray[np.float64]
Fused = tuple[npt.NDArray[np.int64], npt.NDArray[np.floating[Any]]]

# What a piece naming someone gains, in cosine, for a question asking for a person. Measured
# on 48 associative needles in the ~680K-token essays (the question shares no word with the
# needle; MiniLM over sentences): the needle's sentence was in the top 20 for 0.29 of them
# with no bonus, 0.48 / 0.58 / 0.67 / 0.67 with 0.05 / 0.1 / 0.15 / 0.2, and 0.69 when only
# sentences naming someone were ranked at all.
PERSON_BONUS = 0.15


@dataclass(frozen=True, kw_only=True)
class Scored:
    """One state's corpus scored for the question, and its chunks' best pieces."""

    corpus: Corpus
    pieces: PieceHits
    found: Found
    """Which lists found each chunk: why it is in a window (`reasons`)."""


def scored_corpora(
    sources: Sequence[tuple[PackingState, CollectionIndexes]],
    query_vectors: QueryEmbeddingCache,
    request: PackRequest,
    reranker: Reranker | None = None,
) -> list[Scored]:
    """Each state's corpus scored for the request's question on one scale across all the
    states, with the request's evidence stages applied."""
    settings = request.evidence
    fused, pieces, lists = _fused_scores(sources, query_vectors, request)
    results = []
    for state, indexes in sources:
        chunk_score, node_score = _scores(state, fused)
        hits = _piece_hits(state, pieces)
        linked = np.zeros(0, dtype=np.int64)
        if settings.second_hop:
            first_look = chunk_score
            chunk_score = evidence.second_hop(
                state, indexes, chunk_score, request.query, hits, request.budget
            )
            if chunk_score is not first_look:  # what the hop raised
                linked = np.flatnonzero(chunk_score > first_look)
        if reranker is not None and settings.rerank_depth:
            bounds = RerankBounds(depth=settings.rerank_depth, time_ms=settings.rerank_time_ms)
            chunk_score = evidence.reranked(state, chunk_score, request.query, reranker, bounds)
        # What is found in a document repeating another's text counts for the first one's.
        chunk_score = folded(state.corpus.chunk_twin, chunk_score)
        floor = float(chunk_score.min()) if len(chunk_score) else 0.0
        node_score = _with_best_evidence_beneath(state, chunk_score, node_score, floor)
        corpus = state.corpus.with_scores(chunk_score, node_score)
        found = found_in(state, lists, linked)
        results.append(Scored(corpus=corpus, pieces=hits, found=found))
    return results


def _fused_scores(
    sources: Sequence[tuple[PackingState, CollectionIndexes]],
    query_vectors: QueryEmbeddingCache,
    request: PackRequest,
) -> tuple[Fused, Fused, RankedLists]:
    """One fused ranking over every source, so that relevance is comparable between them,
    the sentence index's best pieces (piece ids and cosines; empty when not searched), and
    the lists fused (what found each chunk, `reasons`).

    Cosine similarities from one embedder share a scale across collections, and so do BM25
    scores roughly; standardising per collection instead would promote the best of an
    irrelevant collection to the level of the best of a relevant one. Chunk and node ids are
    database keys, unique across the collections of a store.
    """
    query, budget, settings = request.query, request.budget, request.evidence
    vector_of = query_vectors.get_soon(query)  # the model runs beside the lexical searches
    searched = [(indexes, _candidates(state, budget)) for state, indexes in sources]
    lexical = [indexes.lexical.search(query, k, within=indexes.kept) for indexes, k in searched]
    vector = vector_of()
    dense = [indexes.dense.search(vector, k, within=indexes.kept) for indexes, k in searched]
    person = settings.answer_types and asks_for_person(query)
    pieces = [_pieces(indexes, vector, k, person) for indexes, k in searched if settings.sentences]
    piece_list = _merged(pieces) if pieces else _empty()
    by_chunk = best_per_chunk(*piece_list)
    lists = [_merged(dense), by_chunk, _merged(lexical)]
    weights = [1.0, settings.sentence_weight, settings.lexical_weight]
    # By what each list matches, those the fusion reads (a weight of 0 drops a list).
    used = [ranked if weight else _empty() for ranked, weight in zip(lists, weights, strict=True)]
    found_by = RankedLists(words=used[2:], meaning=used[:2])
    return z_scores_fused(lists, weights), piece_list, found_by


def _pieces(indexes: CollectionIndexes, vector: Vectors, k: int, person: bool) -> Fused:
    """The sentence index's best pieces; for a question that asks for a person, the pieces
    that name someone score `PERSON_BONUS` more (the answer type: `search.answer_kinds`)."""
    if indexes.sentences is None:
        return _empty()
    ids, scores = indexes.sentences.search_pieces(vector, k * PIECES_PER_CHUNK, within=indexes.kept)
    if person and len(ids):
        scores = scores + PERSON_BONUS * indexes.sentences.named(ids)
    return ids, scores


def _piece_hits(state: PackingState, pieces: Fused) -> PieceHits:
    """The best piece of each of this state's chunks among the sentence index's hits."""
    ids, scores = pieces
    if not len(ids) or not len(state.chunk_keys):
        return PieceHits()
    order = np.argsort(-scores, kind="stable")
    chunk_ids, ordinals = chunk_ids_of(ids[order]), ordinals_of(ids[order])
    keys, positions = state.chunk_keys, state.chunk_positions
    slots = np.minimum(np.searchsorted(keys, chunk_ids), len(keys) - 1)
    found = keys[slots] == chunk_ids
    best: dict[int, tuple[int, float]] = {}
    for position, ordinal, score in zip(
        positions[slots[found]].tolist(),
        ordinals[found].tolist(),
        scores[order][found].tolist(),
        strict=True,
    ):
        best.setdefault(position, (ordinal, score))
    return PieceHits(best=best)


def _empty() -> Fused:
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)


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
