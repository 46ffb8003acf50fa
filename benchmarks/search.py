"""Search latency of `Collection.search(q, k=100)` on a store of about 1M tokens, with its split.

Run from the repository root with the project virtualenv (`make demo` creates `.venv`).
Building the store embeds ~830K distinct tokens with the real model (about 4-5 minutes on an
idle 2-core machine), so keep it with `--store` and reuse it; a second run with the same
`--store` finds every document unchanged and only searches:

    .venv/bin/python benchmarks/search.py --store /tmp/wp-search-store
    .venv/bin/python benchmarks/search.py --store /tmp/wp-search-store --queries 200 --k 100

Default corpus (printed at start): the RULER essays JSON (one ~680K-token text, split into
~20K-character documents at blank-line/sentence boundaries), plus the 49 NIAH essay files
(~146K tokens), plus the first essay parts again under other ids (`copy-1/...`) until the
store passes `--target-tokens` (1,000,000). Re-used text hits the embedding cache, so the
copies cost little to build. `--corpus PATH` (repeatable) replaces the default sources.

Queries: N (default 200) distinct questions made from sentences of the corpus (a few content
words of a random sentence set in one of several question templates), so the query-embedding
cache never hides the model's cost. 5 warm-up queries (not measured) come first; then each
query once (uncached), then the same queries again (their vectors now cached). Printed:
p50/p95/p99/mean wall time in ms, and the split - index version check, query embedding,
dense (FAISS) search, BM25 search, RRF fusion, DB fetch + hits - timed by calling the
components the way `windowpack.search.hybrid.hybrid_search` does. A diagnostic row repeats
the dense searches with FAISS held to one OpenMP thread.

Target: uncached p50 ≤ 20 ms. Figures are also written to `benchmarks/results/search.json`.
`--smoke` runs it in seconds (a few thousand tokens, the hash embedder, 3 queries): a check.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from bench_common import (
    ESSAYS_JSON,
    NIAH_ESSAYS,
    SMOKE_TOKENS,
    EssayCorpus,
    add_smoke_option,
    corpus_sentences,
    essay_corpus,
    latency_stats,
    machine_info,
    make_questions,
    reusable_store_folder,
    stored_totals,
    write_results,
)
from rich.console import Console
from rich.table import Table

import windowpack as wp
from windowpack import index, search
from windowpack.config import DEFAULT_EMBEDDER, StoreConfig
from windowpack.embed import HASH_EMBEDDER, Vectors
from windowpack.text import get_token_counter
from windowpack.types import Hit, IngestProgress

COLLECTION = "search-bench"
BUILD_RECORD = "search-bench-build.json"
P50_TARGET_MS = 20.0
# QueryEmbeddingCache keeps 1024 vectors: the cached pass must fit in it.
MAX_CACHED_QUERIES = 1000

COMPONENTS = ("version_check", "query_embedding", "dense", "bm25", "retrieval", "db_fetch", "other")
# The parts timed by wrapping a call, and the names the components give those calls.
_TIMED = {
    "version_check": "version check",
    "dense": "dense search",
    "bm25": "BM25 search",
    "retrieval": "retrieval",
    "db_fetch": "db fetch",
}


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    console = Console(width=130)
    config = StoreConfig(embedder=args.embedder)
    counter = get_token_counter(config.tokenizer)
    corpus = essay_corpus(
        counter,
        target_tokens=args.target_tokens,
        max_bytes=config.max_file_bytes,
        paths=args.corpus,
        source_tokens=SMOKE_TOKENS // 2 if args.smoke else None,
    )
    console.print(f"[bold]Corpus[/bold]: {corpus.description}")

    with reusable_store_folder(args.store, "wp-search-bench-") as folder:
        store = wp.open(folder, config=config)
        try:
            collection = store.collection(COLLECTION)
            build = _build_or_reuse(console, collection, corpus, folder, config)
            sentences = corpus_sentences([doc.text for doc, _ in corpus.sources])
            queries = make_questions(sentences, args.warmup + args.queries, args.seed)
            figures = _measure(console, store, collection, queries, args)
        finally:
            store.close()
    store_totals: dict[str, int] = build.pop("store_totals")
    figures = {
        "command": " ".join(sys.argv),
        "corpus": {
            "description": corpus.description,
            "documents": len(corpus.documents),
            "tokens": corpus.tokens,
            "tokenizer": config.tokenizer,
        },
        "store": {"path": str(args.store) if args.store else None, **store_totals},
        "build": build,
        "embedder": config.embedder,
        "k": args.k,
        **figures,
        "target": {"p50_ms_max": P50_TARGET_MS},
        "machine": machine_info(),
    }
    p50 = figures["uncached"]["p50_ms"]
    figures["target"]["met"] = p50 <= P50_TARGET_MS
    _print_results(console, figures, store_totals)
    path = write_results("search", figures)
    console.print(f"Figures written to {path}")
    return 0


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Search latency on a ~1M-token store, with its split by component.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        action="append",
        default=None,
        help="file or folder to index (repeatable); default: the essays JSON + NIAH essays",
    )
    parser.add_argument("--queries", type=int, default=200, help="measured queries (distinct)")
    parser.add_argument("--k", type=int, default=100, help="hits per search")
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER, help="embedder name or path")
    parser.add_argument(
        "--store", type=Path, default=None, help="store folder to build or reuse (kept)"
    )
    parser.add_argument(
        "--target-tokens",
        type=int,
        default=1_000_000,
        help="repeat the first source under new ids until the corpus passes this many tokens",
    )
    parser.add_argument("--warmup", type=int, default=5, help="unmeasured warm-up queries")
    parser.add_argument("--seed", type=int, default=0, help="seed of the query generator")
    add_smoke_option(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        args.embedder, args.target_tokens = HASH_EMBEDDER, SMOKE_TOKENS
        args.queries, args.warmup, args.k = 3, 1, 10
    if args.queries < 1 or args.k < 1 or args.warmup < 1:
        parser.error("--queries, --k and --warmup must be positive")
    if args.corpus is None:
        args.corpus = [ESSAYS_JSON, NIAH_ESSAYS]
    return args


def _build_or_reuse(
    console: Console,
    collection: wp.Collection,
    corpus: EssayCorpus,
    folder: Path,
    config: StoreConfig,
) -> dict[str, Any]:
    """Add the corpus (a no-op on a reused store) and say how long building took."""
    record_path = folder / BUILD_RECORD
    console.print(f"Adding the corpus to the store at {folder} ...")
    started = time.perf_counter()
    report = collection.add(corpus.documents, progress=_progress_printer(console))
    seconds = time.perf_counter() - started
    totals = stored_totals(collection)
    built_now = report.added + report.replaced > 0
    if built_now:
        record = {
            "build_seconds": seconds,
            "embedded": report.embedded,
            "chunks": report.chunks,
            "tokens": report.tokens,
            "embedder": config.embedder,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        record_path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        console.print(
            f"Built the store in [bold]{seconds:.1f} s[/bold]: {report.chunks:,} chunks, "
            f"{report.tokens:,} tokens, {report.embedded:,} texts embedded by the model "
            f"({report.tokens / seconds:,.0f} tokens/s)"
        )
    else:
        record = json.loads(record_path.read_text("utf-8")) if record_path.exists() else {}
        recorded = record.get("build_seconds")
        when = f"{recorded:.1f} s when built" if recorded is not None else "build time not recorded"
        console.print(
            f"Reused the store ({report.unchanged:,} documents unchanged; check took "
            f"{seconds:.2f} s); {when}"
        )
    return {
        "built_now": built_now,
        "add_seconds": seconds,
        "build_seconds": seconds if built_now else record.get("build_seconds"),
        "record": record,
        "store_totals": totals,
    }


def _progress_printer(console: Console) -> Callable[[IngestProgress], None]:
    stage = ""
    next_embedded = 0

    def report(progress: IngestProgress) -> None:
        nonlocal stage, next_embedded
        if progress.stage != stage:
            stage = progress.stage
            console.print(f"  stage {progress.stage} ({time.strftime('%H:%M:%S')})")
        if progress.stage == "embed" and progress.embedded >= next_embedded:
            console.print(f"  embedded {progress.embedded:,} chunks")
            next_embedded = progress.embedded + 1024

    return report


def _timed_search(collection: wp.Collection, query: str, k: int) -> tuple[float, list[Hit]]:
    started = time.perf_counter()
    hits = collection.search(query, k=k)
    return time.perf_counter() - started, hits


def _measure(
    console: Console,
    store: wp.Store,
    collection: wp.Collection,
    queries: list[str],
    args: argparse.Namespace,
) -> dict[str, Any]:
    warmup, measured = queries[: args.warmup], queries[args.warmup :]
    console.print(f"{len(measured)} distinct queries (+{len(warmup)} warm-up), e.g.:")
    for query in measured[:5]:
        console.print(f"  {query!r}")
    first_seconds, _ = _timed_search(collection, warmup[0], args.k)  # loads the indexes if needed
    for query in warmup[1:]:
        collection.search(query, k=args.k)

    uncached: list[float] = []
    results: dict[str, list[int]] = {}
    hit_counts: list[int] = []
    for query in measured:
        seconds, hits = _timed_search(collection, query, args.k)
        uncached.append(seconds)
        results[query] = [hit.chunk_id or 0 for hit in hits]
        hit_counts.append(len(hits))

    repeated = measured[:MAX_CACHED_QUERIES]
    cached = [_timed_search(collection, query, args.k)[0] for query in repeated]

    parts: dict[str, list[float]] = {name: [] for name in COMPONENTS}
    split_totals: list[float] = []
    mismatches = 0
    timer = _Timer()
    with _instrumented(store, timer):
        for query in measured:
            timer.reset()
            seconds, hits = _timed_search(collection, query, args.k)
            timings = {name: timer.seconds.get(name, 0.0) for name in COMPONENTS if name != "other"}
            timings["other"] = seconds - sum(timings.values())
            for name, value in timings.items():
                parts[name].append(value)
            split_totals.append(seconds)
            mismatches += [hit.chunk_id for hit in hits] != results[query]
    dense_calls = timer.calls.get("dense", [])
    fusion_functions = [search.timed_calls()["retrieval"][1]]
    return {
        "queries": len(measured),
        "warmup": len(warmup),
        "query_examples": measured[:10],
        "first_search_ms": first_seconds * 1000.0,
        "mean_hits": sum(hit_counts) / len(hit_counts),
        "uncached": latency_stats(uncached),
        "cached_query_vector": latency_stats(cached),
        "split": {name: latency_stats(values) for name, values in parts.items()},
        "split_total": latency_stats(split_totals),
        "split_result_mismatches": mismatches,
        "fusion_functions": fusion_functions,
        "diagnostic_dense_default_threads": _replay(dense_calls, None),
        "diagnostic_dense_one_openmp_thread": _replay(dense_calls, 1),
    }


_Call = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class _Timer:
    """Accumulates the wall time of wrapped callables by name, and keeps their calls."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, list[_Call]] = {}

    def reset(self) -> None:
        self.seconds.clear()

    def wrap(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.calls.setdefault(name, []).append((function, args, kwargs))
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - started
                self.seconds[name] = self.seconds.get(name, 0.0) + elapsed

        return timed


@contextlib.contextmanager
def _instrumented(store: wp.Store, timer: _Timer) -> Iterator[None]:
    """Time the parts of the real `collection.search` by wrapping the calls the components
    name (`timed_calls()`): the index version check, the dense and BM25 searches, the fusion
    function and the chunk fetch. The query vector never comes from the cache here: every
    query runs the model, timed, before the searches (in a real search it overlaps the BM25
    search). What is left (validation, session, building hits) is "other"."""
    named = {**search.timed_calls(), **index.timed_calls()}
    originals = []
    for name, called in _TIMED.items():
        owner, attribute = named[called]
        originals.append((owner, attribute, getattr(owner, attribute)))
        setattr(owner, attribute, timer.wrap(name, getattr(owner, attribute)))
    embed_query = timer.wrap("query_embedding", store.embedder.embed_query)
    vectors = store.query_vectors

    def uncached(query: str) -> Callable[[], Vectors]:
        vector: Vectors = embed_query(query)
        return lambda: vector

    vectors.get_soon = uncached  # type: ignore[method-assign]
    try:
        yield
    finally:
        del vectors.get_soon
        for owner, attribute, original in reversed(originals):
            setattr(owner, attribute, original)


def _replay(calls: list[_Call], threads: int | None) -> dict[str, float]:
    """Diagnostic: the recorded dense searches again, with FAISS's OpenMP threads as given."""
    import faiss

    previous = faiss.omp_get_max_threads()
    if threads is not None:
        faiss.omp_set_num_threads(threads)
    try:
        seconds = []
        for function, args, kwargs in calls:
            started = time.perf_counter()
            function(*args, **kwargs)
            seconds.append(time.perf_counter() - started)
    finally:
        faiss.omp_set_num_threads(previous)
    return latency_stats(seconds)


def _print_results(console: Console, figures: dict[str, Any], store_docs: dict[str, int]) -> None:
    build = figures["build"]
    seconds = build["build_seconds"]
    built = "built now" if build["built_now"] else "reused"
    console.print(
        f"Store ({built}): {store_docs['documents']:,} documents, {store_docs['chunks']:,} "
        f"chunks, {store_docs['tokens']:,} tokens; build time "
        + (f"{seconds:.1f} s" if seconds is not None else "unknown")
    )
    console.print(
        f"First search (index load if needed): {figures['first_search_ms']:.1f} ms; "
        f"mean hits returned: {figures['mean_hits']:.1f} (k={figures['k']})"
    )
    table = Table(title=f"col.search(q, k={figures['k']}): {figures['queries']} distinct queries")
    table.add_column("what")
    for name in ("p50", "p95", "p99", "mean"):
        table.add_column(f"{name} ms", justify="right")

    def row(name: str, stats: dict[str, float]) -> None:
        table.add_row(name, *(f"{stats[f'{p}_ms']:.2f}" for p in ("p50", "p95", "p99", "mean")))

    row("search, query not cached", figures["uncached"])
    row("search, query vector cached", figures["cached_query_vector"])
    table.add_section()
    labels = {
        "version_check": "  index version check (DB)",
        "query_embedding": "  query embedding (model)",
        "dense": "  dense search (FAISS)",
        "bm25": "  BM25 search (bm25s)",
        "retrieval": "  retrieval, dense and BM25 searches included "
        f"({', '.join(figures['fusion_functions'])})",
        "db_fetch": "  DB fetch (chunks_with_documents)",
        "other": "  other (validation, session, hits)",
    }
    for name, label in labels.items():
        row(label, figures["split"][name])
    split = figures["split"]
    fusion_fetch = sum(split[name]["mean_ms"] for name in ("retrieval", "db_fetch", "other"))
    row("  total (instrumented col.search)", figures["split_total"])
    table.add_section()
    row("diagnostic: dense replayed, default", figures["diagnostic_dense_default_threads"])
    row("diagnostic: dense replayed, 1 thread", figures["diagnostic_dense_one_openmp_thread"])
    console.print(table)
    console.print(
        f"fusion + DB fetch (+ other): mean {fusion_fetch:.2f} ms; instrumented searches whose "
        f"hits differ from the first pass: {figures['split_result_mismatches']}"
    )
    verdict = "met" if figures["target"]["met"] else "MISSED"
    console.print(
        f"Target uncached p50 ≤ {P50_TARGET_MS:.0f} ms: "
        f"{figures['uncached']['p50_ms']:.2f} ms ({verdict})"
    )


if __name__ == "__main__":
    sys.exit(main())
