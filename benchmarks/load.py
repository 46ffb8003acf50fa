"""Packs with and without a writer, over HTTP: 8 packing clients (4 at 8K, 4 at 128K) alone,
then the same 8 beside one writer, whose ingest runs in a worker process or in the server.

    .venv/bin/python benchmarks/load.py --store /tmp/wp-load-1m --seconds 60   # keep the store
    .venv/bin/python benchmarks/load.py --store /tmp/wp-load-1m --seconds 60 --writer server

1. A ~1M-token store with the hash embedder (model-free vectors: the load is the point, not
   retrieval quality): the RULER essays split into ~20K-character documents, the NIAH essays,
   and essay parts again under `copy-N/` ids (`bench_common.essay_corpus`). Built once;
   reused with `--store`. The server runs on a scratch copy, so each run starts equal.
2. `windowpack serve --embedder hash` on a loopback port (uvicorn, one process; the server's
   defaults: snapshot reads on, a 256 MiB window cache unless `--window-cache-mib`). With
   `--writer worker` (the default) the server runs with `--workers 0` and a `windowpack
   worker --embedder hash --poll-seconds 0.05` process beside it, on the same scratch copy,
   does every write's ingest: the server queues each write as a job and waits for it. With
   `--writer server` the server's own worker thread does it, in the serving process.
3. Writes alone: a first synchronous write of 2 essay parts (every paragraph tagged with the
   write's number, so all of it is new text), timed apart (a worker process loads the
   collection's state at its first job), then `--alone` more, timed one by one; then one
   untimed pack per budget, so that the next phase starts on the state those writes made.
4. Reads without a writer for `--seconds`: 8 threads with their own keep-alive connections
   pack questions never asked before (4 at B = 8,192, 4 at B = 131,072).
5. Reads with a writer for `--seconds`: the same 8 threads, and one thread writing as in 3
   without pause. Every window of both phases is checked to fit its budget.
Printed: per phase, errors and pack p50/p99 per budget, and the p99 with a writer over the p99
without; write seconds alone and under load (median and max) and their ratios; the index
versions packs came from; the RSS of the server and of the worker (sampled every 0.5 s: peak,
end; and the kernel's high-water mark); the load average as each phase starts and ends. Goals,
printed beside the figures: 0 errors; the p99 with a writer <= 2x the p99 without, at 8K and at
128K; a write under load <= 3x a write alone (medians). Figures go to
`benchmarks/results/load-<writer>.json`. `--smoke` runs each phase for a second over a few
thousand tokens, one write alone: a check, not figures.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import os
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
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
    windowpack_worker,
    write_results,
)

import windowpack as wp
from windowpack.text import get_token_counter

COLLECTION = "essays"
BUDGETS = (8_192, 131_072)
CONFIG = wp.StoreConfig(embedder="hash")
Pids = dict[str, int]
"""Process ids to sample, by what the process is ("server", "worker")."""


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
    print(f"corpus: {corpus.description}; writer: {args.writer}", flush=True)
    with reusable_store_folder(args.store, "wp-load-") as folder:
        _ensure_ingested(folder, corpus.documents)
        with tempfile.TemporaryDirectory(prefix="wp-load-run-") as scratch:
            copy = Path(scratch) / "store"
            shutil.copytree(folder, copy)
            with _serving(copy, args.writer) as (url, pids):
                figures = _run(url, corpus.documents, args, pids)
    figures |= {"corpus": corpus.description, "machine": machine_info()}
    print(f"results: {write_results(f'load-{args.writer}', figures)}")


@contextlib.contextmanager
def _serving(copy: Path, writer: str) -> Iterator[tuple[str, dict[str, int]]]:
    """The server over `copy`, and for `writer` "worker" a worker process beside it that does
    the ingest (the server then runs none): its URL and the pids to sample by name."""
    options = ["--embedder", "hash", "--log-level", "warning", "--no-access-log"]
    if writer == "server":
        with windowpack_server(copy, *options) as url:
            yield url, {"server": SERVER_PIDS[-1]}
        return
    worker_options = ["--embedder", "hash", "--poll-seconds", "0.05"]
    with (
        windowpack_server(copy, *options, "--workers", "0") as url,
        windowpack_worker(copy, *worker_options) as worker_pid,
    ):
        yield url, {"server": SERVER_PIDS[-1], "worker": worker_pid}


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
    writes: list[float] = dataclasses.field(default_factory=list)
    rss: dict[str, dict[str, float]] = dataclasses.field(default_factory=dict)
    load_average: dict[str, float] = dataclasses.field(default_factory=dict)
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


def _run(url: str, documents: list[wp.Document], args: argparse.Namespace, pids: Pids) -> Any:
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
        # A worker process loads the collection's state at its first write: timed apart.
        first_write = _write(http, next(writes))
        print(f"first write: {first_write:.2f} s", flush=True)
        alone = [_write(http, next(writes)) for _ in range(args.alone)]
        for budget in BUDGETS:  # onto the version the writes made before the timing starts
            _pack(http, question(), budget)
    print(f"writes alone: {_fmt(alone)}", flush=True)
    phases = {
        "without_writer": _load(url, question, None, args.seconds, pids),
        "with_writer": _load(url, question, writes, args.seconds, pids),
    }
    figures: dict[str, Any] = {"writer": args.writer, "seconds": args.seconds}
    figures["first_write_s"] = first_write
    figures |= {name: _phase_figures(name, tally) for name, tally in phases.items()}
    figures |= _comparison(phases, alone)
    return figures


def _phase_figures(name: str, tally: _Tally) -> dict[str, Any]:
    """A phase's figures, printed as well."""
    figures: dict[str, Any] = {"errors": len(tally.errors), "error_examples": tally.errors[:3]}
    lines = [f"{name.replace('_', ' ')}: {len(tally.errors)} errors {tally.errors[:3]}"]
    for budget in BUDGETS:
        stats = latency_stats(tally.latencies[budget])
        figures[f"pack_{budget}"] = {"packs": len(tally.latencies[budget]), **stats}
        lines.append(
            f"  pack at {budget:>7,}: {len(tally.latencies[budget])} packs, p50 "
            f"{stats.get('p50_ms', 0):.0f} ms, p99 {stats.get('p99_ms', 0):.0f} ms"
        )
    figures |= {"index_versions": sorted(tally.versions), "writes_s": tally.writes}
    figures |= {"rss_mib": tally.rss, "load_average": tally.load_average}
    lines.append(f"  index versions packed: {sorted(tally.versions)}")
    lines += [
        f"  {process} RSS: peak {rss['peak']:.0f} MiB, end {rss['end']:.0f} MiB, high-water "
        f"mark {rss['hwm']:.0f} MiB"
        for process, rss in tally.rss.items()
    ]
    lines.append(
        f"  load average: {tally.load_average['start']:.2f} at the start, "
        f"{tally.load_average['end']:.2f} at the end"
    )
    print("\n".join(lines), flush=True)
    return figures


def _comparison(phases: dict[str, _Tally], alone: list[float]) -> dict[str, Any]:
    """With a writer against without: the p99 ratios per budget and the write-time ratios,
    each printed beside its goal."""
    without, loaded = phases["without_writer"], phases["with_writer"]
    ratios: dict[str, float | None] = {}
    lines = []
    for budget in BUDGETS:
        ratio = _ratio(_p99(loaded, budget), _p99(without, budget))
        ratios[f"p99_{budget}"] = ratio
        lines.append(
            f"p99 at {budget:>7,}: {_p99(without, budget):.0f} ms without a writer, "
            f"{_p99(loaded, budget):.0f} ms with one: {_times(ratio)} (goal <= 2x: "
            f"{_verdict(ratio, 2)})"
        )
    under_load = loaded.writes
    median_ratio = _ratio(_median(under_load), _median(alone))
    ratios["write_median"] = median_ratio
    ratios["write_max"] = _ratio(max(under_load, default=None), max(alone, default=None))
    lines.append(
        f"writes alone: {_fmt(alone)}; under load: {_fmt(under_load)}; median "
        f"{_times(median_ratio)}, max {_times(ratios['write_max'])} (goal <= 3x: "
        f"{_verdict(median_ratio, 3)})"
    )
    print("\n".join(lines), flush=True)
    return {"writes_alone_s": alone, "writes_under_load_s": under_load, "ratios": ratios}


def _load(
    url: str,
    question: Callable[[], str],
    writes: Iterator[list[dict[str, Any]]] | None,
    seconds: float,
    pids: Pids,
) -> _Tally:
    """Eight packers for `seconds` (and a writer, when `writes` are given); RSS of each of
    `pids` sampled every 0.5 s."""
    tally = _Tally(load_average={"start": os.getloadavg()[0]})
    samples: dict[str, list[float]] = {name: [] for name in pids}
    deadline = time.perf_counter() + seconds
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

    def writer(writes: Iterator[list[dict[str, Any]]]) -> None:
        with httpx.Client(base_url=url, timeout=600) as http:
            while time.perf_counter() < deadline:
                tally.writes.append(_write(http, next(writes)))

    def sampler() -> None:
        while not done.is_set():
            for name, pid in pids.items():
                samples[name].append(_rss_mib(pid, "VmRSS"))
            done.wait(0.5)

    threads = [threading.Thread(target=packer, args=(b,)) for b in BUDGETS for _ in range(4)]
    if writes is not None:
        threads.append(threading.Thread(target=writer, args=(writes,)))
    watcher = threading.Thread(target=sampler)
    watcher.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    watcher.join()
    tally.rss = {
        name: {"peak": max(values), "end": values[-1], "hwm": _rss_mib(pids[name], "VmHWM")}
        for name, values in samples.items()
    }
    tally.load_average["end"] = os.getloadavg()[0]
    return tally


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


def _p99(tally: _Tally, budget: int) -> float:
    return latency_stats(tally.latencies[budget]).get("p99_ms", 0.0)


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    """`numerator / denominator`, or None when either is missing or the denominator is 0."""
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def _times(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.2f}x"


def _verdict(ratio: float | None, goal: float) -> str:
    if ratio is None:
        return "not measured"
    return "met" if ratio <= goal else "missed"


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
    parser.add_argument("--alone", type=int, default=5, help="writes timed alone first")
    parser.add_argument("--window-cache-mib", type=int, help="the server's window cache bound")
    parser.add_argument(
        "--writer",
        choices=("server", "worker"),
        default="worker",
        help="who does the writes' ingest: a `windowpack worker` process beside a server run "
        "with --workers 0, or the server's own worker thread",
    )
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.seconds, args.tokens, args.alone = 1.0, 2 * SMOKE_TOKENS, 1
    return args


if __name__ == "__main__":
    main()
