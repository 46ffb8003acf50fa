"""The first requests after `windowpack serve` starts, with the warm-up at start and without.

    .venv/bin/python benchmarks/server_start.py --store /tmp/wp-large-10m   # large.py's store

The store is one `large.py` (or `pack.py`) built: hash embedder for `large.py`'s, the model for
`pack.py`'s (`--embedder model`). For each mode, a new server process on a free loopback
port (nothing of it loaded): the seconds until /healthz answers ("up"), then with the warm-up
until /readyz answers 200 ("ready", the warm-up done), then the first pack of a question never
asked (B = 8K, over HTTP, wall time as the client sees it) and `--questions` more (p50). The
page cache is warm (the build or an earlier run read the files). Figures go to
`benchmarks/results/server_start.json`. `--smoke` builds a store of a few thousand tokens
(hash embedder) in a temporary folder instead of `--store`, one pack after the first: a check.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from bench_common import (
    SMOKE_TOKENS,
    add_smoke_option,
    corpus_sentences,
    essay_corpus,
    machine_info,
    make_questions,
    windowpack_server,
    write_results,
)

import windowpack as wp
from windowpack.text import get_token_counter

BUDGET = 8_192


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="a store large.py built (required)")
    parser.add_argument("--collection", default="large", help="collection to pack")
    parser.add_argument("--embedder", default="hash", help="'hash', or 'model' (the default)")
    parser.add_argument("--questions", type=int, default=10, help="packs after the first")
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.store is None and not args.smoke:
        parser.error("--store is required")
    if args.smoke:
        args.embedder, args.questions = "hash", 1
    corpus = essay_corpus(
        get_token_counter("o200k_base"),
        target_tokens=0,
        max_bytes=64 << 20,
        source_tokens=SMOKE_TOKENS if args.smoke else None,
    )
    with _store(args, corpus.documents) as args.store:
        _run(args, corpus.sources)


@contextlib.contextmanager
def _store(args: argparse.Namespace, documents: list[wp.Document]) -> Iterator[Path]:
    """`--store`; in a smoke run a temporary store of `documents` in `--collection`."""
    if not args.smoke:
        yield args.store
        return
    with tempfile.TemporaryDirectory(prefix="wp-server-start-") as temporary:
        folder = Path(temporary) / "store"
        with wp.open(folder, config=wp.StoreConfig(embedder="hash")) as store:
            store.collection(args.collection).add(documents)
        yield folder


def _run(args: argparse.Namespace, sources: list[tuple[wp.Document, int]]) -> None:
    sentences = corpus_sentences([doc.text for doc, _ in sources])
    asked = iter(make_questions(sentences, 2 * (args.questions + 1), seed=17))
    options = ["--embedder", args.embedder] if args.embedder != "model" else []
    figures: dict[str, Any] = {"store": str(args.store), "budget": BUDGET, "modes": {}}
    for mode in ("warm-up", "no warm-up"):
        flag = "--warm-up" if mode == "warm-up" else "--no-warm-up"
        started = time.perf_counter()
        with windowpack_server(args.store, *options, flag) as url, httpx.Client() as http:
            row: dict[str, Any] = {"up_s": time.perf_counter() - started}
            if mode == "warm-up":
                while http.get(f"{url}/readyz", timeout=30).status_code != 200:
                    time.sleep(0.02)
                row["ready_s"] = time.perf_counter() - started
            timed = [
                _pack(http, url, args.collection, next(asked)) for _ in range(args.questions + 1)
            ]
            row["first_pack_s"] = timed[0]
            row["next_p50_ms"] = statistics.median(timed[1:]) * 1000.0
        figures["modes"][mode] = row
        print(
            f"{mode:>11}: up {row['up_s']:.2f} s"
            + (f", ready {row['ready_s']:.2f} s" if "ready_s" in row else "")
            + f", first pack {row['first_pack_s']:.3f} s, next p50 {row['next_p50_ms']:.1f} ms",
            flush=True,
        )
    figures["machine"] = machine_info()
    print(f"Figures written to {write_results('server_start', figures)}")


def _pack(http: httpx.Client, url: str, collection: str, question: str) -> float:
    started = time.perf_counter()
    body = {"query": question, "budget": BUDGET}
    response = http.post(f"{url}/v1/collections/{collection}/pack", json=body, timeout=600)
    response.raise_for_status()
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
