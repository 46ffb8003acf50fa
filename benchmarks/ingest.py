"""Ingest throughput per stage, the embed stage's overhead over the raw model, and re-ingest cost.

Run from the repository root with the project virtualenv (`make demo` creates `.venv`). Full
size, real default model: about 5-6 minutes on an idle 2-core machine, most of it two passes of
the model over the corpus (the pipeline's and the raw model's):

    .venv/bin/python benchmarks/ingest.py ../shared/data/ruler/PaulGrahamEssays.json

Quick run on a truncated corpus (seconds):

    .venv/bin/python benchmarks/ingest.py ../shared/data/ruler/PaulGrahamEssays.json \
        --limit-tokens 20000

CORPUS is anything `parse_paths` takes (a file or a folder). A parsed document longer than
100,000 characters (the essays JSON is one 3M-character `text`) is split into documents of
~20,000 characters at blank-line or sentence boundaries (`--split-chars`), so the corpus looks
like a real multi-document one; the output says so. `--limit-tokens N` keeps the first N
tokens (o200k_base) of the corpus.

What is measured (tokens/s are corpus tokens, o200k_base, over each stage's wall time):

- parse: `parse_paths` on CORPUS.
- chunk: `chunk_document` with the collection tokenizer (o200k_base) and 200-token chunks.
- overall: one `Collection.add` of the whole corpus into a fresh store (nothing cached); its
  stages are timed with the progress callback, which reports "chunk" per document, "embed" per
  committed embedding batch, then "index" and "done":
    chunk  = call start → last "chunk" event (validation, hashing, upsert check, chunking),
    embed  = last "chunk" → last "embed" event (`embed_with_cache`: window split, model, cache),
    index  = last "embed" → "done" (the database commit, then `IndexStore.publish`).
- raw encode: the sentence-transformers model's own `encode(texts, batch_size=16,
  normalize_embeddings=True)` on the very same (unique) chunk texts.
- embed overhead = pipeline embed time / raw encode time - 1.   Target: ≤ 10 %.
- re-ingest: `Collection.add` of the unchanged documents (same ids) into the same store, as a
  fraction of the first ingest.                                 Target: ≤ 5 %.
  Also timed: the same re-ingest from a new process (a second `windowpack add`: the store is
  opened afresh and the model is not loaded), reported beside it.

`--direct-embed` also times `embed_with_cache` called directly on a second fresh database (one
more model pass). Figures are printed as a table and written to `benchmarks/results/ingest.json`.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from bench_common import (
    ESSAYS_JSON,
    SPLIT_CHARS,
    Corpus,
    count_tokens,
    fmt_rate,
    limit_tokens,
    load_corpus,
    machine_info,
    rate,
    write_results,
)
from rich.console import Console
from rich.table import Table

import windowpack as wp
from windowpack.budget.tokens import get_token_counter
from windowpack.config import DEFAULT_EMBEDDER, StoreConfig
from windowpack.retrieval.chunking import chunk_document
from windowpack.retrieval.embedder import Embedder, SentenceTransformerEmbedder, get_embedder
from windowpack.retrieval.embedding_cache import content_hash, embed_with_cache
from windowpack.storage.database import create_database_engine, migrate, session_factory, sqlite_url
from windowpack.types import Document, IngestProgress

COLLECTION = "ingest-bench"
EMBED_OVERHEAD_TARGET_PCT = 10.0
REINGEST_TARGET_FRACTION = 0.05


class StageClock:
    """Progress callback noting when (wall and process CPU time) each stage was reported."""

    def __init__(self) -> None:
        self.started = (0.0, 0.0)
        self.returned = (0.0, 0.0)
        self.first: dict[str, tuple[float, float]] = {}
        self.last: dict[str, tuple[float, float]] = {}
        self.events = 0

    def start(self) -> None:
        self.started = _now()

    def finish(self) -> None:
        self.returned = _now()

    def __call__(self, progress: IngestProgress) -> None:
        now = _now()
        self.events += 1
        self.first.setdefault(progress.stage, now)
        self.last[progress.stage] = now

    def stages(self, clock: int = 0) -> dict[str, float]:
        """Seconds per stage of the `add` call (see the module docstring for the boundaries);
        `clock` 0 is wall time, 1 is the process's CPU time (all threads)."""
        started, returned = self.started[clock], self.returned[clock]
        chunk_end = self.last["chunk"][clock] if "chunk" in self.last else started
        embed_end = self.last["embed"][clock] if "embed" in self.last else chunk_end
        index_start = self.first["index"][clock] if "index" in self.first else embed_end
        done = self.first["done"][clock] if "done" in self.first else returned
        return {
            "chunk": chunk_end - started,
            "embed": embed_end - chunk_end,
            "commit": index_start - embed_end,
            "publish": done - index_start,
            "index": done - embed_end,
            "after_done": returned - done,
            "total": returned - started,
        }


def _now() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    config = StoreConfig(embedder=args.embedder)
    if args.reingest_child is not None:
        return _reingest_child(args, config)
    console = Console(width=130)
    counter = get_token_counter(config.tokenizer)
    counter.count("warm up")  # the BPE table loads on first use: not part of any stage

    corpus, documents = _load_documents(args, config)
    tokens = count_tokens(documents, counter)
    console.print(f"[bold]Corpus[/bold]: {corpus.description}")
    limit_note = (
        f" (truncated to --limit-tokens {args.limit_tokens:,})" if args.limit_tokens else ""
    )
    console.print(
        f"  {len(documents):,} documents, {tokens:,} {config.tokenizer} tokens{limit_note}; "
        f"chunks of {config.chunk_tokens} tokens; embedder {config.embedder!r}"
    )

    # Chunk stage on its own, exactly as the pipeline calls it.
    started = time.perf_counter()
    spans = [chunk_document(doc, counter, config.chunk_tokens) for doc in documents]
    chunk_seconds = time.perf_counter() - started
    texts = [
        doc.text[s.start : s.end]
        for doc, doc_spans in zip(documents, spans, strict=True)
        for s in doc_spans
    ]
    unique_texts = list(dict.fromkeys(texts))  # embed_with_cache embeds each distinct text once
    chunk_token_total = sum(s.tokens for doc_spans in spans for s in doc_spans)

    embedder = get_embedder(config.embedder, batch_size=config.embed_batch_size)
    started = time.perf_counter()
    embedder.embed(unique_texts[:32])  # load the model and warm it up, untimed
    for module in ("faiss", "bm25s", "Stemmer"):  # first-use imports are not index work
        importlib.import_module(module)
    load_seconds = time.perf_counter() - started
    console.print(
        f"  {len(texts):,} chunks ({len(unique_texts):,} distinct), {chunk_token_total:,} chunk "
        f"tokens; model load + warm-up + index-library imports: {load_seconds:.1f} s (not counted)"
    )

    with _store_folder(args.store) as folder:
        store = wp.open(folder, config=config)
        try:
            collection = store.collection(COLLECTION)
            clock = StageClock()
            console.print("Ingesting into a fresh store (col.add) ...")
            clock.start()
            report = collection.add(documents, progress=clock)
            clock.finish()
            console.print("Re-ingesting the unchanged corpus (col.add, same ids) ...")
            started = time.perf_counter()
            again = collection.add(documents)
            reingest_seconds = time.perf_counter() - started
        finally:
            store.close()
        console.print("Re-ingesting the unchanged corpus from a new process ...")
        child = _reingest_in_new_process(args, folder)
    stages = clock.stages()
    cpu_stages = clock.stages(clock=1)

    window_seconds, window_pieces, raw_seconds, raw_cpu_seconds = None, None, None, None
    if isinstance(embedder, SentenceTransformerEmbedder):
        started = time.perf_counter()
        pieces, _ = embedder._split_into_windows(unique_texts)
        window_seconds = time.perf_counter() - started
        window_pieces = len(pieces)
        console.print("Raw model encode on the same chunk texts ...")
        model = embedder._loaded()
        started, cpu_started = time.perf_counter(), time.process_time()
        model.encode(
            unique_texts,
            batch_size=config.embed_batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        raw_seconds = time.perf_counter() - started
        raw_cpu_seconds = time.process_time() - cpu_started
    else:
        console.print(
            f"[yellow]{config.embedder!r} is not a sentence-transformers model: no raw encode"
        )

    direct_seconds = None
    if args.direct_embed:
        console.print("Direct embed_with_cache on another fresh database ...")
        direct_seconds = _direct_embed_seconds(embedder, texts)

    figures = _figures(
        args=args,
        config=config,
        corpus_description=corpus.description,
        documents=len(documents),
        tokens=tokens,
        parse_seconds=corpus.parse_seconds,
        split_seconds=corpus.split_seconds,
        chunk_seconds=chunk_seconds,
        chunks=len(texts),
        distinct_chunks=len(unique_texts),
        stages=stages,
        cpu_stages=cpu_stages,
        report=report,
        reingest=again,
        reingest_seconds=reingest_seconds,
        window_seconds=window_seconds,
        window_pieces=window_pieces,
        raw_seconds=raw_seconds,
        raw_cpu_seconds=raw_cpu_seconds,
        direct_seconds=direct_seconds,
        progress_events=clock.events,
        child=child,
    )
    _print_table(console, figures)
    path = write_results("ingest", figures)
    console.print(f"Figures written to {path}")
    return 0


def _load_documents(args: argparse.Namespace, config: StoreConfig) -> tuple[Corpus, list[Document]]:
    corpus = load_corpus(
        [args.corpus], max_bytes=config.max_file_bytes, split_chars=args.split_chars
    )
    documents = corpus.documents
    if args.limit_tokens is not None:
        counter = get_token_counter(config.tokenizer)
        documents = limit_tokens(documents, counter, args.limit_tokens)
    return corpus, documents


def _reingest_in_new_process(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """Re-ingest as a second `windowpack add` would: a new process, the model not loaded."""
    command = [sys.executable, __file__, str(args.corpus), "--reingest-child", str(folder)]
    command += ["--embedder", args.embedder, "--split-chars", str(args.split_chars)]
    if args.limit_tokens is not None:
        command += ["--limit-tokens", str(args.limit_tokens)]
    finished = subprocess.run(command, capture_output=True, text=True, check=False)
    if finished.returncode != 0:
        return {"error": finished.stderr.strip().splitlines()[-5:]}
    result: dict[str, Any] = json.loads(finished.stdout.strip().splitlines()[-1])
    return result


def _reingest_child(args: argparse.Namespace, config: StoreConfig) -> int:
    """In the child: load the corpus, then time opening the store and adding it unchanged."""
    _, documents = _load_documents(args, config)
    started = time.perf_counter()
    store = wp.open(args.reingest_child, config=config)
    try:
        collection = store.collection(COLLECTION, create=False)
        opened = time.perf_counter()
        report = collection.add(documents)
        added = time.perf_counter()
    finally:
        store.close()
    figures = {
        "open_seconds": opened - started,
        "add_seconds": added - opened,
        "total_seconds": added - started,
        "report": _report_dict(report),
    }
    print(json.dumps(figures))
    return 0


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Ingest throughput per stage, embed overhead and re-ingest cost.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "corpus", type=Path, nargs="?", default=ESSAYS_JSON, help="a file or folder to ingest"
    )
    parser.add_argument(
        "--store",
        type=Path,
        default=None,
        help="a new or empty folder for the store (kept); default: a temporary folder",
    )
    parser.add_argument("--embedder", default=DEFAULT_EMBEDDER, help="embedder name or path")
    parser.add_argument(
        "--limit-tokens", type=int, default=None, help="keep only the first N tokens of the corpus"
    )
    parser.add_argument(
        "--split-chars",
        type=int,
        default=SPLIT_CHARS,
        help="part size for documents over 100K chars (0: do not split)",
    )
    parser.add_argument(
        "--direct-embed",
        action="store_true",
        help="also time embed_with_cache directly on a fresh database (one more model pass)",
    )
    parser.add_argument("--reingest-child", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.limit_tokens is not None and args.limit_tokens < 1:
        parser.error("--limit-tokens must be positive")
    return args


@contextlib.contextmanager
def _store_folder(given: Path | None) -> Iterator[Path]:
    if given is not None:
        if given.exists() and any(given.iterdir()):
            raise SystemExit(f"--store {given}: must be a new or empty folder (a fresh store)")
        yield given
        return
    with tempfile.TemporaryDirectory(prefix="wp-ingest-bench-") as temporary:
        yield Path(temporary) / "store"


def _direct_embed_seconds(embedder: Embedder, texts: list[str]) -> float:
    with tempfile.TemporaryDirectory(prefix="wp-embed-bench-") as temporary:
        engine = create_database_engine(sqlite_url(Path(temporary) / "cache.db"))
        try:
            migrate(engine)
            sessions = session_factory(engine)
            started = time.perf_counter()
            hashes = [content_hash(text) for text in texts]
            embed_with_cache(sessions, embedder, texts, hashes)
            return time.perf_counter() - started
        finally:
            engine.dispose()


def _figures(
    *,
    args: argparse.Namespace,
    config: StoreConfig,
    corpus_description: str,
    documents: int,
    tokens: int,
    parse_seconds: float,
    split_seconds: float,
    chunk_seconds: float,
    chunks: int,
    distinct_chunks: int,
    stages: dict[str, float],
    cpu_stages: dict[str, float],
    report: wp.IngestReport,
    reingest: wp.IngestReport,
    reingest_seconds: float,
    window_seconds: float | None,
    window_pieces: int | None,
    raw_seconds: float | None,
    raw_cpu_seconds: float | None,
    direct_seconds: float | None,
    progress_events: int,
    child: dict[str, Any],
) -> dict[str, Any]:
    def stage(seconds: float, note: str, cpu: float | None = None) -> dict[str, Any]:
        return {
            "seconds": seconds,
            "cpu_seconds": cpu,
            "tokens_per_s": rate(tokens, seconds),
            "note": note,
        }

    overhead = (stages["embed"] / raw_seconds - 1.0) * 100.0 if raw_seconds else None
    cpu_overhead = (
        (cpu_stages["embed"] / raw_cpu_seconds - 1.0) * 100.0 if raw_cpu_seconds else None
    )
    direct_overhead = (
        (direct_seconds / raw_seconds - 1.0) * 100.0 if direct_seconds and raw_seconds else None
    )
    fraction = reingest_seconds / stages["total"] if stages["total"] > 0 else None
    return {
        "command": " ".join(sys.argv),
        "corpus": {
            "path": str(args.corpus),
            "description": corpus_description,
            "documents": documents,
            "tokens": tokens,
            "tokenizer": config.tokenizer,
            "limit_tokens": args.limit_tokens,
            "chunk_tokens": config.chunk_tokens,
            "chunks": chunks,
            "distinct_chunks": distinct_chunks,
        },
        "embedder": config.embedder,
        "standalone": {
            "parse": stage(parse_seconds, "parse_paths"),
            "split": stage(split_seconds, "cutting long documents into ~20K-char parts"),
            "chunk": stage(chunk_seconds, "chunk_document, o200k_base, 200 tokens"),
        },
        "add": {
            name: stage(stages[name], note, cpu_stages[name])
            for name, note in (
                ("chunk", "validate, hash, upsert check, chunk_document"),
                ("embed", "embed_with_cache (fresh store: nothing cached)"),
                ("commit", "one transaction: documents + chunks"),
                ("publish", "IndexStore.publish: FAISS + BM25 + files"),
                ("index", "commit + publish"),
                ("total", "end-to-end col.add"),
            )
        }
        | {
            "after_done": stages["after_done"],
            "progress_events": progress_events,
            "report": _report_dict(report),
        },
        "raw_encode": None
        if raw_seconds is None
        else {
            **stage(
                raw_seconds,
                "model.encode(batch_size=16, normalize_embeddings=True)",
                raw_cpu_seconds,
            ),
            "texts": distinct_chunks,
        },
        "window_split": None
        if window_seconds is None
        else {"seconds": window_seconds, "pieces": window_pieces, "texts": distinct_chunks},
        "direct_embed_with_cache": None if direct_seconds is None else stage(direct_seconds, ""),
        "embed_overhead_pct": overhead,
        "embed_overhead_cpu_time_pct": cpu_overhead,
        "direct_embed_overhead_pct": direct_overhead,
        "reingest": {
            "seconds": reingest_seconds,
            "fraction_of_first": fraction,
            "report": _report_dict(reingest),
            "new_process": child,
            "new_process_fraction_of_first": child["total_seconds"] / stages["total"]
            if "total_seconds" in child and stages["total"] > 0
            else None,
        },
        "targets": {
            "embed_overhead_pct_max": EMBED_OVERHEAD_TARGET_PCT,
            "embed_overhead_met": None
            if overhead is None
            else overhead <= EMBED_OVERHEAD_TARGET_PCT,
            "reingest_fraction_max": REINGEST_TARGET_FRACTION,
            "reingest_met": None if fraction is None else fraction <= REINGEST_TARGET_FRACTION,
        },
        "machine": machine_info(),
    }


def _report_dict(report: wp.IngestReport) -> dict[str, Any]:
    return {
        "added": report.added,
        "replaced": report.replaced,
        "unchanged": report.unchanged,
        "chunks": report.chunks,
        "tokens": report.tokens,
        "embedded": report.embedded,
        "index_version": report.index_version,
    }


def _print_table(console: Console, figures: dict[str, Any]) -> None:
    corpus = figures["corpus"]
    table = Table(title=f"Ingest: {corpus['documents']:,} documents, {corpus['tokens']:,} tokens")
    table.add_column("stage")
    table.add_column("seconds", justify="right")
    table.add_column("tokens/s", justify="right")
    table.add_column("CPU s", justify="right")
    table.add_column("% of add", justify="right")
    table.add_column("what")
    total = figures["add"]["total"]["seconds"]

    def row(name: str, entry: dict[str, Any] | None, share: bool = False) -> None:
        if entry is None:
            return
        percent = f"{entry['seconds'] / total * 100:.1f}" if share and total > 0 else ""
        cpu = entry.get("cpu_seconds")
        table.add_row(
            name,
            f"{entry['seconds']:.3f}",
            fmt_rate(entry["tokens_per_s"]),
            "" if cpu is None else f"{cpu:.2f}",
            percent,
            entry["note"],
        )

    standalone, add = figures["standalone"], figures["add"]
    row("parse", standalone["parse"])
    row("split (benchmark only)", standalone["split"])
    row("chunk (standalone)", standalone["chunk"])
    table.add_section()
    row("add: chunk", add["chunk"], share=True)
    row("add: embed", add["embed"], share=True)
    row("add: index (commit)", add["commit"], share=True)
    row("add: index (publish)", add["publish"], share=True)
    row("add: index total", add["index"], share=True)
    row("add: overall", add["total"], share=True)
    table.add_section()
    row("raw model encode", figures["raw_encode"])
    row("direct embed_with_cache", figures["direct_embed_with_cache"])
    console.print(table)

    window = figures["window_split"]
    if window is not None:
        console.print(
            f"Window split (a tokenizer pass inside embed): {window['seconds']:.2f} s, "
            f"{window['texts']:,} texts -> {window['pieces']:,} model inputs"
        )
    targets = figures["targets"]
    overhead = figures["embed_overhead_pct"]
    if overhead is not None:
        verdict = "met" if targets["embed_overhead_met"] else "MISSED"
        console.print(
            f"Embed-stage overhead over raw encode: {overhead:+.1f} % "
            f"(target ≤ {EMBED_OVERHEAD_TARGET_PCT:.0f} %: {verdict}); by process CPU time "
            f"(less sensitive to other load on the machine): "
            f"{figures['embed_overhead_cpu_time_pct']:+.1f} %"
        )
    if figures["direct_embed_overhead_pct"] is not None:
        console.print(
            f"Direct embed_with_cache overhead over raw encode: "
            f"{figures['direct_embed_overhead_pct']:+.1f} %"
        )
    reingest = figures["reingest"]
    fraction = reingest["fraction_of_first"]
    if fraction is not None:
        verdict = "met" if targets["reingest_met"] else "MISSED"
        console.print(
            f"Re-ingest of the unchanged corpus: {reingest['seconds']:.3f} s = "
            f"{fraction * 100:.2f} % of the first ingest (target ≤ "
            f"{REINGEST_TARGET_FRACTION * 100:.0f} %: {verdict}); "
            f"report: {reingest['report']}"
        )
    child = reingest["new_process"]
    if "total_seconds" in child:
        console.print(
            f"Re-ingest from a new process (as a second `windowpack add`): open "
            f"{child['open_seconds']:.3f} s + add {child['add_seconds']:.3f} s = "
            f"{reingest['new_process_fraction_of_first'] * 100:.2f} % of the first ingest; "
            f"report: {child['report']}"
        )
    else:
        console.print(f"[red]Re-ingest in a new process failed: {child.get('error')}")
    console.print(f"First ingest report: {add['report']}")


if __name__ == "__main__":
    sys.exit(main())
