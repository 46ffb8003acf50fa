"""What the packer reads of the evidence: a chunk's text, and the reranker.

The ranking itself is retrieval's (`search.retrieve`). Here: the text of a chunk of a state
(`chunk_text`), and the reranker: a `rerank.Reranker` re-scores the best `depth` chunks
within a time bound; the chunks it ranks keep the first stage's scores among themselves,
reordered, so the rest of the ranking (and the allocator's margins) is unchanged.
"""

from __future__ import annotations

import bisect

import numpy as np
import numpy.typing as npt

from windowpack.pack.state import PackingState
from windowpack.rerank import RerankBounds, Reranker, rerank_bounded

FloatArray = npt.NDArray[np.float64]


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
