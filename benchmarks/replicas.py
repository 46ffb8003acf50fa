"""Two replicas on one PostgreSQL database: how soon a write through one is served by the other.

    .venv/bin/python benchmarks/replicas.py                       # ~1M tokens, 10 writes
    .venv/bin/python benchmarks/replicas.py --tokens 300000 --writes 20

1. A scratch PostgreSQL database (created on `--admin-url`, dropped at the end) filled through
   the library with `--tokens` of the essays (`bench_common.essay_corpus`, hash embedder:
   model-free vectors, the switch is the point).
2. `windowpack serve` twice (A and B: each its own index folder, the server defaults:
   snapshot reads, a version watcher woken by NOTIFY). B's first search and pack load the
   collection (timed apart: B's index folder is empty, so it builds from the database).
3. `--readers` threads pack through B without pause (B = 8,192, questions never asked before)
   while `--writes` documents of ~5K tokens (an essay part, each paragraph tagged with a word
   of its own) are written through A one after another, then one of them deleted. After each
   write returns, B is searched every 20 ms for its word: the delay until B serves it.
Printed: the delays (p50, max), A's write time, B's pack p50/p99 while it switched, every
failed request, and the versions B's packs came from. Target (README): visible within 5 s,
no request fails. Figures go to `benchmarks/results/replicas.json`. `--smoke`: a few thousand
tokens, one write, one reader (a check, not figures; skipped without a PostgreSQL server).
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from bench_common import (
    POSTGRES_ADMIN_URL,
    SMOKE_TOKENS,
    add_smoke_option,
    corpus_sentences,
    essay_corpus,
    latency_stats,
    machine_info,
    make_questions,
    scratch_postgres,
    windowpack_server,
    write_results,
)

import windowpack as wp
from windowpack.text import get_token_counter

COLLECTION = "essays"
BUDGET = 8_192
SERVER = ["--embedder", "hash", "--log-level", "warning", "--no-access-log"]


def main() -> None:
    args = _parse_args()
    corpus = essay_corpus(
        get_token_counter("o200k_base"),
        target_tokens=args.tokens,
        max_bytes=64 * 1024 * 1024,
        source_tokens=SMOKE_TOKENS if args.smoke else None,
    )
    print(f"corpus: {corpus.description}", flush=True)
    with (
        scratch_postgres(args.admin_url, "windowpack_bench_") as url,
        tempfile.TemporaryDirectory() as scratch,
    ):
        folder = Path(scratch)
        started = time.perf_counter()
        with wp.open(
            url, index_dir=folder / "build", config=wp.StoreConfig(embedder="hash")
        ) as store:
            store.collection(COLLECTION).add(corpus.documents)
        print(f"filled in {time.perf_counter() - started:.1f} s", flush=True)
        with (
            windowpack_server(url, "--index-dir", str(folder / "a"), *SERVER) as a,
            windowpack_server(url, "--index-dir", str(folder / "b"), *SERVER) as b,
        ):
            figures = _run(a, b, corpus.documents, args)
    figures |= {"corpus": corpus.description, "machine": machine_info()}
    print(f"results: {write_results('replicas', figures)}")


class _Readers:
    """Threads packing through one replica, each on its own keep-alive connection."""

    def __init__(self, url: str, questions: Iterator[str], count: int) -> None:
        self.url, self.questions, self.lock = url, questions, threading.Lock()
        self.stop = threading.Event()
        self.latencies: list[float] = []
        self.failures: list[str] = []
        self.versions: set[int] = set()
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(count)]

    def __enter__(self) -> _Readers:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=120)

    def _run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=120) as http:
            while not self.stop.is_set():
                with self.lock:
                    question = next(self.questions)
                started = time.perf_counter()
                try:
                    response = http.post(
                        f"/v1/collections/{COLLECTION}/pack",
                        json={"query": question, "budget": BUDGET},
                    )
                except httpx.TransportError as error:
                    self.failures.append(f"transport: {error}")
                    continue
                elapsed = time.perf_counter() - started
                with self.lock:
                    if response.status_code != 200:
                        self.failures.append(f"{response.status_code}: {response.text[:200]}")
                    else:
                        self.latencies.append(elapsed)
                        self.versions.add(int(response.json()["index_version"]))


def _run(a: str, b: str, documents: list[wp.Document], args: argparse.Namespace) -> dict[str, Any]:
    questions = iter(make_questions(corpus_sentences([d.text for d in documents]), 50_000, 5))
    started = time.perf_counter()
    _search(b, "essays about startups")
    first_search = time.perf_counter() - started
    started = time.perf_counter()
    _pack(b, next(questions))
    first_pack = time.perf_counter() - started
    print(f"B's first search {first_search:.2f} s, first pack {first_pack:.2f} s", flush=True)
    writes, delays = [], []
    with _Readers(b, questions, args.readers) as readers, httpx.Client(timeout=600) as http:
        time.sleep(1)  # readers under way before the first switch
        for number in range(args.writes):
            word = _marker(number)
            document = _tagged(documents[number % len(documents)], word, f"replica-{number}")
            started = time.perf_counter()
            response = http.post(
                f"{a}/v1/collections/{COLLECTION}/documents",
                json={"documents": [{"id": document.id, "text": document.text}]},
            )
            response.raise_for_status()
            writes.append(time.perf_counter() - started)
            delays.append(_seen(b, word, present=document.id))
            print(f"write {number}: {writes[-1]:.2f} s through A, on B after {delays[-1]:.3f} s")
        started = time.perf_counter()
        http.delete(f"{a}/v1/collections/{COLLECTION}/documents/replica-0").raise_for_status()
        writes.append(time.perf_counter() - started)
        delays.append(_seen(b, _marker(0), absent="replica-0"))
        print(f"delete: gone from B after {delays[-1]:.3f} s", flush=True)
    figures = {
        "b_first_search_s": first_search,
        "b_first_pack_s": first_pack,
        "write_s": {"median": statistics.median(writes), "max": max(writes)},
        "visible_on_b_s": {"median": statistics.median(delays), "max": max(delays), "all": delays},
        "b_pack_ms": latency_stats(readers.latencies),
        "b_packs": len(readers.latencies),
        "failures": readers.failures,
        "versions_served_by_b": sorted(readers.versions),
    }
    _print(figures)
    return figures


def _marker(number: int) -> str:
    """A word of write `number`'s own, letters only (a tokenizer may split off digits)."""
    return "qzv" + "".join(chr(ord("a") + int(digit)) for digit in str(number)) + "marker"


def _tagged(document: wp.Document, word: str, document_id: str) -> wp.Document:
    """~5K tokens of the document with `word` before every sentence: all of it new text, and
    every chunk holds the word (one lone BM25 match can lose to the dense list in fusion)."""
    text = re.sub(r"(?<=[.!?])\s+", f" {word} ", document.text[:20_000])
    return wp.Document(id=document_id, text=f"{word} {text}")


def _search(url: str, query: str) -> set[str]:
    response = httpx.post(
        f"{url}/v1/collections/{COLLECTION}/search", json={"query": query, "k": 10}, timeout=600
    )
    response.raise_for_status()
    return {hit["document_id"] for hit in response.json()}


def _pack(url: str, query: str) -> None:
    body = {"query": query, "budget": BUDGET}
    httpx.post(f"{url}/v1/collections/{COLLECTION}/pack", json=body, timeout=600).raise_for_status()


def _seen(url: str, word: str, *, present: str | None = None, absent: str | None = None) -> float:
    started = time.perf_counter()
    while True:
        found = _search(url, word)
        if (present is None or present in found) and (absent is None or absent not in found):
            return time.perf_counter() - started
        if time.perf_counter() - started > 120:
            raise SystemExit(f"B did not serve the change to {word!r} within 120 s")
        time.sleep(0.02)


def _print(figures: dict[str, Any]) -> None:
    seen, packs = figures["visible_on_b_s"], figures["b_pack_ms"]
    print(f"visible on B: median {seen['median']:.3f} s, max {seen['max']:.3f} s (target <= 5 s)")
    print(f"writes through A: median {figures['write_s']['median']:.2f} s")
    print(
        f"B packs while switching: {figures['b_packs']} packs, p50 {packs['p50_ms']:.1f} ms, "
        f"p99 {packs['p99_ms']:.1f} ms; versions served {figures['versions_served_by_b']}"
    )
    print(f"failed requests: {len(figures['failures'])} {figures['failures'][:3]}")


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tokens", type=int, default=1_000_000, help="corpus size")
    parser.add_argument("--writes", type=int, default=10)
    parser.add_argument("--readers", type=int, default=2, help="threads packing through B")
    parser.add_argument(
        "--admin-url",
        default=POSTGRES_ADMIN_URL,
        help="a PostgreSQL database to create the scratch database from",
    )
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        args.tokens, args.writes, args.readers = 2 * SMOKE_TOKENS, 1, 1
    return args


if __name__ == "__main__":
    main()
