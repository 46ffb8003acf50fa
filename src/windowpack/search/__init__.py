"""Search: dense and lexical candidates from a collection's indexes, fused into one ranking.

`hybrid_search` asks both indexes and fuses their scores (`fusion`, z-scores by default);
`QueryEmbeddingCache` keeps recent question vectors; `check_query` / `check_search` check
a caller's arguments once.
"""

from __future__ import annotations

from windowpack.search.fusion import z_scores_fused
from windowpack.search.hybrid import (
    MIN_CANDIDATES,
    QueryEmbeddingCache,
    check_query,
    check_search,
    hybrid_search,
)
from windowpack.search.timing import timed_calls

__all__ = [
    "MIN_CANDIDATES",
    "QueryEmbeddingCache",
    "check_query",
    "check_search",
    "hybrid_search",
    "timed_calls",
    "z_scores_fused",
]
