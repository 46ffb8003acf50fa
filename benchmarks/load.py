"""Packs under a writer, over HTTP: 8 packing clients (4 at 8K, 4 at 128K) and one writer.

    .venv/bin/python benchmarks/load.py --store /tmp/wp-load-1m          # keep the store
    .venv/bin/python benchmarks/load.py --store /tmp/wp-load-1m --seconds 60

1. A ~1M-token store with the hash embedder (model-free vectors: the load is the point, not
   retrieval quality): the RULER essays split into ~20K-character documents, the NIAH essays,
   and essay parts again under `copy-N/` ids (`bench_common.essay_corpus`). Built once;
   reused with `--store`. The server runs on a scratch copy, so each run starts equal.
2. `windowpack serve --embedder hash` on a loopback port (uvicorn, one process; the server's
   defaults: snapshot reads on, a 256 MiB window cache unless `--window-cache-mib`).
3. Writes alone: `--alone` synchronous writes of 2 essay parts each (every paragraph tagged
   with the write's number, so all of it is new text), timed one by one.
4. Load for `--seconds`: 8 threads with their own keep-alive connections pack questions never
   asked before (4 at B = 8,192, 4 at B = 131,072), while one thread writes as in 3 without
   pause. Every window is checked to fit its budget.
Printed: errors (non-200 or transport), pack p50/p99 per budget, the index versions packs came
from, write seconds alone and under load (median and max), and the server's RSS (sampled
every 0.5 s: peak, end; and the kernel's high-water mark). Figures go to
`benchmarks/results/load.json`. Targets: 0 errors, p99 <= 1 s at 8K and <= 2 s at 128K,
writes under load <= 2x alone, RSS bounded by the cache setting. `--smoke` runs it for a
second over a few thousand tokens, one write alone: a check, not figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import os
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from bench_common import (
    SERVER_PIDS,
    SMOKE_TOKENS,
    add_smoke_option,
    corpus_sentences,
    essay_corpus,
    latency_stats,
    machine_info,
    make_questions,
    reusable_store_folder,
    windowpack_server,
    write_results,
)

import windowpack as wp
from windowpack.text import get_token_counter

COLLECTION = "essays"
BUDGETS = (8_192, 131_072)
CONFIG = wp.StoreConfig(embedder="hash")


def main() -> None:
    args = _parse_args()
    if args.window_cache_mib is not None:  # the server reads it from its environment
        os.environ["WINDOWPACK_WINDOW_CACHE_BYTES"] = str(args.window_cache_mib * 1024 * 1024)
    corpus = essay_corpus(
        get_token_counter("o200k_base"),
        target_tokens=args.tokens,
        max_bytes=64 * 1024 * 1024,
        source_tokens=SMOKE_TOKENS if args.smoke else None,
    )
    print(f"corpus: {corpus.description}", flush=True)
    with reusable_store_folder(args.store, "wp-load-") as folder:
        _ensure_ingested(folder, corpus.documents)
        with tempfile.TemporaryDirectory(prefix="wp-load-run-") as scratch:
            copy = Path(scratch) / "store"
            shutil.copytree(folder, copy)
            options = ["--embedder", "hash", "--log-level", "warning", "--no-access-log"]
            with windowpack_server(copy, *options) as url:
                figures = _run(url, corpus.documents, args, SERVER_PIDS[-1])
    figures |= {"corpus": corpus.description, "machine": machine_info()}
    print(f"results: {write_results('load', figures)}")


def _ensure_ingested(folder: Path, documents: list[wp.Document]) -> None:
    started = time.perf_counter()
    with wp.open(folder, config=CONFIG) as store:
        report = store.collection(COLLECTION).add(documents)
        stats = store.collection(COLLECTION).stats()
    print(
        f"store {folder}: {stats.documents} documents, {stats.tokens:,} tokens (added "
        f"{report.added}) in {time.perf_counter() - started:.1f} s",
        flush=True,
    )


@dataclasses.dataclass
class _Tally:
    latencies: dict[int, list[float]] = dataclasses.field(
        default_factory=lambda: {b: [] for b in BUDGETS}
    )
    errors: list[str] = dataclasses.field(default_factory=list)
    versions: set[int] = dataclasses.field(default_factory=set)
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


def _run(url: str, documents: list[wp.Document], args: argparse.Namespace, pid: int) -> Any:
    questions = iter(make_questions(corpus_sentences([d.text for d in documents]), 50_000, 11))
    lock = threading.Lock()

    def question() -> str:
        with lock:
            return next(questions)

    writes = _writes(documents)
    with httpx.Client(base_url=url, timeout=600) as http:
        for budget in BUDGETS:  # the first packs load the state: timed apart
            started = time.perf_counter()
            _pack(http, question(), budget)
            print(f"first pack at {budget:,}: {time.perf_counter() - started:.1f} s", flush=True)
        alone = [_write(http, next(writes)) for _ in range(args.alone)]
    print(f"writes alone: {_fmt(alone)}", flush=True)
    tally, under_load, rss = _load(url, question, writes, args, pid)
    figures: dict[str, Any] = {"seconds": args.seconds, "errors": len(tally.errors)}
    for budget in BUDGETS:
        stats = latency_stats(tally.latencies[budget])
        figures[f"pack_{budget}"] = {"packs": len(tally.latencies[budget]), **stats}
        print(
            f"pack at {budget:>7,}: {len(tally.latencies[budget])} packs, p50 "
            f"{stats.get('p50_ms', 0):.0f} ms, p99 {stats.get('p99_ms', 0):.0f} ms",
            flush=True,
        )
    figures |= {"writes_alone_s": alone, "writes_under_load_s": under_load, "rss_mib": rss}
    figures["index_versions"] = sorted(tally.versions)
    print(
        f"errors: {len(tally.errors)} {tally.errors[:3]}; index versions packed: "
        f"{sorted(tally.versions)}\nwrites under load: {_fmt(under_load)} (alone: median "
        f"{statistics.median(alone):.2f} s)\nserver RSS: peak {rss['peak']:.0f} MiB, end "
        f"{rss['end']:.0f} MiB, high-water mark {rss['hwm']:.0f} MiB",
        flush=True,
    )
    return figures


def _load(
    url: str, question: Any, writes: Iterator[list[dict[str, Any]]], args: Any, pid: int
) -> tuple[_Tally, list[float], dict[str, float]]:
    tally, under_load, samples = _Tally(), [], []
    deadline = time.perf_counter() + args.seconds
    done = threading.Event()

    def packer(budget: int) -> None:
        with httpx.Client(base_url=url, timeout=120) as http:
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                try:
                    version = _pack(http, question(), budget)
                except (httpx.HTTPError, AssertionError) as error:
                    with tally.lock:
                        tally.errors.append(repr(error)[:200])
                    continue
                with tally.lock:
                    tally.latencies[budget].append(time.perf_counter() - started)
                    tally.versions.add(version)

    def writer() -> None:
        with httpx.Client(base_url=url, timeout=600) as http:
            while time.perf_counter() < deadline:
                under_load.append(_write(http, next(writes)))

    def sampler() -> None:
        while not done.is_set():
            samples.append(_rss_mib(pid, "VmRSS"))
            done.wait(0.5)

    threads = [threading.Thread(target=packer, args=(b,)) for b in BUDGETS for _ in range(4)]
    threads += [threading.Thread(target=writer)]
    watcher = threading.Thread(target=sampler)
    watcher.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    watcher.join()
    rss = {"peak": max(samples), "end": samples[-1], "hwm": _rss_mib(pid, "VmHWM")}
    return tally, under_load, rss


def _pack(http: httpx.Client, query: str, budget: int) -> int:
    response = http.post(
        f"/v1/collections/{COLLECTION}/pack", json={"query": query, "budget": budget}
    )
    assert response.status_code == 200, f"{response.status_code}: {response.text[:200]}"
    window = response.json()
    assert window["tokens"] <= budget, f"{window['tokens']} tokens over a budget of {budget}"
    return int(window["index_version"])


def _write(http: httpx.Client, documents: list[dict[str, Any]]) -> float:
    started = time.perf_counter()
    response = http.post(f"/v1/collections/{COLLECTION}/documents", json={"documents": documents})
    assert response.status_code == 200, f"write: {response.status_code} {response.text[:200]}"
    return time.perf_counter() - started


def _writes(documents: list[wp.Document]) -> Iterator[list[dict[str, Any]]]:
    """Writes of 2 essay parts each, every paragraph tagged with the write: all new text."""
    for number in itertools.count(1):
        tag = f"write {number}"
        yield [
            {
                "id": f"{tag}/{(doc.id or '').lstrip('/')}",
                "text": "\n\n".join(f"[{tag}] {part}" for part in doc.text.split("\n\n")),
            }
            for doc in documents[_first(number, documents) : _first(number, documents) + 2]
        ]


def _first(number: int, documents: list[wp.Document]) -> int:
    """Where write `number`'s 2 documents start: the first 40 in turn (all, if fewer)."""
    return 2 * number % min(40, max(1, len(documents) - 1))


def _rss_mib(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def _fmt(seconds: list[float]) -> str:
    if not seconds:
        return "none finished"
    median = statistics.median(seconds)
    return f"{len(seconds)} writes, median {median:.2f} s, max {max(seconds):.2f} s"


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="store folder to build or reuse")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--tokens", type=int, default=1_000_000, help="corpus size")
    parser.add_argument("--alone", type=int, default=3, help="writes timed alone first")
    parser.add_argument("--window-cache-mib", type=int, help="the server's window cache bound")
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.seconds, args.tokens, args.alone = 1.0, 2 * SMOKE_TOKENS, 1
    return args


if __name__ == "__main__":
    main()
