"""Ingest throughput per stage, the embed stage's overhead over the raw model, and re-ingest cost.

Run from the repository root with the project virtualenv (`make demo` creates `.venv`). Full
size, real default model: about 5 minutes on an idle 2-core machine, most of it two passes of
the model over the chunks and document-level summaries (the pipeline's and the raw model's):

    .venv/bin/python benchmarks/ingest.py ../shared/data/ruler/PaulGrahamEssays.json

Quick run on a truncated corpus (under a minute):

    .venv/bin/python benchmarks/ingest.py ../shared/data/ruler/PaulGrahamEssays.json \\
        --limit-tokens 60000

CORPUS is anything `parse_paths` takes (a file or a folder). A parsed document longer than
100,000 characters (the essays JSON is one 3M-character `text`) is split into documents of
~20,000 characters at blank-line or sentence boundaries (`--split-chars`), so the corpus looks
like a real multi-document one; the output says so. `--limit-tokens N` keeps the first N
tokens (o200k_base) of the corpus.

What is measured (tokens/s are corpus tokens, o200k_base, over each stage's wall time):

- parse: `parse_paths` on CORPUS.
- chunk: `chunk_document` with the collection tokenizer (o200k_base) and 200-token chunks.
- overall: one `Collection.add` of the whole corpus into a fresh store (nothing cached) with
  the default (extractive) summarizer; its stages are timed with the progress callback, which
  reports chunk → summarize → embed → index → done (see `bench_common.StageClock`):
    chunk     = call start → last "chunk" (validation, hashing, upsert check, chunking),
    summarize = last "chunk" → first "embed" (the document-level summary nodes),
    embed     = first → last "embed" (`embed_with_cache` on the chunk texts and the
                document-level node texts: window split, model, cache),
    index     = last "embed" → "done", split by timing calls inside it: the commit (documents,
                chunks, nodes, regrouping and summarising the collection-level nodes), then
                embedding the collection-level node texts and `IndexStore.publish`.
  The summary nodes (count, tokens; document and collection level) are read from the store.
- raw encode: the sentence-transformers model's own `encode(texts, batch_size=16,
  normalize_embeddings=True)` on the same set of texts the embed stage embedded: the distinct
  chunk texts plus the distinct document-level summary node texts (read from the store after
  the add: nodes with a `document_id`). The output checks that this count equals the number
  of texts the embed stage reported embedding.
- embed overhead = pipeline embed time / raw encode time - 1.   Target: ≤ 10 %.
- re-ingest: `Collection.add` of the unchanged documents (same ids) into the same store, as a
  fraction of the first ingest.                                 Target: ≤ 5 %.
  Also timed: the same re-ingest from a new process (a second `windowpack add`: the store is
  opened afresh and the model is not loaded), reported beside it.

`--chat` ingests one conversation instead: `windowpack.evals.mrcr_gdm.gdm_mrcr_case` over
CORPUS (the essays), seed 1, 8 needles, of `--limit-tokens` tokens (default 150K), the shape
of the 1M-token chat of issue 16; compare its tokens/s with a prose run of the same size:

    .venv/bin/python benchmarks/ingest.py --chat --limit-tokens 150000 --no-raw
    .venv/bin/python benchmarks/ingest.py --limit-tokens 150000 --no-raw

`--no-raw` skips the raw encode (and so the overhead figure). `--direct-embed` also times
`embed_with_cache` called directly on the same texts on a second fresh database (one more
model pass). The window split (a tokenizer pass inside embed) is timed inside the add's embed
stage (`windowpack.embed.timed_calls()`). `--smoke` runs it all in seconds: a few thousand
tokens, the hash embedder (so no raw encode). Figures are printed as a table and written to
`benchmarks/results/ingest.json`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_common import (
    ESSAYS_JSON,
    SMOKE_TOKENS,
    SPLIT_CHARS,
    CallTimer,
    Corpus,
    StageClock,
    add_smoke_option,
    count_tokens,
    fmt_rate,
    limit_tokens,
    load_corpus,
    machine_info,
    rate,
    store_folder,
    write_results,
)
from rich.console import Console
from rich.table import Table

import windowpack as wp
from windowpack import embed, index, ingest
from windowpack.config import DEFAULT_EMBEDDER, StoreConfig
from windowpack.documents import chunk_document
from windowpack.embed import (
    HASH_EMBEDDER,
    Embedder,
    SentenceTransformerEmbedder,
    embed_with_cache,
    get_embedder,
)
from windowpack.storage import (
    create_database_engine,
    migrate,
    repository,
    session_factory,
    sqlite_url,
)
from windowpack.text import content_hash, get_token_counter
from windowpack.types import Document

COLLECTION = "ingest-bench"
EMBED_OVERHEAD_TARGET_PCT = 10.0
REINGEST_TARGET_FRACTION = 0.05
CHAT_TOKENS = 150_000


def _index_calls() -> dict[str, tuple[object, str]]:
    """Calls timed inside the add, as the components name them (`timed_calls()`): the index
    stage's parts, and the window split inside the embed stage."""
    ingesting, indexing, embedding = ingest.timed_calls(), index.timed_calls(), embed.timed_calls()
    return {
        "commit": ingesting["commit"],
        "collection_levels": ingesting["collection levels"],
        "embed_and_publish": ingesting["embed and publish"],
        "publish": indexing["publish"],
        "window_split": embedding["window split"],
    }


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
    chunk_texts = [
        doc.text[s.start : s.end] for doc, ss in zip(documents, spans, strict=True) for s in ss
    ]
    distinct_chunks = len(set(chunk_texts))

    embedder = get_embedder(config.embedder, batch_size=config.embed_batch_size)
    started = time.perf_counter()
    embedder.embed(chunk_texts[:32])  # load the model and warm it up, untimed
    for module in ("faiss", "bm25s", "Stemmer"):  # first-use imports are not index work
        importlib.import_module(module)
    load_seconds = time.perf_counter() - started
    console.print(
        f"  {len(chunk_texts):,} chunks ({distinct_chunks:,} distinct); model load + warm-up + "
        f"index-library imports: {load_seconds:.1f} s (not counted)"
    )

    with store_folder(args.store, "wp-ingest-bench-") as folder:
        store = wp.open(folder, config=config)
        try:
            collection = store.collection(COLLECTION)
            clock = StageClock()
            console.print("Ingesting into a fresh store (col.add) ...")
            with CallTimer(_index_calls()) as calls:
                clock.start()
                report = collection.add(documents, progress=clock)
                clock.finish()
            with store.sessions() as session:
                nodes = repository.tree_nodes(session, collection.collection_id)
            console.print("Re-ingesting the unchanged corpus (col.add, same ids) ...")
            started = time.perf_counter()
            again = collection.add(documents)
            reingest_seconds = time.perf_counter() - started
        finally:
            store.close()
        console.print("Re-ingesting the unchanged corpus from a new process ...")
        child = _reingest_in_new_process(args, folder)
    stages, cpu_stages = clock.stages(), clock.stages(clock=1)
    document_nodes = [node for node in nodes if node.document_id is not None]
    collection_nodes = [node for node in nodes if node.document_id is None]
    # What the embed stage embedded: each distinct chunk or document-level node text once.
    embed_texts = chunk_texts + [node.text for node in document_nodes]
    distinct_texts = list(dict.fromkeys(embed_texts))

    window_seconds = calls.seconds["window_split"] if calls.calls["window_split"] else None
    raw_seconds, raw_cpu_seconds = None, None
    if isinstance(embedder, SentenceTransformerEmbedder) and not args.no_raw:
        console.print(
            f"Raw model encode on the same {len(distinct_texts):,} distinct texts "
            "(chunks + document-level summary nodes) ..."
        )
        model = embedder.model  # the pipeline's own model, already warmed up above
        started, cpu_started = time.perf_counter(), time.process_time()
        model.encode(
            distinct_texts,
            batch_size=config.embed_batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        raw_seconds = time.perf_counter() - started
        raw_cpu_seconds = time.process_time() - cpu_started
    elif not args.no_raw and not args.smoke:
        console.print(
            f"[yellow]{config.embedder!r} is not a sentence-transformers model: no raw encode"
        )

    direct_seconds = None
    if args.direct_embed:
        console.print("Direct embed_with_cache on another fresh database ...")
        direct_seconds = _direct_embed_seconds(embedder, embed_texts)

    def stage(seconds: float, note: str, cpu: float | None = None) -> dict[str, Any]:
        return {
            "seconds": seconds,
            "cpu_seconds": cpu,
            "tokens_per_s": rate(tokens, seconds),
            "note": note,
        }

    add = {
        name: stage(stages[name], note, cpu_stages[name])
        for name, note in (
            ("chunk", "validate, hash, upsert check, chunk_document"),
            ("summarize", "document-level summary nodes (extractive)"),
            ("embed", "embed_with_cache: chunk + document-node texts (nothing cached)"),
            ("index", "commit + collection-node embed + publish"),
            ("total", "end-to-end col.add"),
        )
    }
    add |= {
        "commit": stage(calls.seconds["commit"], "one transaction: documents, chunks, all nodes"),
        "collection_levels": stage(
            calls.seconds["collection_levels"], "regroup + summarise collection-level nodes"
        ),
        "node_embed": stage(
            calls.seconds["embed_and_publish"] - calls.seconds["publish"],
            "embed_with_cache: collection-level node texts",
        ),
        "publish": stage(calls.seconds["publish"], "IndexStore.publish: FAISS + BM25 + files"),
    }
    overhead = (stages["embed"] / raw_seconds - 1.0) * 100.0 if raw_seconds else None
    cpu_overhead = (
        (cpu_stages["embed"] / raw_cpu_seconds - 1.0) * 100.0 if raw_cpu_seconds else None
    )
    direct_overhead = (
        (direct_seconds / raw_seconds - 1.0) * 100.0 if direct_seconds and raw_seconds else None
    )
    fraction = reingest_seconds / stages["total"] if stages["total"] > 0 else None
    figures: dict[str, Any] = {
        "command": " ".join(sys.argv),
        "corpus": {
            "path": str(args.corpus),
            "description": corpus.description,
            "documents": len(documents),
            "tokens": tokens,
            "tokenizer": config.tokenizer,
            "limit_tokens": args.limit_tokens,
            "chunk_tokens": config.chunk_tokens,
            "chunks": len(chunk_texts),
            "distinct_chunks": distinct_chunks,
        },
        "embedder": config.embedder,
        "standalone": {
            "parse": stage(corpus.parse_seconds, "parse_paths"),
            "split": stage(corpus.split_seconds, "cutting long documents into ~20K-char parts"),
            "chunk": stage(chunk_seconds, "chunk_document, o200k_base, 200 tokens"),
        },
        "add": add
        | {
            "after_done": stages["after_done"],
            "progress_events": clock.events,
            "report": _report_dict(report),
        },
        "tree": {
            "document_nodes": len(document_nodes),
            "document_node_tokens": sum(node.token_count for node in document_nodes),
            "distinct_document_node_texts": len({node.text for node in document_nodes}),
            "collection_nodes": len(collection_nodes),
            "collection_node_tokens": sum(node.token_count for node in collection_nodes),
            "summaries_reported": report.summaries,
            "summary_failures": len(report.summary_failures),
        },
        "embed_texts": {
            "distinct": len(distinct_texts),
            "embedded_by_embed_stage": clock.embedded,
            "match": len(distinct_texts) == clock.embedded,
        },
        "raw_encode": None
        if raw_seconds is None
        else {
            **stage(
                raw_seconds,
                "model.encode(batch_size=16, normalize_embeddings=True)",
                raw_cpu_seconds,
            ),
            "texts": len(distinct_texts),
        },
        "window_split": None
        if window_seconds is None
        else {"seconds": window_seconds, "calls": calls.calls["window_split"]},
        "direct_embed_with_cache": None if direct_seconds is None else stage(direct_seconds, ""),
        "embed_overhead_pct": overhead,
        "embed_overhead_cpu_time_pct": cpu_overhead,
        "direct_embed_overhead_pct": direct_overhead,
        "reingest": {
            "seconds": reingest_seconds,
            "fraction_of_first": fraction,
            "report": _report_dict(again),
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
    _print_figures(console, figures)
    path = write_results("ingest", figures)
    console.print(f"Figures written to {path}")
    return 0


def _load_documents(args: argparse.Namespace, config: StoreConfig) -> tuple[Corpus, list[Document]]:
    if args.chat:
        return _chat_corpus(args, config)
    corpus = load_corpus(
        [args.corpus], max_bytes=config.max_file_bytes, split_chars=args.split_chars
    )
    documents = corpus.documents
    if args.limit_tokens is not None:
        counter = get_token_counter(config.tokenizer)
        documents = limit_tokens(documents, counter, args.limit_tokens)
    return corpus, documents


def _chat_corpus(args: argparse.Namespace, config: StoreConfig) -> tuple[Corpus, list[Document]]:
    """One GDM-MRCR-shaped conversation over the essays, of `--limit-tokens` tokens."""
    from windowpack.evals import gdm_mrcr_case, load_haystack

    length = args.limit_tokens or CHAT_TOKENS
    started = time.perf_counter()
    counter = get_token_counter(config.tokenizer)
    case = gdm_mrcr_case(load_haystack(args.corpus), counter, length=length, needles=8, seed=1)
    seconds = time.perf_counter() - started
    description = (
        f"a {case.params['turns']:,}-turn GDM-MRCR-shaped conversation (one transcript "
        f"document, seed 1, 8 needles) of <= {length:,} tokens over {args.corpus}"
    )
    corpus = Corpus(
        documents=list(case.documents),
        description=description,
        parse_seconds=seconds,
        split_seconds=0.0,
        files=1,
    )
    return corpus, corpus.documents


def _reingest_in_new_process(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """Re-ingest as a second `windowpack add` would: a new process, the model not loaded."""
    command = [sys.executable, __file__, str(args.corpus), "--reingest-child", str(folder)]
    command += ["--embedder", args.embedder, "--split-chars", str(args.split_chars)]
    if args.chat:
        command.append("--chat")
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
    parser.add_argument(
        "--chat",
        action="store_true",
        help="ingest one MRCR-shaped conversation over CORPUS (the essays) instead, of "
        f"--limit-tokens tokens (default {CHAT_TOKENS:,})",
    )
    parser.add_argument(
        "--no-raw", action="store_true", help="skip the raw model encode (one model pass less)"
    )
    parser.add_argument("--reingest-child", type=Path, default=None, help=argparse.SUPPRESS)
    add_smoke_option(parser)
    args = parser.parse_args(argv)
    if args.limit_tokens is not None and args.limit_tokens < 1:
        parser.error("--limit-tokens must be positive")
    if args.smoke:
        args.embedder, args.limit_tokens = HASH_EMBEDDER, SMOKE_TOKENS
    return args


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


def _report_dict(report: wp.IngestReport) -> dict[str, Any]:
    return {
        "added": report.added,
        "replaced": report.replaced,
        "unchanged": report.unchanged,
        "chunks": report.chunks,
        "tokens": report.tokens,
        "embedded": report.embedded,
        "summaries": report.summaries,
        "summary_failures": len(report.summary_failures),
        "index_version": report.index_version,
    }


def _print_figures(console: Console, figures: dict[str, Any]) -> None:
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
    for name in ("chunk", "summarize", "embed", "index"):
        row(f"add: {name}", add[name], share=True)
    for name in ("commit", "collection_levels", "node_embed", "publish"):
        label = "of which collection levels" if name == "collection_levels" else name
        row(f"  index: {label}", add[name], share=True)
    row("add: overall", add["total"], share=True)
    table.add_section()
    row("raw model encode", figures["raw_encode"])
    row("direct embed_with_cache", figures["direct_embed_with_cache"])
    console.print(table)

    tree, texts = figures["tree"], figures["embed_texts"]
    node_tokens = tree["document_node_tokens"] + tree["collection_node_tokens"]
    console.print(
        f"Summary nodes: {tree['document_nodes']:,} document-level "
        f"({tree['document_node_tokens']:,} tokens, {tree['distinct_document_node_texts']:,} "
        f"distinct texts) + {tree['collection_nodes']:,} collection-level "
        f"({tree['collection_node_tokens']:,} tokens); all nodes = "
        f"{node_tokens / max(1, corpus['tokens']) * 100:.1f} % of the corpus tokens; "
        f"summarised afresh: {tree['summaries_reported']:,}, failures: {tree['summary_failures']}"
    )
    console.print(
        f"Texts for the raw encode: {corpus['distinct_chunks']:,} distinct chunk texts + "
        f"document-level node texts = {texts['distinct']:,} distinct texts; the embed stage "
        f"reported embedding {texts['embedded_by_embed_stage']:,} "
        + ("(same set size)" if texts["match"] else "[red](MISMATCH: comparison not like for like)")
    )
    window = figures["window_split"]
    if window is not None:
        console.print(
            f"Window split (a tokenizer pass inside the add's embed stage): "
            f"{window['seconds']:.2f} s in {window['calls']} call(s)"
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
