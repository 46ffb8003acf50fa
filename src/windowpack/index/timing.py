"""The calls of the index component that a benchmark may time, by stage name.

Each stage is (owner, attribute): a class whose method callers look up at call time, so a
timer that replaces the attribute for a while (and puts it back) sees every call. They live
here, beside the code they name, so that moving a method means moving its entry too;
`tests/test_benchmark_hooks.py` checks that a search and a write call each one.
"""

from __future__ import annotations


def timed_calls() -> dict[str, tuple[object, str]]:
    """Stage name -> (owner, attribute): dense search (FAISS), BM25 search, version check (the
    current indexes of a collection, loaded or checked against the database), publish (a
    write's delta applied and saved as the next version)."""
    # Imported here: FAISS and bm25s load on first use (see `factory`).
    from windowpack.index.appendable_dense import AppendableFaissIndex
    from windowpack.index.lexical import Bm25Index
    from windowpack.index.store import IndexStore

    return {
        "dense search": (AppendableFaissIndex, "search"),
        "BM25 search": (Bm25Index, "search_terms"),
        "version check": (IndexStore, "current"),
        "publish": (IndexStore, "publish"),
    }
