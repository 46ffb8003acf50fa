"""Real MiniLM vectors of the essays' chunks, embedded once and cached (for `ann.py`).

The RULER essays JSON and the NIAH essay folder, chunked as windowpack chunks them (200
cl100k tokens), embedded with the bundled all-MiniLM-L6-v2; questions made from corpus
sentences (`make_questions`) are embedded too. Cached as one .npz (default under /tmp), so the
~3 minutes of model time are paid once:

    .venv/bin/python benchmarks/ann_vectors.py --cache /tmp/wp-ann-essays.npz

`--smoke` embeds a few hundred chunks with the hash embedder into a temporary cache: a check.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_common import (
    ESSAYS_JSON,
    NIAH_ESSAYS,
    add_smoke_option,
    corpus_sentences,
    load_corpus,
    make_questions,
)

from windowpack.config import DEFAULT_EMBEDDER
from windowpack.documents import chunk_document
from windowpack.embed import get_embedder
from windowpack.text import get_token_counter

DEFAULT_CACHE = Path("/tmp/wp-ann-essays.npz")


def essay_vectors(
    cache: Path,
    *,
    queries: int = 200,
    embedder_name: str = DEFAULT_EMBEDDER,
    max_chunks: int | None = None,
) -> dict[str, np.ndarray]:
    """{"vectors": chunks x 384, "queries": queries x 384}, from `cache` or embedded now
    (with `embedder_name`, the first `max_chunks` chunks only when given)."""
    if cache.exists():
        with np.load(cache) as saved:
            return {name: saved[name] for name in saved.files}
    counter = get_token_counter("cl100k_base")
    documents = load_corpus([ESSAYS_JSON, NIAH_ESSAYS], max_bytes=64 * 1024 * 1024).documents
    texts = [
        document.text[chunk.start : chunk.end]
        for document in documents
        for chunk in chunk_document(document, counter, 200)
    ][:max_chunks]
    questions = make_questions(corpus_sentences([d.text for d in documents]), queries, seed=16)
    embedder = get_embedder(embedder_name)
    started = time.perf_counter()
    vectors = embedder.embed(texts)
    print(f"embedded {len(texts):,} chunks in {time.perf_counter() - started:.0f} s")
    query_vectors = np.vstack([embedder.embed_query(question) for question in questions])
    figures = {"vectors": vectors.astype(np.float32), "queries": query_vectors.astype(np.float32)}
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, vectors=figures["vectors"], queries=figures["queries"])
    return figures


def smoke_vectors() -> dict[str, np.ndarray]:
    """A `--smoke` run's vectors: 300 hash-embedded chunks and 10 questions, cached nowhere."""
    with tempfile.TemporaryDirectory(prefix="wp-ann-") as folder:
        cache = Path(folder) / "vectors.npz"
        return essay_vectors(cache, queries=10, embedder_name="hash", max_chunks=300)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    add_smoke_option(parser)
    args = parser.parse_args()
    figures = smoke_vectors() if args.smoke else essay_vectors(args.cache)
    print({name: value.shape for name, value in figures.items()})


if __name__ == "__main__":
    main()
