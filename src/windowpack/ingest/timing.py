"""The calls inside an ingest that a benchmark may time, by stage name.

Each stage is (owner, attribute): a module that the pipeline looks the attribute up on at call
time, so a timer that replaces the attribute for a while (and puts it back) sees every call.
They live here, beside the code they name, so that moving a function means moving its entry
too; `tests/test_benchmark_hooks.py` checks that an add calls each one.
"""

from __future__ import annotations


def timed_calls() -> dict[str, tuple[object, str]]:
    """Stage name -> (owner, attribute): commit (one transaction: documents, chunks, every
    node), collection levels (regrouping the collection-level nodes, rendering those whose
    children changed, inside the commit), embed and publish (the new node texts embedded,
    then the indexes published)."""
    from windowpack.ingest import pipeline

    return {
        "commit": (pipeline, "_commit"),
        "collection levels": (pipeline, "update_collection_levels"),
        "embed and publish": (pipeline, "_publish"),
    }
