"""Which reranker a spec names: `get_reranker`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from windowpack.errors import InvalidArgumentError
from windowpack.rerank.base import Reranker
from windowpack.rerank.sentence import SENTENCE_RERANKER, SentenceReranker

if TYPE_CHECKING:
    from windowpack.embed import Embedder

NO_RERANKER = "none"
KNOWN_RERANKERS = (NO_RERANKER, SENTENCE_RERANKER)


def get_reranker(spec: str | Reranker | None, *, embedder: Embedder) -> Reranker | None:
    """The reranker `spec` names, or None for no reranking.

    None or "none": no reranker; "sentence": `SentenceReranker` over `embedder` (the store's
    own, so it adds no model); an object with a `scores` method: that object, as given.
    """
    if spec is None or spec == NO_RERANKER:
        return None
    if spec == SENTENCE_RERANKER:
        return SentenceReranker(embedder)
    if not isinstance(spec, str) and callable(getattr(spec, "scores", None)):
        return spec
    raise InvalidArgumentError(
        "reranker", f"unknown reranker {spec!r}; known: {', '.join(KNOWN_RERANKERS)}"
    )
