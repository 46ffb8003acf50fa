"""Ingest on Ray against a local ingest of the same corpus: throughput per worker and overhead.

Run from the repository root with the project virtualenv (the `ray` extra installed):

    .venv/bin/python benchmarks/ray_ingest.py --limit-tokens 60000 --workers 1,2

The corpus is the RULER essays (or CORPUS: anything `parse_paths` takes), cut into ~20K-char
documents as `benchmarks/ingest.py` does, truncated to `--limit-tokens` o200k tokens. Each
run adds it to a fresh store (nothing cached) with the default extractive summarizer:

- local: `Collection.add` with `executor="local"` (torch uses every core in one process);
- ray, per worker count W in `--workers`: a local Ray instance started with `num_cpus=W`
  (`--address` joins a running cluster instead), `executor="ray"`, `ray_workers=W`.
  The pool's start (actors, model load in each) is timed apart and not counted: a store's
  workers stay up across its ingests.

Figures: seconds, corpus tokens/s, tokens/s per worker, overhead = ray / local - 1 (target
≤ 10 % on one machine with W = its cores), and a check that the Ray store holds the same
chunks and vectors (within 1e-5) as the local one. Written to `benchmarks/results/ray_ingest.json`.
`--smoke`: a few thousand tokens, the hash embedder, one Ray worker (a check, not figures).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from bench_common import (
    ESSAYS_JSON,
    SMOKE_TOKENS,
    SPLIT_CHARS,
    add_smoke_option,
    limit_tokens,
    load_corpus,
    machine_info,
)
from bench_common import write_results as write_json
from rich.console import Console
from rich.table import Table

import windowpack as wp
from windowpack.config import DEFAULT_EMBEDDER, StoreConfig
from windowpack.embed import HASH_EMBEDDER, get_embedder
from windowpack.storage import repository
from windowpack.text import content_hash, get_token_counter
from windowpack.types import Document

OVERHEAD_TARGET_PCT = 10.0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    import ray

    console = Console(width=120)
    documents = _documents(args)
    tokens = sum(get_token_counter("o200k_base").count_many([d.text for d in documents]))
    console.print(
        f"Corpus: {len(documents):,} documents, {tokens:,} o200k tokens; embedder {args.embedder!r}"
    )
    get_embedder(args.embedder).embed(["warm up"] * 4)  # the local model loads untimed
    runs: list[dict[str, Any]] = []
    local = _ingest(documents, StoreConfig(embedder=args.embedder), label="local")
    runs.append(local | {"workers": None})
    console.print(f"local: {local['seconds']:.1f} s")
    for workers in args.workers:
        ray.init(
            address=args.address,
            num_cpus=None if args.address else workers,
            include_dashboard=False,
            log_to_driver=False,
        )
        config = StoreConfig(embedder=args.embedder, executor="ray", ray_workers=workers)
        run = _ingest(documents, config, label=f"ray x{workers}", reference=local)
        ray.shutdown()
        runs.append(run | {"workers": workers})
        console.print(f"ray x{workers}: {run['seconds']:.1f} s (pool start {run['start']:.1f} s)")
    figures = _figures(args, tokens, runs)
    _print(console, figures)
    write_json("ray_ingest", figures)
    return 0


def _ingest(
    documents: list[Document],
    config: StoreConfig,
    *,
    label: str,
    reference: dict[str, Any] | None = None,
) -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory(prefix="wp-ray-bench-") as folder,
        wp.open(Path(folder) / "store", config=config) as store,
    ):
        started = time.perf_counter()
        executor = store.executor  # start the pool and load its models, untimed
        executor.embedder(store.embedder).embed(["warm up"] * 64)
        start = time.perf_counter() - started
        collection = store.collection("bench")
        started = time.perf_counter()
        report = collection.add(documents)
        seconds = time.perf_counter() - started
        state = _state(store, collection)
    result: dict[str, Any] = {
        "label": label,
        "seconds": seconds,
        "start": start,
        "chunks": report.chunks,
        "state": state,
    }
    if reference is not None:
        result["same_as_local"] = _same(state, reference["state"])
    return result


def _state(store: wp.Store, collection: wp.Collection) -> dict[str, Any]:
    """What the ingest wrote: chunk texts, node texts, and the vector of each text."""
    with store.sessions() as session:
        nodes = repository.tree_nodes(session, collection.collection_id)
        docs = repository.list_documents(session, collection.collection_id)
        chunks = [row for doc in docs for row in repository.chunk_rows(session, doc.id)]
        hashes = [row.text_hash for row in chunks] + [content_hash(node.text) for node in nodes]
        cached = repository.cached_embeddings(session, store.embedder.model_id, hashes)
    return {
        "chunks": [(row.text_hash, row.char_start, row.char_end) for row in chunks],
        "nodes": sorted((node.level, node.leaf_start, node.text) for node in nodes),
        "vectors": {key: np.frombuffer(blob, dtype=np.float32) for key, blob in cached.items()},
    }


def _same(state: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
    common = state["vectors"].keys() & reference["vectors"].keys()
    deviation = max(
        (float(np.abs(state["vectors"][k] - reference["vectors"][k]).max()) for k in common),
        default=0.0,
    )
    return {
        "chunks": state["chunks"] == reference["chunks"],
        "tree": state["nodes"] == reference["nodes"],
        "vectors_compared": len(common),
        "max_vector_difference": deviation,
        "vectors_within_1e-5": deviation <= 1e-5,
    }


def _figures(args: argparse.Namespace, tokens: int, runs: list[dict[str, Any]]) -> dict[str, Any]:
    local_seconds = runs[0]["seconds"]
    rows = []
    for run in runs:
        rate = tokens / run["seconds"]
        row = {
            "label": run["label"],
            "workers": run["workers"],
            "seconds": run["seconds"],
            "pool_start_seconds": run["start"],
            "tokens_per_s": rate,
            "tokens_per_s_per_worker": rate / run["workers"] if run["workers"] else None,
            "overhead_pct": (run["seconds"] / local_seconds - 1) * 100 if run["workers"] else None,
            "same_as_local": run.get("same_as_local"),
        }
        rows.append(row)
    return {
        "command": " ".join(sys.argv),
        "machine": machine_info(),
        "tokens": tokens,
        "embedder": args.embedder,
        "address": args.address,
        "overhead_target_pct": OVERHEAD_TARGET_PCT,
        "runs": rows,
    }


def _print(console: Console, figures: dict[str, Any]) -> None:
    table = Table(title=f"Ingest of {figures['tokens']:,} tokens: local vs Ray")
    for column in ("run", "seconds", "tokens/s", "per worker", "overhead", "pool start", "same"):
        table.add_column(column, justify="left" if column == "run" else "right")
    for row in figures["runs"]:
        same = row["same_as_local"]
        table.add_row(
            row["label"],
            f"{row['seconds']:.1f}",
            f"{row['tokens_per_s']:,.0f}",
            f"{row['tokens_per_s_per_worker']:,.0f}" if row["workers"] else "",
            f"{row['overhead_pct']:+.1f} %" if row["overhead_pct"] is not None else "",
            f"{row['pool_start_seconds']:.1f} s",
            "" if same is None else _same_text(same),
        )
    console.print(table)
    console.print(f"Overhead target on one machine: ≤ {OVERHEAD_TARGET_PCT:.0f} %")


def _same_text(same: dict[str, Any]) -> str:
    ok = same["chunks"] and same["tree"] and same["vectors_within_1e-5"]
    return f"{'yes' if ok else 'NO'} (max |Δv| {same['max_vector_difference']:.1e})"


def _documents(args: argparse.Namespace) -> list[Document]:
    corpus = load_corpus([args.corpus], max_bytes=64 * 1024 * 1024, split_chars=SPLIT_CHARS)
    counter = get_token_counter("o200k_base")
    return limit_tokens(corpus.documents, counter, args.limit_tokens)


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Ray ingest against local ingest.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("corpus", type=Path, nargs="?", default=ESSAYS_JSON)
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    parser.add_argument("--limit-tokens", type=int, default=60_000)
    parser.add_argument(
        "--workers",
        type=lambda text: [int(part) for part in text.split(",")],
        default=[2],
        help="comma-separated worker counts",
    )
    parser.add_argument("--address", default=None, help="a running Ray cluster to join")
    add_smoke_option(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        args.embedder, args.limit_tokens, args.workers = HASH_EMBEDDER, SMOKE_TOKENS, [1]
    return args


if __name__ == "__main__":
    sys.exit(main())
