"""Search: question -> ranked evidence, the one ranking `search()` and `pack()` share.

`Question` is a question read once (its terms and literals, in its collection's language
rules); `retrieve` asks every index once and fuses their lists by rank, with the question's
literals and a feedback hop (`retrieval`); `hybrid_search` turns that ranking into hits with
provenance, within the units a metadata filter keeps when given them (`stored_kept_units`).
`QueryEmbeddingCache` keeps recent question vectors; `check_query` / `check_search` check a
caller's arguments once.
"""

from __future__ import annotations

from windowpack.search.filtering import stored_kept_units
from windowpack.search.hybrid import (
    MIN_CANDIDATES,
    QueryEmbeddingCache,
    check_query,
    check_search,
    hybrid_search,
)
from windowpack.search.question import Question
from windowpack.search.retrieval import Evidence, fuse, read_question, retrieve
from windowpack.search.timing import timed_calls

__all__ = [
    "MIN_CANDIDATES",
    "Evidence",
    "QueryEmbeddingCache",
    "Question",
    "check_query",
    "check_search",
    "fuse",
    "hybrid_search",
    "read_question",
    "retrieve",
    "stored_kept_units",
    "timed_calls",
]
