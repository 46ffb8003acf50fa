"""Evidence beyond the first look-up: a chunk's best sentence, the second hop, the reranker.

The first look-up (`scoring`) ranks chunks by their words (BM25), their vectors and their
best sentence's vector. Two things it cannot do, done here on its results:

- *Second hop.* A chain ("Who guards the vaccine samples?" -> "The samples are guarded by
  the clinic's night nurse." -> "The clinic's night nurse is Oluwaseun Adeyemi.") has a
  second fact that shares nothing with the question: it is linked to the first by the names
  and rare terms the first fact adds (`search.bridge_terms`). Those of the best sentence of
  each leading chunk are searched again (BM25: a name or a rare term is a word match), and
  the best of what they find is ranked just below the chunk that led to it, so the budget
  takes the bridge right after its fact. Leaders are the best `_LEADERS_PER_8K` chunks per
  8K tokens of budget (at least one): a small window cannot afford a hop for every lead.
- *Reranking.* A `rerank.Reranker` re-scores the best `depth` chunks within a time bound;
  the chunks it ranks keep the first stage's scores among themselves, reordered, so the
  rest of the ranking (and the allocator's margins) is unchanged.

A chunk's *best sentence* is the piece of it that the sentence index ranked highest for the
question, unless another piece shares at least `_SHARED_WORDS` of the question's content
words and more of them than it does: words the question and a sentence share are stronger
evidence than closeness of meaning (the favoured sentence that names someone may be a
neighbour of the fact the question's words point to).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from windowpack.index import CollectionIndexes, sentence_pieces
from windowpack.pack.state import PackingState
from windowpack.rerank import RerankBounds, Reranker, rerank_bounded
from windowpack.search import bridge_terms, content_words

FloatArray = npt.NDArray[np.float64]

# Leading chunks whose bridges are followed, per 8K tokens of budget; hits kept per leader.
_LEADERS_PER_8K = 6
_MAX_LEADERS = 8
_HOPS_PER_LEADER = 1
# A hop's hit is kept when its BM25 score is at least this share of the hop's best.
_HOP_SHARE = 0.6
# How far below its leader a hop's hit is ranked (z-score units, as the fusion's scores).
HOP_MARGIN = 0.25
_HOP_TERMS = 4
_CLAUSE_END = re.compile(r"(?<=[.!?])\s+")
_SHARED_WORDS = 2
_HOP_CANDIDATES = 8


@dataclass(frozen=True, kw_only=True)
class PieceHits:
    """The sentence index's best pieces for the question, by chunk position of one state:
    (ordinal of the chunk's best piece, its cosine)."""

    best: dict[int, tuple[int, float]] = field(default_factory=dict)


def best_chunks(scores: FloatArray, count: int) -> npt.NDArray[np.int64]:
    """The `count` best-scored chunks, best first (ties by index), of those some retriever
    proposed (above the floor every other chunk shares)."""
    if not len(scores):
        return np.zeros(0, dtype=np.int64)
    proposed = np.flatnonzero(scores > scores.min())
    return proposed[np.lexsort((proposed, -scores[proposed]))][:count].astype(np.int64)


def chunk_text(state: PackingState, index: int) -> str:
    """The text of chunk `index` (a position in the state's corpus)."""
    position = bisect.bisect_right(state.document_first_chunk, index) - 1
    view = state.documents[position]
    ordinal = index - state.document_first_chunk[position]
    return view.text[view.chunk_starts[ordinal] : view.chunk_ends[ordinal]]


def chunk_span(state: PackingState, index: int) -> tuple[int, int, int]:
    """(document position, first char, end char) of chunk `index` in its document."""
    position = bisect.bisect_right(state.document_first_chunk, index) - 1
    view = state.documents[position]
    ordinal = index - state.document_first_chunk[position]
    return position, view.chunk_starts[ordinal], view.chunk_ends[ordinal]


def best_piece(
    state: PackingState, index: int, question_words: set[str], hits: PieceHits
) -> tuple[int, int]:
    """The (start, end) characters, within chunk `index`'s text, of its best sentence."""
    text = chunk_text(state, index)
    pieces = sentence_pieces(text)
    if not pieces:
        return 0, len(text)
    overlaps = [len(question_words & set(content_words(text[a:b]))) for a, b in pieces]
    best_overlap = max(overlaps)
    found = hits.best.get(index)
    by_meaning = found[0] if found is not None and found[0] < len(pieces) else None
    if by_meaning is not None and overlaps[by_meaning] >= min(best_overlap, _SHARED_WORDS):
        return pieces[by_meaning]
    return pieces[int(np.argmax(overlaps))]


def second_hop(
    state: PackingState,
    indexes: CollectionIndexes,
    scores: FloatArray,
    question: str,
    hits: PieceHits,
    budget: int,
) -> FloatArray:
    """`scores` with each leader's bridge hits raised to just below the leader (see module)."""
    leaders = best_chunks(scores, min(_MAX_LEADERS, max(1, _LEADERS_PER_8K * budget // 8192)))
    if not len(leaders):
        return scores
    question_words = set(content_words(question))
    raised = scores.copy()
    for leader in leaders.tolist():
        start, end = best_piece(state, leader, question_words, hits)
        fact = _clause_of(chunk_text(state, leader)[start:end], question_words)
        terms = bridge_terms(fact, question, limit=_HOP_TERMS)
        if not terms:
            continue
        for found in _hop_hits(state, indexes, " ".join(terms), leader):
            raised[found] = max(raised[found], scores[leader] - HOP_MARGIN)
    return raised


def _clause_of(piece: str, question_words: set[str]) -> str:
    """The part of a piece, cut after every ".", "!" or "?" and a space, that shares most of
    the question's words: a piece can hold more than one sentence (a short one joined to
    its neighbour, or two the splitter could not tell apart, as after "**"), and only the
    fact's own names lead on to the next one."""
    parts = [part for part in _CLAUSE_END.split(piece) if part.strip()]
    if len(parts) < 2:
        return piece
    shared = [len(question_words & set(content_words(part))) for part in parts]
    return parts[int(np.argmax(shared))] if max(shared) else piece


def _hop_hits(
    state: PackingState, indexes: CollectionIndexes, query: str, leader: int
) -> list[int]:
    """Chunk positions the hop's query finds, best first: at most `_HOPS_PER_LEADER`, each
    within `_HOP_SHARE` of the best score, the leader itself left out."""
    ids, values = indexes.lexical.search(query, _HOP_CANDIDATES, within=indexes.kept)
    keys, positions = state.chunk_keys, state.chunk_positions
    hits: list[tuple[int, float]] = []
    for index_id, value in zip(ids.tolist(), values.tolist(), strict=True):
        slot = int(np.searchsorted(keys, index_id)) if len(keys) else 0
        if slot < len(keys) and keys[slot] == index_id and int(positions[slot]) != leader:
            hits.append((int(positions[slot]), value))  # the leader holds its own terms
    if not hits:
        return []
    best = hits[0][1]
    return [position for position, value in hits if value >= _HOP_SHARE * best][:_HOPS_PER_LEADER]


def reranked(
    state: PackingState,
    scores: FloatArray,
    question: str,
    reranker: Reranker,
    bounds: RerankBounds,
) -> FloatArray:
    """`scores` with the best `bounds.depth` chunks reordered by `reranker` (see module)."""
    top = best_chunks(scores, bounds.depth)
    if len(top) < 2:
        return scores
    passages = [chunk_text(state, index) for index in top.tolist()]
    found = rerank_bounded(reranker, question, passages, bounds)
    if found is None:
        return scores
    scored = np.flatnonzero(~np.isnan(found))
    if len(scored) < 2:
        return scores
    chunks = top[scored]
    values = np.sort(scores[chunks])[::-1]  # the same scores, handed out in the new order
    order = np.argsort(-found[scored], kind="stable")
    result = scores.copy()
    result[chunks[order]] = values
    return result
