"""Throughput and latency of `POST /v1/collections/{c}/pack` over HTTP, with a real server.

Run from the repository root with the project virtualenv; keep the store with `--store` to
skip the ~2 min ingest next time:

    .venv/bin/python benchmarks/api.py --store /tmp/wp-api-essays

1. The RULER essays (~680K tokens, split into ~20K-character documents, bundled real model)
   are ingested into collection `essays` of the store (once; an existing store is reused).
2. `windowpack serve` starts on a free loopback port, as a separate process (uvicorn, one
   worker: one store per process, as users run it).
3. `--clients` threads (default 8), each with its own keep-alive HTTP connection, pack at
   B = `--budget` (128K) for `--seconds` (30) per phase:
   - cached: every request asks the same question (window-cache hits after the first);
   - uncached: every request a question never asked before (query embedding, retrieval,
     allocation, layout, exact count; the per-version state is shared, as in production);
   - the same two while an ingest runs: ingest jobs posted through the API one after another
     (4 essay parts again, each paragraph tagged with the round so every chunk is new text and
     the model embeds it), each publishing a new version that the packs then switch to. The
     server runs on a scratch copy of the store, so every run measures the same corpus.
   Per phase: requests/s, p50/p99 latency, errors (any non-200 or transport error; target 0),
   and the index versions the windows came from. The server's first pack (loading indexes
   and state) is timed apart, before the phases.

Figures go to `benchmarks/results/api.json`. `--smoke` runs every phase for a second over a
few essay parts with the hash embedder (store and server): a check, not figures.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
from bench_common import (
    ESSAYS_JSON,
    SMOKE_TOKENS,
    add_smoke_option,
    corpus_sentences,
    latency_stats,
    limit_tokens,
    load_corpus,
    machine_info,
    make_questions,
    reusable_store_folder,
    windowpack_server,
    write_results,
)

import windowpack as wp
from windowpack.text import get_token_counter

COLLECTION = "essays"
CACHED_QUESTION = "what does the author say about startups and investors"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="store folder to build or reuse")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--budget", type=int, default=128_000)
    add_smoke_option(parser)
    args = parser.parse_args()
    config, server = wp.StoreConfig(), []
    if args.smoke:
        args.clients, args.seconds, args.budget = 2, 1.0, 4_096
        config, server = wp.StoreConfig(embedder="hash"), ["--embedder", "hash"]
    with reusable_store_folder(args.store, "wp-api-") as folder:
        documents = load_corpus([ESSAYS_JSON], max_bytes=64 * 1024 * 1024).documents
        if args.smoke:
            counter = get_token_counter(config.tokenizer)
            documents = limit_tokens(documents, counter, 2 * SMOKE_TOKENS)
        _remove_ingest_rounds(folder, config)  # left by runs before the scratch copy
        _ensure_ingested(folder, documents, config)
        # The server runs on a scratch copy: the ingest phases add documents, and every run
        # should measure the same corpus.
        with tempfile.TemporaryDirectory(prefix="wp-api-run-") as scratch:
            copy = Path(scratch) / "store"
            shutil.copytree(folder, copy)
            with windowpack_server(copy, *server) as url:
                figures = _run_phases(url, documents, args)
    figures["machine"] = machine_info()
    print(f"results: {write_results('api', figures)}")


def _ensure_ingested(folder: Path, documents: list[wp.Document], config: wp.StoreConfig) -> None:
    started = time.perf_counter()
    with wp.open(folder, config=config) as store:
        report = store.collection(COLLECTION).add(documents)
        stats = store.collection(COLLECTION).stats()
    print(
        f"store {folder}: {stats.documents} documents, {stats.tokens:,} tokens "
        f"(added {report.added}, unchanged {report.unchanged}) in "
        f"{time.perf_counter() - started:.1f} s"
    )


def _remove_ingest_rounds(folder: Path, config: wp.StoreConfig) -> None:
    """Delete documents an ingest phase added (ids `round N/...`) to the store itself."""
    with wp.open(folder, config=config) as store:
        collection = store.collection(COLLECTION)
        try:
            documents = collection.documents()
        except wp.CollectionNotFoundError:  # a new store: its first add creates the collection
            return
        for info in documents:
            if info.id.startswith("round "):
                collection.delete(info.id)


@dataclasses.dataclass
class _Phase:
    latencies: list[float] = dataclasses.field(default_factory=list)
    errors: list[str] = dataclasses.field(default_factory=list)
    versions: set[int] = dataclasses.field(default_factory=set)
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


def _run_phases(url: str, documents: list[wp.Document], args: argparse.Namespace) -> dict[str, Any]:
    sentences = corpus_sentences([doc.text for doc in documents])
    fresh = iter(make_questions(sentences, 20_000, seed=7))
    fresh_lock = threading.Lock()

    def uncached() -> str:
        with fresh_lock:
            return next(fresh)

    def cached() -> str:
        return CACHED_QUESTION

    results: dict[str, Any] = {"budget": args.budget, "clients": args.clients}
    # The first pack of a server loads the indexes and the per-version state; timed apart so
    # the phases measure a running service.
    started = time.perf_counter()
    httpx.post(
        f"{url}/v1/collections/{COLLECTION}/pack",
        json={"query": "warm-up", "budget": args.budget},
        timeout=600,
    ).raise_for_status()
    results["first_pack_seconds"] = time.perf_counter() - started
    print(f"first pack (loads indexes and state): {results['first_pack_seconds']:.1f} s")
    for label, question in (("cached", cached), ("uncached", uncached)):
        results[label] = _phase(url, question, args)
    for label, question in (("cached", cached), ("uncached", uncached)):
        with _ingesting(url, documents) as ingested:
            results[f"{label}, ingest running"] = _phase(url, question, args)
        results[f"{label}, ingest running"]["ingest"] = ingested
    return results


def _phase(url: str, question: Callable[[], str], args: argparse.Namespace) -> dict[str, Any]:
    phase = _Phase()
    deadline = time.perf_counter() + args.seconds
    body = {"budget": args.budget}

    def client() -> None:
        with httpx.Client(base_url=url, timeout=120) as http:
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                try:
                    response = http.post(
                        f"/v1/collections/{COLLECTION}/pack", json={**body, "query": question()}
                    )
                    outcome = None if response.status_code == 200 else response.text[:200]
                except httpx.HTTPError as error:
                    response, outcome = None, repr(error)
                elapsed = time.perf_counter() - started
                with phase.lock:
                    if outcome is None and response is not None:
                        phase.latencies.append(elapsed)
                        window = response.json()
                        phase.versions.add(window["index_version"])
                        assert window["tokens"] <= args.budget
                    else:
                        phase.errors.append(outcome or "")

    started = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(args.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    stats = latency_stats(phase.latencies)
    figures = {
        "requests_per_second": len(phase.latencies) / seconds,
        "p50_ms": stats.get("p50_ms"),
        "p99_ms": stats.get("p99_ms"),
        "requests": len(phase.latencies),
        "errors": len(phase.errors),
        "error_examples": phase.errors[:3],
        "index_versions": sorted(phase.versions),
    }
    print(
        f"{question.__name__:>9}: {figures['requests_per_second']:.1f} req/s, "
        f"p50 {figures['p50_ms'] or 0:.1f} ms, p99 {figures['p99_ms'] or 0:.1f} ms, "
        f"{figures['errors']} errors, {figures['requests']} requests, "
        f"index versions {figures['index_versions']}",
        flush=True,
    )
    return figures


@contextlib.contextmanager
def _ingesting(url: str, documents: list[wp.Document]) -> Iterator[dict[str, Any]]:
    """Post ingest jobs through the API, one after another, until the block ends."""
    done = threading.Event()
    figures: dict[str, Any] = {"jobs": 0, "documents": 0, "tokens": 0, "failed": 0}

    def ingest() -> None:
        with httpx.Client(base_url=url, timeout=120) as http:
            while not done.is_set():
                figures["jobs"] += 1
                batch = _tagged(documents[:4], f"round {_next_round()}")
                response = http.post(
                    f"/v1/collections/{COLLECTION}/documents",
                    params={"background": True},
                    json={"documents": batch},
                )
                job = _finished_job(http, response.json()["id"])
                if job["status"] != "succeeded":
                    figures["failed"] += 1
                figures["documents"] += job["documents"]
                figures["tokens"] += job["tokens"]

    thread = threading.Thread(target=ingest)
    started = time.perf_counter()
    thread.start()
    try:
        yield figures
    finally:
        done.set()
        thread.join()
        seconds = time.perf_counter() - started
        figures["tokens_per_second"] = figures["tokens"] / seconds
        print(
            f"   ingest: {figures['jobs']} jobs, {figures['documents']} documents, "
            f"{figures['tokens']:,} tokens ({figures['tokens_per_second']:,.0f} tokens/s), "
            f"{figures['failed']} failed",
            flush=True,
        )


_ROUNDS = iter(range(1, 1_000_000))


def _next_round() -> int:
    return next(_ROUNDS)


def _tagged(documents: list[wp.Document], tag: str) -> list[dict[str, Any]]:
    """The documents again under new ids, each paragraph tagged: every chunk is new text."""
    return [
        {
            "id": f"{tag}/{(doc.id or '').lstrip('/')}",
            "title": doc.title,
            "text": "\n\n".join(f"[{tag}] {part}" for part in doc.text.split("\n\n")),
        }
        for doc in documents
    ]


def _finished_job(http: httpx.Client, job_id: str) -> dict[str, Any]:
    while True:
        job: dict[str, Any] = http.get(f"/v1/jobs/{job_id}").json()
        if job["status"] in {"succeeded", "failed"}:
            return job
        time.sleep(0.2)


if __name__ == "__main__":
    main()
