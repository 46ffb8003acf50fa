"""The sentence-level reranker: a passage is as relevant as its best sentence.

A chunk's vector averages everything in it, so one sentence that answers the question is
diluted by the paragraphs around it ("Tomasz Wilk jogs past the Atomium every morning." in a
chunk about something else). Embedding each sentence at query time and keeping the best
cosine finds that sentence again, whatever surrounds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from windowpack.rerank.base import Scores
from windowpack.text import split_sentences

if TYPE_CHECKING:
    # Type-only: importing the embedders' package (storage, the cache) would make
    # `import windowpack.rerank` several times slower.
    from windowpack.embed import Embedder

SENTENCE_RERANKER = "sentence"


class SentenceReranker:
    """Scores each passage by the cosine between the query and the passage's best sentence.

    The sentences of all passages of one call are embedded in one `Embedder.embed` call,
    the query with `Embedder.embed_query`; the embedder's vectors are L2-normalised, so a
    dot product is the cosine. A passage with no sentence (nothing but white space) scores
    -inf: there is nothing in it to be relevant.
    """

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder

    @property
    def name(self) -> str:
        return SENTENCE_RERANKER

    def scores(self, query: str, passages: Sequence[str]) -> Scores:
        """The best sentence's cosine to `query`, per passage."""
        best: Scores = np.full(len(passages), -np.inf, dtype=np.float64)
        sentences: list[str] = []
        owners: list[int] = []
        for owner, passage in enumerate(passages):
            pieces = [passage[span.start : span.end] for span in split_sentences(passage)]
            if not pieces and passage.strip():
                # The splitter drops only white space, so this is a safeguard: never let a
                # passage with text go unscored.
                pieces = [passage.strip()]
            sentences.extend(pieces)
            owners.extend([owner] * len(pieces))
        if not sentences:
            return best
        vectors = np.asarray(self._embedder.embed(sentences), dtype=np.float64)
        question = np.asarray(self._embedder.embed_query(query), dtype=np.float64).reshape(-1)
        np.maximum.at(best, np.asarray(owners, dtype=np.intp), vectors @ question)
        return best
