"""The calls of a search that a benchmark may time, by stage name.

Each stage is (owner, attribute): a module or class that `hybrid_search` looks the attribute
up on at call time, so a timer that replaces the attribute for a while (and puts it back) sees
every call. They live here, beside the code they name, so that moving a function means moving
its entry too; `tests/test_benchmark_hooks.py` checks that a search calls each one.
"""

from __future__ import annotations


def timed_calls() -> dict[str, tuple[object, str]]:
    """Stage name -> (owner, attribute): query embedding (the model, for a question not in the
    cache; in a worker thread beside the BM25 search), retrieval (every look-up, the
    fusion and the stages), db fetch (the hits' chunk rows with their documents)."""
    from windowpack.search import hybrid
    from windowpack.storage import repository

    return {
        "query embedding": (hybrid.QueryEmbeddingCache, "_embedded"),
        "retrieval": (hybrid, "retrieve"),
        "db fetch": (repository, "chunks_with_documents"),
    }
