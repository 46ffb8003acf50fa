"""Ingest jobs over HTTP: how long a job waits for a worker, and how many 1 and 2 workers run.

    .venv/bin/python benchmarks/jobs.py
    .venv/bin/python benchmarks/jobs.py --postgres postgresql+psycopg://postgres@127.0.0.1:5432/test

Throughput, for each layout of `--collections` (default 1 and 4: every job to one collection,
or the jobs round-robin over four; writes to one collection are serialised by its version's
row lock) and each count of `--workers` (default 1 and 2): a fresh store (hash embedder; SQLite
in a temporary folder, or with `--postgres` a scratch database on that server, dropped
afterwards, and an index folder per process), `windowpack serve --workers 0` and that many
`windowpack worker --poll-seconds P` processes (`--poll-seconds`, default 1, the command's
own). One direct write per collection first creates it (untimed). Then `--jobs` (40)
background writes (`?background=true`, 202), posted one after another, each of 3 documents of
~`--document-tokens` (1,500) tokens of essay text with every paragraph tagged with its job and
document, so that all of it is new text (no embedding-cache hits); then a wait for all of them.
Reported from the job records: enqueue-to-start latency (`started_at - created_at`) p50/p99,
a job's run (`finished_at - started_at`) median, jobs/s and documents/s over the wall time from
the first POST to the last `finished_at` (and jobs/s from the first `started_at`, without the
idle workers' first look at the queue), and failed jobs.

Idle latency, for each value of `--idle-poll-seconds` (default 1 and 0.05): a fresh store and
one worker; `--idle` (10) jobs of the same shape, one at a time, each posted after the previous
one ended and a pause drawn from [0.1 s, 0.1 s + the poll interval] (seeded), so that the POST
lands anywhere in the worker's sleep. Reported: seconds from the POST to the job's `started_at`
and to its `finished_at`, median and max. On SQLite a worker outside the server looks at the
table every poll interval; on PostgreSQL the enqueueing transaction's NOTIFY wakes it.

The server, the workers and this client share the machine's cores. Figures go to
`benchmarks/results/jobs.json`. `--smoke`: 3 jobs of 300-token documents, 1 worker, one
collection, 2 idle jobs: a check, not figures.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import os
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from bench_common import (
    ESSAYS_JSON,
    add_smoke_option,
    corpus_sentences,
    latency_stats,
    load_corpus,
    scratch_postgres,
    windowpack_server,
    windowpack_worker,
    write_results,
)

from windowpack.text import get_token_counter

DOCUMENTS_PER_JOB = 3
SENTENCES_PER_PARAGRAPH = 6
Batch = list[dict[str, Any]]
"""The documents of one write, as the REST body lists them."""


@dataclasses.dataclass(frozen=True)
class StoreAt:
    """Where a run's store is: its `--store` value, and the root of the index folders that a
    store on a database URL needs (one per process); None for a SQLite folder."""

    store: str
    index_root: Path | None = None

    def index_options(self, process: str) -> list[str]:
        """`--index-dir` for the process named `process`, on a database URL; else none."""
        if self.index_root is None:
            return []
        return ["--index-dir", str(self.index_root / process)]


@dataclasses.dataclass(frozen=True)
class Posted:
    """A job as posted: its id and the wall clock (`time.time()`) just before the POST."""

    id: str
    posted_at: float


def main() -> None:
    args = _parse_args()
    batches = _job_batches(args)
    tokens = args.document_tokens
    print(
        f"{len(batches)} writes of {DOCUMENTS_PER_JOB} documents of ~{tokens:,} tokens; "
        f"store: {'PostgreSQL' if args.postgres else 'SQLite'}",
        flush=True,
    )
    runs = [
        _throughput(args, batches[: args.jobs], collections, workers)
        for collections in args.collections
        for workers in args.workers
    ]
    idle = [_idle(args, batches[: args.idle], poll) for poll in args.idle_poll_seconds]
    figures = {
        "store": "postgresql" if args.postgres else "sqlite",
        "jobs": args.jobs,
        "documents_per_job": DOCUMENTS_PER_JOB,
        "document_tokens": tokens,
        "poll_seconds": args.poll_seconds,
        "throughput": runs,
        "idle": idle,
        "cpus": os.cpu_count(),
    }
    print(f"results: {write_results('jobs', figures)}")


def _throughput(
    args: argparse.Namespace, batches: list[Batch], collections: int, workers: int
) -> dict[str, Any]:
    """`batches` posted as background jobs over `collections` collections to a server with
    `workers` worker processes; their figures, printed as well."""
    names = [f"jobs-{number}" for number in range(collections)]
    load_start = os.getloadavg()[0]
    with (
        _fresh_store(args) as at,
        _service(at, workers, args.poll_seconds) as url,
        httpx.Client(base_url=url, timeout=600) as http,
    ):
        for name in names:  # untimed
            _create(http, name)
        posted = [_post(http, names[n % collections], batch) for n, batch in enumerate(batches)]
        jobs = _wait_all(http, posted)
    figures = _throughput_figures(posted, jobs)
    figures |= {"collections": collections, "workers": workers}
    figures["load_average"] = {"start": load_start, "end": os.getloadavg()[0]}
    start_latency = figures["start_latency"]
    print(
        f"{workers} worker(s), {collections} collection(s): {len(jobs)} jobs in "
        f"{figures['wall_s']:.1f} s, {figures['jobs_per_s']:.2f} jobs/s, "
        f"{figures['documents_per_s']:.1f} documents/s ({figures['busy_jobs_per_s']:.2f} "
        f"jobs/s from the first start); enqueue to start p50 "
        f"{start_latency.get('p50_ms', 0) / 1000:.2f} s, p99 "
        f"{start_latency.get('p99_ms', 0) / 1000:.2f} s; a job's run: median "
        f"{figures['run_s']['median']:.2f} s; failed: {figures['failed']}; load average "
        f"{load_start:.2f} -> {figures['load_average']['end']:.2f}",
        flush=True,
    )
    return figures


def _throughput_figures(posted: list[Posted], jobs: list[dict[str, Any]]) -> dict[str, Any]:
    created = [_epoch(job["created_at"]) for job in jobs]
    started = [_epoch(job["started_at"]) for job in jobs]
    finished = [_epoch(job["finished_at"]) for job in jobs]
    wall = max(finished) - min(job.posted_at for job in posted)
    # From the first start: without the idle workers' first look at the queue (up to a poll).
    busy = max(finished) - min(started)
    runs = [end - start for start, end in zip(started, finished, strict=True)]
    return {
        "wall_s": wall,
        "jobs_per_s": len(jobs) / wall,
        "documents_per_s": len(jobs) * DOCUMENTS_PER_JOB / wall,
        "busy_s": busy,
        "busy_jobs_per_s": len(jobs) / busy,
        "start_latency": latency_stats(
            [start - made for made, start in zip(created, started, strict=True)]
        ),
        "run_s": _median_max(runs),
        "failed": sum(job["status"] != "succeeded" for job in jobs),
        "attempts_max": max(job["attempts"] for job in jobs),
    }


def _idle(args: argparse.Namespace, batches: list[Batch], poll_seconds: float) -> dict[str, Any]:
    """`batches` one at a time, each posted to an idle worker; from the POST to each job's
    start and end."""
    pause = random.Random(0)
    to_start, to_done = [], []
    with (
        _fresh_store(args) as at,
        _service(at, 1, poll_seconds) as url,
        httpx.Client(base_url=url, timeout=600) as http,
    ):
        _create(http, "idle")
        for batch in batches:
            time.sleep(pause.uniform(0.1, 0.1 + poll_seconds))
            posted = _post(http, "idle", batch)
            (job,) = _wait_all(http, [posted])
            to_start.append(_epoch(job["started_at"]) - posted.posted_at)
            to_done.append(_epoch(job["finished_at"]) - posted.posted_at)
    start, done = _median_max(to_start), _median_max(to_done)
    print(
        f"idle worker (poll every {poll_seconds:g} s), {len(batches)} jobs one at a time: from "
        f"the POST to the start median {start['median']:.2f} s (max {start['max']:.2f}), to "
        f"done median {done['median']:.2f} s (max {done['max']:.2f})",
        flush=True,
    )
    samples = {"to_start_s": to_start, "to_done_s": to_done}
    figures = {"poll_seconds": poll_seconds, "to_start_s": start, "to_done_s": done}
    return figures | {"samples": samples}


def _median_max(seconds: list[float]) -> dict[str, float]:
    return {"median": statistics.median(seconds), "max": max(seconds)}


@contextlib.contextmanager
def _fresh_store(args: argparse.Namespace) -> Iterator[StoreAt]:
    """A new, empty store: a SQLite folder, or a scratch database on `--postgres`."""
    with tempfile.TemporaryDirectory(prefix="wp-jobs-") as folder:
        if not args.postgres:
            yield StoreAt(str(Path(folder) / "store"))
            return
        with scratch_postgres(args.postgres, "windowpack_jobs_") as url:
            yield StoreAt(url, Path(folder))


@contextlib.contextmanager
def _service(at: StoreAt, workers: int, poll_seconds: float) -> Iterator[str]:
    """`windowpack serve --workers 0` over `at` and `workers` worker processes: its URL."""
    server = [*at.index_options("server"), "--embedder", "hash", "--workers", "0"]
    server += ["--log-level", "warning", "--no-access-log"]
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(windowpack_server(at.store, *server))
        for number in range(workers):
            options = [*at.index_options(f"worker-{number}"), "--embedder", "hash"]
            options += ["--poll-seconds", str(poll_seconds)]
            stack.enter_context(windowpack_worker(at.store, *options))
        yield url


def _create(http: httpx.Client, collection: str) -> None:
    """The collection, with one document written now (the first job a worker runs on it)."""
    response = http.post("/v1/collections", json={"name": collection})
    assert response.status_code == 201, f"create: {response.status_code} {response.text[:200]}"
    documents = [{"id": "first", "text": f"The first document of {collection}."}]
    response = http.post(f"/v1/collections/{collection}/documents", json={"documents": documents})
    assert response.status_code == 200, f"write: {response.status_code} {response.text[:200]}"


def _post(http: httpx.Client, collection: str, documents: Batch) -> Posted:
    posted_at = time.time()
    response = http.post(
        f"/v1/collections/{collection}/documents",
        params={"background": "true"},
        json={"documents": documents},
    )
    assert response.status_code == 202, f"post: {response.status_code} {response.text[:200]}"
    return Posted(id=response.json()["id"], posted_at=posted_at)


def _wait_all(http: httpx.Client, posted: list[Posted]) -> list[dict[str, Any]]:
    """Each job's record once it has ended, in `posted` order. One request at a time, every
    0.1 s at most, so the waiting adds little load: the figures come from the records."""
    ended: list[dict[str, Any]] = []
    for job in posted:
        while True:
            response = http.get(f"/v1/jobs/{job.id}")
            assert response.status_code == 200, f"job {job.id}: {response.status_code}"
            record = response.json()
            if record["status"] in ("succeeded", "failed"):
                ended.append(record)
                break
            time.sleep(0.1)
    return ended


def _epoch(timestamp: str) -> float:
    """An ISO 8601 time from a job record (UTC, with its offset) as seconds since the epoch,
    the clock of `time.time()`: the server, the workers and this script share one machine."""
    return datetime.fromisoformat(timestamp).timestamp()


def _job_batches(args: argparse.Namespace) -> list[Batch]:
    """`max(--jobs, --idle)` writes of 3 documents of ~`--document-tokens` tokens each: essay
    paragraphs in turn, each tagged with its job and document so that no two share text."""
    counter = get_token_counter("o200k_base")
    corpus = load_corpus([ESSAYS_JSON], max_bytes=64 * 1024 * 1024)
    sentences = corpus_sentences([document.text for document in corpus.documents])
    paragraphs = [
        " ".join(sentences[first : first + SENTENCES_PER_PARAGRAPH])
        for first in range(0, len(sentences), SENTENCES_PER_PARAGRAPH)
    ]
    stream = itertools.cycle(zip(paragraphs, counter.count_many(paragraphs), strict=True))
    batches = []
    for job in range(max(args.jobs, args.idle)):
        batch = []
        for number in range(DOCUMENTS_PER_JOB):
            tag, parts, tokens = f"[job {job}, document {number}]", [], 0
            while tokens < args.document_tokens:
                paragraph, count = next(stream)
                parts.append(f"{tag} {paragraph}")
                tokens += count + 8  # and the tag's
            batch.append({"id": f"job-{job}/document-{number}", "text": "\n\n".join(parts)})
        batches.append(batch)
    return batches


def _numbers(kind: type[Any]) -> Any:
    return lambda text: [kind(part) for part in text.split(",")]


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=40, help="background writes per run")
    parser.add_argument("--document-tokens", type=int, default=1_500)
    parser.add_argument("--workers", type=_numbers(int), default=[1, 2], help="e.g. 1,2")
    parser.add_argument("--collections", type=_numbers(int), default=[1, 4], help="e.g. 1,4")
    parser.add_argument("--poll-seconds", type=float, default=1.0, help="workers' poll interval")
    parser.add_argument("--idle", type=int, default=10, help="jobs posted to an idle worker")
    parser.add_argument(
        "--idle-poll-seconds", type=_numbers(float), default=[1.0, 0.05], help="e.g. 1,0.05"
    )
    parser.add_argument("--postgres", help="admin URL of a PostgreSQL server: run on it")
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.jobs, args.document_tokens, args.workers, args.collections = 3, 300, [1], [1]
        args.idle, args.idle_poll_seconds = 2, [0.05]
    return args


if __name__ == "__main__":
    main()
