"""Index work of one write on a ~10M-token collection: add a 5K-token document, delete one.

What is timed is what `IndexStore.publish` does with a write's delta, embedding aside: copy
the published indexes (readers keep them), remove the delta's ids, add its ids (dense vectors
and lexical texts), save the new version's folders and remove the previous version's. No
database: the indexes are built straight from texts, so the 10M tokens take a minute, not the
~40 minutes a real ingest would.

The collection: the RULER essays chunked by windowpack's chunker (200 cl100k tokens), copied
until the total passes `--tokens`; each copy's chunks start with a word of their own
("variantN"), so copies are distinct texts and the vocabulary grows as it would. Vectors come
from the hash embedder (`embedder="hash"`: deterministic, model-free; the timing of FAISS does
not depend on what the vectors mean). A 5K-token document is 25 chunks of these texts plus 3
summary-node texts, as an ingest would index them.

    .venv/bin/python benchmarks/index_writes.py                      # 10M tokens, 20 writes each
    .venv/bin/python benchmarks/index_writes.py --tokens 1000000 --writes 5   # a quick look
    .venv/bin/python benchmarks/index_writes.py --before             # also the old full rebuild

`--before` also times what a write cost before segments (main at eee5487, its two index modules
read from git): bm25s rebuilt over every text, the flat FAISS index cloned and written whole.
Targets: add ≤ 200 ms, delete ≤ 200 ms (p50 and max printed; the max includes any merge or
compaction a write triggered). `--smoke` runs it in seconds (a few thousand tokens, 2 writes
each, `--before` too): a check, not figures.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from bench_common import (
    ESSAYS_JSON,
    SMOKE_TOKENS,
    add_smoke_option,
    load_corpus,
    machine_info,
    write_results,
)

from windowpack.documents import chunk_document
from windowpack.embed import HASH_EMBEDDER, get_embedder
from windowpack.index import LexicalIndex, VectorIndex, build_lexical_index, build_vector_index
from windowpack.text import get_token_counter

DOCUMENT_CHUNKS = 25  # 25 x 200 tokens = one 5K-token document
DOCUMENT_NODES = 3


@dataclass
class Collection:
    """The texts and vectors of the benchmark collection, by index id."""

    ids: np.ndarray
    texts: list[str]
    tokens: int


def build_collection(target_tokens: int) -> Collection:
    counter = get_token_counter("cl100k_base")
    documents = load_corpus([ESSAYS_JSON], max_bytes=64 * 1024 * 1024).documents
    base: list[tuple[str, int]] = []
    for document in documents:
        if sum(count for _, count in base) >= target_tokens:
            break  # a collection smaller than the essays is their first documents
        for chunk in chunk_document(document, counter, 200):
            base.append((document.text[chunk.start : chunk.end], chunk.tokens))
    texts: list[str] = []
    tokens = 0
    copy = 0
    while tokens < target_tokens:
        for text, count in base:
            texts.append(f"variant{copy} {text}")
            tokens += count + 2
        copy += 1
    return Collection(ids=np.arange(1, len(texts) + 1, dtype=np.int64), texts=texts, tokens=tokens)


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def cpu_timed(call: Callable[[], object]) -> float:
    """CPU milliseconds of this process: on a shared machine the wall clock also counts the
    time the scheduler gave to others (load averages of 10-15 on 2 cores here)."""
    started = time.process_time()
    call()
    return (time.process_time() - started) * 1000


class Versions:
    """The published indexes and their folders, changed the way `IndexStore.publish` does."""

    def __init__(self, folder: Path, dense: VectorIndex, lexical: LexicalIndex) -> None:
        self.folder, self.dense, self.lexical, self.version = folder, dense, lexical, 0
        self._save(dense, lexical)

    def write(
        self, added: np.ndarray, texts: list[str], vectors: np.ndarray, removed: np.ndarray
    ) -> dict[str, float]:
        parts: dict[str, float] = {}
        dense, lexical = self.dense.copy(), self.lexical.copy()

        def write_dense() -> None:
            dense.remove(removed)
            dense.add(added, vectors)

        def write_lexical() -> None:
            lexical.remove(removed)
            lexical.add(added, texts)

        parts["dense"] = timed(write_dense)
        parts["lexical"] = timed(write_lexical)
        parts["save"] = timed(lambda: self._save(dense, lexical))
        self.dense, self.lexical = dense, lexical
        parts["total"] = sum(parts.values())
        return parts

    def _save(self, dense: VectorIndex, lexical: LexicalIndex) -> None:
        self.version += 1
        dense.save(self.folder / f"dense-v{self.version}")
        lexical.save(self.folder / f"lexical-v{self.version}")
        for old in ("dense", "lexical"):
            shutil.rmtree(self.folder / f"{old}-v{self.version - 1}", ignore_errors=True)


def measured_write(
    versions: Versions,
    added: np.ndarray,
    texts: list[str],
    vectors: np.ndarray,
    removed: np.ndarray,
) -> dict[str, float]:
    """A write's parts in wall-clock ms, and its CPU ms as `total_cpu`."""
    started = time.process_time()
    parts = versions.write(added, texts, vectors, removed)
    return {**parts, "total_cpu": (time.process_time() - started) * 1000}


def summary(runs: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    return {
        part: {
            "p50_ms": round(statistics.median(run[part] for run in runs), 1),
            "max_ms": round(max(run[part] for run in runs), 1),
        }
        for part in runs[0]
    }


def described(index: object, attribute: str) -> Any:
    """A figure the index kinds in use keep beside their protocol (kind, segments, ...)."""
    return getattr(index, attribute, None)


# What the old modules imported, under the names it has now.
OLD_IMPORTS = {
    "from windowpack.retrieval.index_kinds import": "from windowpack.index import",
    "from windowpack.text.sentences import": "from windowpack.text import",
}


def old_module(name: str, folder: Path) -> ModuleType:
    """`windowpack/retrieval/<name>.py` as it was at eee5487 (main before segments), its
    imports pointed at where those names live now."""
    source = subprocess.run(
        ["git", "show", f"eee5487:src/windowpack/retrieval/{name}.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for old, new in OLD_IMPORTS.items():
        source = source.replace(old, new)
    path = folder / f"old_{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"old_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def old_write_cost(collection: Collection, vectors: np.ndarray, folder: Path) -> dict[str, float]:
    """One write as main did it: bm25s rebuilt over everything, the flat index cloned, saved."""
    old_lexical, old_dense = old_module("lexical_index", folder), old_module("dense_index", folder)
    flat = old_dense.FaissIndex.build(
        vectors.shape[1], collection.ids, vectors, ann_threshold=10**12
    )
    parts = {
        "lexical rebuild": timed(
            lambda: old_lexical.Bm25Index.build(collection.ids.tolist(), collection.texts)
        ),
        "dense clone+add": timed(lambda: flat.copy().add(collection.ids[:1] + 10**9, vectors[:1])),
        "dense save": timed(lambda: flat.save(folder / "old.faiss")),
    }
    parts["total"] = sum(parts.values())
    return {part: round(value, 1) for part, value in parts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tokens", type=int, default=10_000_000)
    parser.add_argument("--writes", type=int, default=20)
    parser.add_argument("--before", action="store_true", help="also time main's full rebuild")
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.tokens, args.writes, args.before = SMOKE_TOKENS, 2, True

    started = time.perf_counter()
    collection = build_collection(args.tokens)
    embedder = get_embedder(HASH_EMBEDDER)
    vectors = embedder.embed(collection.texts)
    print(
        f"collection: {len(collection.texts):,} chunks, {collection.tokens:,} cl100k tokens "
        f"(essays x copies), hash-embedder vectors; made in {time.perf_counter() - started:.0f} s"
    )
    with tempfile.TemporaryDirectory(prefix="wp-index-writes-") as name:
        folder = Path(name)
        build: dict[str, float] = {}
        started = time.perf_counter()
        dense = build_vector_index(vectors.shape[1], collection.ids, vectors, ann_threshold=100_000)
        build["dense_s"] = round(time.perf_counter() - started, 2)
        started = time.perf_counter()
        lexical = build_lexical_index(collection.ids.tolist(), collection.texts)
        build["lexical_s"] = round(time.perf_counter() - started, 2)
        versions = Versions(folder, dense, lexical)
        print(
            f"built: dense ({described(dense, 'kind')}) {build['dense_s']} s, lexical "
            f"{build['lexical_s']} s ({described(lexical, 'segment_count')} segment)"
        )

        rng = np.random.default_rng(16)
        next_id = int(collection.ids[-1]) + 1
        adds, deletes = [], []
        for _ in range(args.writes):
            picked = rng.choice(
                len(collection.texts), DOCUMENT_CHUNKS + DOCUMENT_NODES, replace=False
            )
            texts = [collection.texts[i] + " fresh" for i in picked]
            ids = np.arange(next_id, next_id + len(texts), dtype=np.int64)
            next_id += len(texts)
            adds.append(measured_write(versions, ids, texts, embedder.embed(texts), ids[:0]))
        for _ in range(args.writes):
            start = int(rng.integers(0, len(collection.ids) - DOCUMENT_CHUNKS))
            removed = collection.ids[start : start + DOCUMENT_CHUNKS + DOCUMENT_NODES]
            empty = np.zeros((0, vectors.shape[1]), dtype=np.float32)
            deletes.append(measured_write(versions, removed[:0], [], empty, removed))
        questions = ["startup founders investors", "lisp macros", "how to do great work"] * 5
        query_ms = statistics.median(
            timed(functools.partial(versions.lexical.search, q, 100)) for q in questions
        )
        query_cpu_ms = statistics.median(
            cpu_timed(functools.partial(versions.lexical.search, q, 100)) for q in questions
        )
        figures: dict[str, Any] = {
            "collection": {"chunks": len(collection.texts), "tokens": collection.tokens},
            "build": build,
            "add_5k_document": summary(adds),
            "delete_document": summary(deletes),
            "after": {
                "lexical_segments": described(versions.lexical, "segment_count"),
                "dense_pending_tail_and_tombstones": list(described(versions.dense, "pending")),
                "lexical_query_p50_ms": round(query_ms, 2),
                "lexical_query_p50_cpu_ms": round(query_cpu_ms, 2),
                "load_average_1min": os.getloadavg()[0],
            },
        }
        if args.before:
            figures["before_one_write"] = old_write_cost(collection, vectors, folder)
    figures["machine"] = machine_info()
    for key in ("add_5k_document", "delete_document"):
        print(
            f"{key}: "
            + ", ".join(
                f"{part} p50 {v['p50_ms']} ms / max {v['max_ms']} ms"
                for part, v in figures[key].items()
            )
        )
    print(f"after: {figures['after']}")
    if args.before:
        print(f"before (one write on main): {figures['before_one_write']}")
    print(f"results: {write_results('index_writes', figures)}")


if __name__ == "__main__":
    main()
