"""Which ANN index for large collections: IVF and HNSW, with and without PQ, on real vectors.

Vectors: the essays' chunks embedded with the bundled all-MiniLM-L6-v2 (`ann_vectors.py`,
cached under /tmp), and 200 questions made from corpus sentences. The essays are only ~4K
chunks, far below where an ANN index is used, so `--scale N` also builds a set of N vectors
from them: each real vector plus small Gaussian noise (sigma 0.02 per dimension, then
re-normalised), which keeps their neighbourhood structure while giving an ANN index a size
where its trade-offs show; this is said in the output.

Per configuration: build time (train + add), size (the serialised index, a proxy for memory),
query latency (p50 of one-query searches for k = 100 on one thread) and recall@100 against
exact inner-product search, before and after deleting 10% of the vectors (IVF `remove_ids`;
HNSW, which has no remove, excludes them with an `IDSelector`, as windowpack's tombstones
do).

    .venv/bin/python benchmarks/ann.py --scale 200000

`--smoke` runs the configurations without PQ on 2,000 vectors from hash-embedded chunks (a
temporary cache, 10 questions): a check, not figures (PQ's training takes minutes on a loaded
machine however few the vectors; it runs the same code with another factory string).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import faiss
import numpy as np
from ann_vectors import DEFAULT_CACHE, essay_vectors, smoke_vectors
from bench_common import add_smoke_option, machine_info, write_results

K = 100


def scaled(vectors: np.ndarray, size: int, seed: int = 16) -> np.ndarray:
    if size <= len(vectors):
        return vectors
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(vectors), size - len(vectors))
    noisy = vectors[picks] + rng.normal(0, 0.02, (len(picks), vectors.shape[1])).astype(np.float32)
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    return np.vstack([vectors, noisy]).astype(np.float32)


def configurations(size: int) -> list[tuple[str, str, dict[str, int]]]:
    """(label, factory string, search parameter) for each configuration tried."""
    lists = max(1, min(int(4 * np.sqrt(size)), size // 39))
    found: list[tuple[str, str, dict[str, int]]] = [("flat (exact)", "IDMap2,Flat", {})]
    for nprobe in (8, 16, 32, 64):
        found.append((f"IVF{lists},Flat nprobe={nprobe}", f"IVF{lists},Flat", {"nprobe": nprobe}))
    for nprobe in (16, 64):
        found.append((f"IVF{lists},PQ48 nprobe={nprobe}", f"IVF{lists},PQ48", {"nprobe": nprobe}))
    for m in (16, 32):
        for ef in (128, 256):
            found.append((f"HNSW{m},Flat efSearch={ef}", f"HNSW{m},Flat", {"efSearch": ef}))
    found.append(("HNSW32,PQ48 efSearch=256", "HNSW32_PQ48", {"efSearch": 256}))
    return found


def build(factory: str, vectors: np.ndarray) -> tuple[Any, float]:
    started = time.perf_counter()
    index = faiss.index_factory(vectors.shape[1], factory, faiss.METRIC_INNER_PRODUCT)
    if not index.is_trained:
        index.train(vectors)
    if factory.startswith("HNSW"):
        index = faiss.IndexIDMap2(index)  # HNSW has no ids of its own
    index.add_with_ids(vectors, np.arange(len(vectors), dtype=np.int64))
    return index, time.perf_counter() - started


def set_parameter(index: Any, parameters: dict[str, int]) -> None:
    inner: Any = (
        faiss.downcast_index(index.index) if isinstance(index, faiss.IndexIDMap2) else index
    )
    if "nprobe" in parameters:
        faiss.extract_index_ivf(inner).nprobe = parameters["nprobe"]
    if "efSearch" in parameters:
        inner.hnsw.efSearch = parameters["efSearch"]


def searcher(
    index: Any, parameters: dict[str, int], excluded: np.ndarray | None
) -> Callable[[np.ndarray], np.ndarray]:
    set_parameter(index, parameters)
    params: Any = None
    if excluded is not None and isinstance(index, faiss.IndexIDMap2):
        selector = faiss.IDSelectorNot(faiss.IDSelectorBatch(excluded))
        # The stubs know no keyword arguments; FAISS's Python layer sets them as attributes.
        parameters_of: Any = faiss.SearchParameters
        params = parameters_of(sel=selector)
        params.referenced = selector  # keeps the selector alive as long as the parameters

    def search(query: np.ndarray) -> np.ndarray:
        found: np.ndarray = index.search(query.reshape(1, -1), K, params=params)[1][0]
        return found

    return search


def recall(
    search: Callable[[np.ndarray], np.ndarray], queries: np.ndarray, truth: np.ndarray
) -> float:
    hits = [
        len(set(search(q).tolist()) & set(t.tolist())) / K
        for q, t in zip(queries, truth, strict=True)
    ]
    return float(np.mean(hits))


def latency_ms(search: Callable[[np.ndarray], np.ndarray], queries: np.ndarray) -> float:
    times = []
    for query in queries:
        started = time.perf_counter()
        search(query)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def exact_truth(vectors: np.ndarray, queries: np.ndarray, keep: np.ndarray) -> np.ndarray:
    flat = faiss.IndexIDMap2(faiss.IndexFlatIP(vectors.shape[1]))
    flat.add_with_ids(vectors[keep], keep.astype(np.int64))
    return flat.search(queries, K)[1]


def measure(
    factory: str,
    settings: list[tuple[str, dict[str, int]]],
    vectors: np.ndarray,
    queries: np.ndarray,
    truths: tuple[np.ndarray, np.ndarray],
    deleted: np.ndarray,
) -> list[dict[str, Any]]:
    """Build once, then each search setting before deletes, then each after them."""
    faiss.omp_set_num_threads(2)  # builds use both cores, searches one (as windowpack's do)
    index, seconds = build(factory, vectors)
    faiss.omp_set_num_threads(1)
    size_mb = len(faiss.serialize_index(index)) / 1e6
    rows = []
    for label, parameters in settings:
        search = searcher(index, parameters, None)
        rows.append(
            {
                "config": label,
                "build_s": round(seconds, 2),
                "size_mb": round(size_mb, 1),
                "query_p50_ms": round(latency_ms(search, queries), 3),
                "recall@100": round(recall(search, queries, truths[0]), 4),
            }
        )
    hnsw = isinstance(index, faiss.IndexIDMap2)  # HNSW (and flat): tombstones via a selector
    if not hnsw:
        index.remove_ids(deleted)
    for row, (_, parameters) in zip(rows, settings, strict=True):
        search = searcher(index, parameters, deleted if hnsw else None)
        row["recall@100_after_deletes"] = round(recall(search, queries, truths[1]), 4)
        row["query_p50_ms_after_deletes"] = round(latency_ms(search, queries), 3)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cache", default=str(DEFAULT_CACHE))
    parser.add_argument("--scale", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=200)
    add_smoke_option(parser)
    args = parser.parse_args()
    faiss.cvar.distance_compute_blas_threshold = 20

    if args.smoke:
        args.scale, args.queries = 2_000, 10
    real = smoke_vectors() if args.smoke else essay_vectors(Path(args.cache))
    vectors = scaled(real["vectors"], args.scale)
    queries = real["queries"][: args.queries]
    rng = np.random.default_rng(7)
    deleted = np.sort(rng.choice(len(vectors), len(vectors) // 10, replace=False)).astype(np.int64)
    keep = np.setdiff1d(np.arange(len(vectors)), deleted)
    truths = (
        exact_truth(vectors, queries, np.arange(len(vectors))),
        exact_truth(vectors, queries, keep),
    )
    print(
        f"{len(real['vectors']):,} real MiniLM chunk vectors of the essays; "
        f"{len(vectors):,} in the set (the rest: real vectors + N(0, 0.02) noise, re-normalised); "
        f"{len(queries)} question vectors; k = {K}; one thread; 10% deleted for the second recall"
    )
    rows = []
    by_factory: dict[str, list[tuple[str, dict[str, int]]]] = {}
    for label, factory, parameters in configurations(len(vectors)):
        if args.smoke and "PQ" in factory:
            continue
        by_factory.setdefault(factory, []).append((label, parameters))
    for factory, settings in by_factory.items():
        for row in measure(factory, settings, vectors, queries, truths, deleted):
            rows.append(row)
            print("  ".join(f"{key}={value}" for key, value in row.items()), flush=True)
    write_results(
        "ann",
        {
            "vectors": len(vectors),
            "real_vectors": len(real["vectors"]),
            "rows": rows,
            "machine": machine_info(),
        },
    )


if __name__ == "__main__":
    main()
