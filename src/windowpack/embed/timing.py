"""The calls inside an embedding that a benchmark may time, by stage name.

Each stage is (owner, attribute): a class whose method the embedder looks up at call time, so
a timer that replaces the attribute for a while (and puts it back) sees every call. They live
here, beside the code they name, so that moving a method means moving its entry too;
`tests/test_benchmark_hooks.py` checks each one names a method.
"""

from __future__ import annotations


def timed_calls() -> dict[str, tuple[object, str]]:
    """Stage name -> (owner, attribute) of a sentence-transformers embedding: window split
    (texts longer than the model reads cut into windows of word pieces: a tokenizer pass) and
    model encode (the model over the windows)."""
    from windowpack.embed.embedder import SentenceTransformerEmbedder

    return {
        "window split": (SentenceTransformerEmbedder, "_split_into_windows"),
        "model encode": (SentenceTransformerEmbedder, "_encode"),
    }
