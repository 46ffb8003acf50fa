"""Search: dense and lexical candidates from a collection's indexes, fused into one ranking.

`hybrid_search` asks both indexes and fuses their scores (`fusion`, z-scores by default),
within the units a metadata filter keeps when given them (`stored_kept_units`);
`QueryEmbeddingCache` keeps recent question vectors; `check_query` / `check_search` check
a caller's arguments once.

`is_set_question` tells a question after a whole set or a count from one after one thing.
`asks_for_person` tells a question whose answer is someone (its answer type).
`bridge_terms`: the names and rare words of evidence that a second look-up follows.
`content_words`: a text's lowercased, crudely stemmed content words.
"""

from __future__ import annotations

from windowpack.search.answer_kinds import asks_for_person
from windowpack.search.bridge_terms import bridge_terms, content_words
from windowpack.search.filtering import stored_kept_units
from windowpack.search.fusion import z_scores_fused
from windowpack.search.hybrid import (
    MIN_CANDIDATES,
    QueryEmbeddingCache,
    check_query,
    check_search,
    hybrid_search,
)
from windowpack.search.question_kinds import is_set_question
from windowpack.search.timing import timed_calls

__all__ = [
    "MIN_CANDIDATES",
    "QueryEmbeddingCache",
    "asks_for_person",
    "bridge_terms",
    "check_query",
    "check_search",
    "content_words",
    "hybrid_search",
    "is_set_question",
    "stored_kept_units",
    "timed_calls",
    "z_scores_fused",
]
