"""Reranking: the ranking seam between the first stage's candidates and the packer.

It owns the `Reranker` protocol (one relevance per passage for a query), `RerankBounds`
(how many candidates, how much time), `rerank_bounded` (a reranker run within those bounds),
the sentence-level reranker (`SentenceReranker`: a passage scores as its best sentence's
cosine to the question, through the store's own embedder) and the factory `get_reranker`.

The packer uses it after the first stage (BM25 and vectors, fused): the best `depth`
candidates are re-scored within `time_ms` per pack and reordered among themselves. It is
off by default (`reranker=None`). Importing this package loads no model.
"""

from __future__ import annotations

from windowpack.rerank.base import RerankBounds, Reranker, rerank_bounded
from windowpack.rerank.factory import get_reranker
from windowpack.rerank.sentence import SentenceReranker

__all__ = [
    "RerankBounds",
    "Reranker",
    "SentenceReranker",
    "get_reranker",
    "rerank_bounded",
]
