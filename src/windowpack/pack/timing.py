"""The calls inside a pack that a benchmark may time, by stage name.

Each stage is (owner, attribute): a module or class that the pack looks the attribute up on at
call time, so a timer that replaces the attribute for a while (and puts it back) sees every
call of that stage. They live here, beside the code they name, so that moving a function means
moving its entry too; `tests/test_benchmark_hooks.py` checks that a pack calls each one.
"""

from __future__ import annotations


def timed_calls() -> dict[str, tuple[object, str]]:
    """Stage name -> (owner, attribute) of the calls a pack makes, for timing wrappers.

    scoring: retrieval and fusion of every source (`scored_corpora`, the query embedding and every
    search included), of which retrieval: `search.retrieve` (every look-up, the fusion, the feedback
    hop and the literals), rerank: the reranker's stage; allocate: the budget split; render: one
    source's blocks; overview: the overview tier; window: joining the text, the exact count
    included (for every room a refill tries); describe: the items of the window chosen; count: the
    exact count of the pieces; lossless render: the whole collection verbatim (once per version);
    state load: a version's packing state; why found, why chosen: reading what found each chunk,
    and each chosen chunk's reason (`reasons`, inside scoring and render).
    """
    from windowpack.pack import evidence, packer, scoring, window

    return {
        "scoring": (packer, "scored_corpora"),
        "retrieval": (scoring, "retrieve"),
        "rerank": (evidence, "reranked"),
        "allocate": (window, "allocate"),
        "render": (window, "_rendered"),
        "overview": (window, "overview"),
        "window": (window, "_counted"),
        "describe": (window, "_described"),
        "count": (window, "piece_counts"),
        "lossless render": (packer, "lossless_window"),
        "state load": (packer, "load_state"),
        "why found": (scoring, "found_in"),
        "why chosen": (window, "chunk_reasons"),
    }
