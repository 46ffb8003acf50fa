"""Summary-tree cost: the full build, a full rebuild, and adding one document to a built tree.

Run from the repository root with the project virtualenv (`make demo` creates `.venv`). Real
default model (as users run it; it embeds the ~674K-token corpus and the summary nodes: about
2.5 minutes on an idle 2-core machine, almost all of it the model in the first add):

    .venv/bin/python benchmarks/tree.py ../shared/data/ruler/PaulGrahamEssays.json

Quick run without model cost (the deterministic hash embedder; the summarizer and the tree
work are the same, only the embedding is cheap):

    .venv/bin/python benchmarks/tree.py ../shared/data/ruler/PaulGrahamEssays.json --embedder hash

Options: `--store DIR` (a new or empty folder, kept; default a temporary one), `--fanout N`
(children per node, default 8), `--limit-tokens N` (keep the first N tokens), `--split-chars`,
`--smoke` (seconds: a few thousand tokens, the hash embedder; a check, not figures).

The corpus is loaded as `benchmarks/ingest.py` does (`parse_paths`; a text over 100,000 chars is
cut into documents of ~20,000 chars). Its LAST document is held out as the new document of
part (b) (the essays: part 0151, ~6K tokens, never seen by the store); the others are built.
The default summarizer is the extractive one (`ExtractiveSummarizer()`, diversity 0.3).

(a) Full build. One `Collection.add` of the documents into a fresh store, timed per stage with
    the progress callback (chunk → summarize → embed → index → done, see
    `bench_common.StageClock`); tree build = the summarize stage (document-level nodes) + the
    regroup of the collection-level nodes inside the commit (timed by wrapping
    `update_collection_levels`). Then `Collection.rebuild_tree`, which re-summarises every
    node: uncached, with `ExtractiveSummarizer(diversity=0.31)` (a different summarizer id, so
    no summary-cache hits: the true full rebuild cost, its new node texts embedded too), then
    cached, with the store's summarizer again (every node from the summary cache and every
    vector from the embedding cache; this also restores the add's tree). Printed: nodes and
    tokens per level (`col.tree()`), and the summary ratio.  Target: 10-20 %.
(b) Incremental. `Collection.add` of the held-out document: the tree work (summarize stage +
    index stage, from the progress callback) and the whole add, each as a fraction of the
    uncached full rebuild.                                       Target: ≤ 5 %.
    Node rows (id, children_hash, text hash, parent) are compared before/after: the nodes of
    the other documents must be untouched (same ids and hashes); only the new document's nodes
    and the collection-level path (one node per collection level) may change.

Figures are printed and written to `benchmarks/results/tree.json`.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench_common import (
    ESSAYS_JSON,
    SMOKE_TOKENS,
    SPLIT_CHARS,
    CallTimer,
    StageClock,
    add_smoke_option,
    count_tokens,
    limit_tokens,
    load_corpus,
    machine_info,
    store_folder,
    write_results,
)
from rich.console import Console
from rich.table import Table

import windowpack as wp
from windowpack import index, ingest
from windowpack.config import DEFAULT_EMBEDDER, StoreConfig
from windowpack.embed import HASH_EMBEDDER, get_embedder
from windowpack.storage import repository
from windowpack.summarizer import ExtractiveSummarizer
from windowpack.text import get_token_counter
from windowpack.types import IngestReport, TreeOverview

COLLECTION = "tree-bench"
RATIO_TARGET = (0.10, 0.20)
INCREMENTAL_TARGET_FRACTION = 0.05
UNCACHED_DIVERSITY = 0.31


def _calls() -> dict[str, tuple[object, str]]:
    """Calls timed inside each run, as the components name them (`timed_calls()`)."""
    return {
        "collection_levels": ingest.timed_calls()["collection levels"],
        "publish": index.timed_calls()["publish"],
    }


@dataclasses.dataclass(frozen=True)
class NodeKey:
    """What identifies a node row's content and place, for the before/after comparison."""

    document_id: int | None
    level: int
    children_hash: str
    text_hash: str
    parent_id: int | None


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    config = StoreConfig(embedder=args.embedder, fanout=args.fanout)
    console = Console(width=130)
    counter = get_token_counter(config.tokenizer)
    corpus = load_corpus(
        [args.corpus], max_bytes=config.max_file_bytes, split_chars=args.split_chars
    )
    documents = corpus.documents
    if args.limit_tokens is not None:
        documents = limit_tokens(documents, counter, args.limit_tokens)
    if len(documents) < 2:
        raise SystemExit("the corpus must give at least 2 documents (one is held out)")
    base, new_document = documents[:-1], documents[-1]
    base_tokens, new_tokens = count_tokens(base, counter), count_tokens([new_document], counter)
    model_note = {DEFAULT_EMBEDDER: "the real default model", "hash": "hash: no model cost"}.get(
        args.embedder, "not the default model"
    )
    console.print(f"[bold]Corpus[/bold]: {corpus.description}")
    console.print(
        f"  built: {len(base):,} documents, {base_tokens:,} {config.tokenizer} tokens; held out as "
        f"the new document: {new_document.id!r} ({new_tokens:,} tokens)"
    )
    console.print(
        f"  embedder {config.embedder!r} ({model_note}); fanout {config.fanout}; chunks of "
        f"{config.chunk_tokens} tokens; summarizer {ExtractiveSummarizer().summarizer_id}"
    )
    started = time.perf_counter()
    get_embedder(config.embedder, batch_size=config.embed_batch_size).embed(["warm up"] * 4)
    for module in ("faiss", "bm25s", "Stemmer"):
        importlib.import_module(module)
    console.print(
        f"  model load + warm-up + imports: {time.perf_counter() - started:.1f} s (not counted)"
    )

    runs: dict[str, dict[str, Any]] = {}
    with store_folder(args.store, "wp-tree-bench-") as folder:
        store = wp.open(folder, config=config)
        try:
            col = store.collection(COLLECTION)

            def timed(name: str, action: Callable[[StageClock], IngestReport]) -> IngestReport:
                console.print(f"{name} ...")
                clock = StageClock()
                with CallTimer(_calls()) as calls:
                    clock.start()
                    report: IngestReport = action(clock)
                    clock.finish()
                runs[name] = _run_figures(clock, calls, report)
                return report

            timed("add", lambda clock: col.add(base, progress=clock))
            built = col.tree()
            uncached_summarizer = ExtractiveSummarizer(diversity=UNCACHED_DIVERSITY)
            timed(
                "rebuild_uncached",
                lambda clock: col.rebuild_tree(uncached_summarizer, progress=clock),
            )
            uncached_tree = col.tree()
            timed("rebuild_cached", lambda clock: col.rebuild_tree(progress=clock))
            restored = col.tree()
            before = _node_rows(store, col)
            timed("add_one", lambda clock: col.add([new_document], progress=clock))
            after = _node_rows(store, col)
            with store.sessions() as session:
                rows = repository.documents_by_external_id(
                    session, col.collection_id, [new_document.id or ""]
                )
                new_row_id = rows[new_document.id or ""].id
            final = col.tree()
        finally:
            store.close()

    add, uncached, add_one = runs["add"], runs["rebuild_uncached"], runs["add_one"]
    tree_build = add["stages"]["summarize"] + add["calls"]["collection_levels"]
    full_rebuild = uncached["stages"]["total"]
    tree_work = add_one["stages"]["summarize"] + add_one["stages"]["index"]
    tree_proper = add_one["stages"]["summarize"] + add_one["calls"]["collection_levels"]
    figures: dict[str, Any] = {
        "command": " ".join(sys.argv),
        "corpus": {
            "description": corpus.description,
            "documents_built": len(base),
            "tokens_built": base_tokens,
            "new_document": new_document.id,
            "new_document_tokens": new_tokens,
            "tokenizer": config.tokenizer,
            "limit_tokens": args.limit_tokens,
        },
        "embedder": config.embedder,
        "real_model": args.embedder == DEFAULT_EMBEDDER,
        "fanout": config.fanout,
        "runs": runs,
        "tree_build_seconds": tree_build,
        "tree": _tree_dict(built),
        "tree_uncached_summarizer": _tree_dict(uncached_tree),
        "restored_same_as_built": _tree_dict(restored) == _tree_dict(built),
        "tree_after_add_one": _tree_dict(final),
        "incremental": {
            "tree_work_seconds": tree_work,
            "add_seconds": add_one["stages"]["total"],
            "tree_work_fraction": tree_work / full_rebuild if full_rebuild > 0 else None,
            "summaries_only_seconds": tree_proper,
            "summaries_only_fraction": tree_proper / full_rebuild if full_rebuild > 0 else None,
            "add_fraction": add_one["stages"]["total"] / full_rebuild if full_rebuild > 0 else None,
            "nodes": _node_changes(before, after, new_row_id),
        },
        "targets": {
            "summary_ratio": RATIO_TARGET,
            "incremental_fraction_max": INCREMENTAL_TARGET_FRACTION,
        },
        "machine": machine_info(),
    }
    _print_figures(console, figures)
    console.print(f"Figures written to {write_results('tree', figures)}")
    return 0


def _run_figures(clock: StageClock, calls: CallTimer, report: IngestReport) -> dict[str, Any]:
    return {
        "stages": clock.stages(),
        "cpu_stages": clock.stages(clock=1),
        "calls": dict(calls.seconds),
        "embedded_in_embed_stage": clock.embedded,
        "report": {
            "added": report.added,
            "chunks": report.chunks,
            "tokens": report.tokens,
            "embedded": report.embedded,
            "summaries": report.summaries,
            "summary_failures": len(report.summary_failures),
            "index_version": report.index_version,
        },
    }


def _tree_dict(tree: TreeOverview) -> dict[str, Any]:
    return {
        "documents": tree.documents,
        "chunks": tree.chunks,
        "chunk_tokens": tree.chunk_tokens,
        "summary_tokens": tree.summary_tokens,
        "summary_ratio": tree.summary_ratio,
        "levels": [dataclasses.asdict(level) for level in tree.levels],
    }


def _node_rows(store: wp.Store, col: wp.Collection) -> dict[int, NodeKey]:
    with store.sessions() as session:
        return {
            row.id: NodeKey(
                row.document_id, row.level, row.children_hash, row.text_hash, row.parent_id
            )
            for row in repository.tree_nodes(session, col.collection_id)
        }


def _node_changes(
    before: dict[int, NodeKey], after: dict[int, NodeKey], new_document_id: int
) -> dict[str, Any]:
    """Counts of node rows kept, changed, removed and added, by scope."""

    def content(key: NodeKey) -> tuple[int | None, int, str, str]:
        return key.document_id, key.level, key.children_hash, key.text_hash

    old_docs = {i: k for i, k in before.items() if k.document_id is not None}
    old_docs_after = {
        i: k for i, k in after.items() if k.document_id not in (None, new_document_id)
    }
    kept = [i for i in old_docs if i in after and content(after[i]) == content(old_docs[i])]
    coll_before = [k for k in before.values() if k.document_id is None]
    coll_after = [k for k in after.values() if k.document_id is None]
    hashes_before = {k.children_hash for k in coll_before}
    hashes_after = {k.children_hash for k in coll_after}
    coll_ids_kept = sum(1 for i, k in after.items() if k.document_id is None and i in before)
    return {
        "other_documents": {
            "before": len(old_docs),
            "unchanged": len(kept),
            "changed": sum(1 for i in old_docs if i in after) - len(kept),
            "removed": sum(1 for i in old_docs if i not in after),
            "added": sum(1 for i in old_docs_after if i not in before),
            "parent_rewritten": sum(1 for i in kept if after[i].parent_id != old_docs[i].parent_id),
        },
        "new_document": sum(1 for k in after.values() if k.document_id == new_document_id),
        "collection": {
            "levels_after": len({k.level for k in coll_after}),
            "before": len(coll_before),
            "after": len(coll_after),
            "ids_kept": coll_ids_kept,
            "unchanged_hashes": len(hashes_before & hashes_after),
            "new_hashes": len(hashes_after - hashes_before),
            "dropped_hashes": len(hashes_before - hashes_after),
        },
    }


def _print_figures(console: Console, figures: dict[str, Any]) -> None:
    runs = figures["runs"]
    table = Table(
        title=f"Summary tree (embedder {figures['embedder']!r}, fanout {figures['fanout']})"
    )
    for column in ("run", "total s", "chunk", "summarize", "embed", "index", "coll. levels"):
        table.add_column(column, justify="left" if column == "run" else "right")
    table.add_column("publish", justify="right")
    table.add_column("summarised", justify="right")
    table.add_column("embedded", justify="right")
    labels = {
        "add": "(a) col.add, fresh store",
        "rebuild_uncached": f"(a) rebuild_tree, d={UNCACHED_DIVERSITY} (uncached)",
        "rebuild_cached": "(a) rebuild_tree, default (cached)",
        "add_one": "(b) col.add of the new document",
    }
    for name, label in labels.items():
        run = runs[name]
        stages = run["stages"]
        table.add_row(
            label,
            *(f"{stages[s]:.3f}" for s in ("total", "chunk", "summarize", "embed", "index")),
            f"{run['calls']['collection_levels']:.3f}",
            f"{run['calls']['publish']:.3f}",
            f"{run['report']['summaries']:,}",
            f"{run['report']['embedded']:,}",
        )
    console.print(table)
    console.print(
        "  chunk = start → last 'chunk' event (rebuild: loading documents and chunks); "
        "coll. levels (regroup + summarise the collection-level nodes) and publish "
        "(IndexStore.publish) are parts of index."
    )
    add = runs["add"]["stages"]
    console.print(
        f"Tree build in the add: summarize stage {add['summarize']:.3f} s + collection levels "
        f"{runs['add']['calls']['collection_levels']:.3f} s = "
        f"{figures['tree_build_seconds']:.3f} s "
        f"({figures['tree_build_seconds'] / add['total'] * 100:.1f} % of the add)"
    )
    uncached = runs["rebuild_uncached"]
    console.print(
        f"Uncached rebuild: {uncached['report']['summaries']:,} nodes summarised afresh; "
        f"{uncached['report']['embedded']:,} node texts embedded (the others came out identical "
        "to the default summarizer's and hit the embedding cache)"
    )
    _print_tree(console, "Tree after the add (default summarizer)", figures["tree"])
    low, high = RATIO_TARGET
    ratio = figures["tree"]["summary_ratio"]
    verdict = "met" if low <= ratio <= high else "MISSED"
    console.print(
        f"Summary ratio: {ratio * 100:.2f} % (target {low * 100:.0f}-{high * 100:.0f} %: "
        f"{verdict}); with d={UNCACHED_DIVERSITY}: "
        f"{figures['tree_uncached_summarizer']['summary_ratio'] * 100:.2f} %; "
        f"cached rebuild restored the same shape: {figures['restored_same_as_built']}"
    )
    incremental = figures["incremental"]
    corpus = figures["corpus"]
    full = runs["rebuild_uncached"]["stages"]["total"]
    console.print(
        f"(b) New document {corpus['new_document']!r} ({corpus['new_document_tokens']:,} tokens): "
        f"tree work (summarize + index) {incremental['tree_work_seconds']:.3f} s, whole add "
        f"{incremental['add_seconds']:.3f} s; full uncached rebuild {full:.3f} s"
    )
    for key, label in (
        ("tree_work_fraction", "tree work (summarize + index stages)"),
        ("add_fraction", "whole add"),
        ("summaries_only_fraction", "summaries only (summarize stage + collection levels)"),
    ):
        fraction = incremental[key]
        if fraction is not None:
            verdict = "met" if fraction <= INCREMENTAL_TARGET_FRACTION else "MISSED"
            console.print(
                f"  {label} = {fraction * 100:.2f} % of the full uncached rebuild "
                f"(target ≤ {INCREMENTAL_TARGET_FRACTION * 100:.0f} %: {verdict})"
            )
    nodes = incremental["nodes"]
    others, coll = nodes["other_documents"], nodes["collection"]
    untouched = others["unchanged"] == others["before"] and others["added"] == 0
    console.print(
        f"  Nodes of the other documents: {others['before']:,} before, {others['unchanged']:,} "
        f"unchanged (same id and hashes), {others['changed']} changed, {others['removed']} "
        f"removed, {others['added']} added -> untouched: {untouched}; parent id rewritten: "
        f"{others['parent_rewritten']}"
    )
    path_only = coll["new_hashes"] <= coll["levels_after"]
    console.print(
        f"  New document's nodes: {nodes['new_document']}. Collection level: {coll['before']} "
        f"-> {coll['after']} nodes over {coll['levels_after']} levels; by children hash "
        f"{coll['unchanged_hashes']} unchanged, {coll['new_hashes']} new, "
        f"{coll['dropped_hashes']} dropped (only the path changed: {path_only}); row ids kept: "
        f"{coll['ids_kept']} (collection-level rows are rewritten on every add)"
    )
    summarised = runs["add_one"]["report"]["summaries"]
    console.print(
        f"  Summarised afresh by the add: {summarised} "
        f"(= new document's {nodes['new_document']} + {summarised - nodes['new_document']} "
        "collection-level)"
    )


def _print_tree(console: Console, title: str, tree: dict[str, Any]) -> None:
    console.print(
        f"{title}: {tree['documents']:,} documents, {tree['chunks']:,} chunks, "
        f"{tree['chunk_tokens']:,} chunk tokens"
    )
    table = Table()
    table.add_column("level", justify="right")
    table.add_column("scope")
    for column in ("nodes", "tokens", "% of chunk tokens"):
        table.add_column(column, justify="right")
    for level in tree["levels"]:
        share = level["tokens"] / tree["chunk_tokens"] * 100 if tree["chunk_tokens"] else 0.0
        nodes, tokens = level["nodes"], level["tokens"]
        table.add_row(
            str(level["level"]), level["scope"], f"{nodes:,}", f"{tokens:,}", f"{share:.2f}"
        )
    nodes = sum(level["nodes"] for level in tree["levels"])
    ratio = tree["summary_ratio"] * 100
    table.add_row("all", "", f"{nodes:,}", f"{tree['summary_tokens']:,}", f"{ratio:.2f}")
    console.print(table)


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Summary-tree build, rebuild and incremental-add cost.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("corpus", type=Path, nargs="?", default=ESSAYS_JSON, help="file or folder")
    parser.add_argument("--store", type=Path, default=None, help="a new or empty folder (kept)")
    parser.add_argument(
        "--embedder", default=DEFAULT_EMBEDDER, help="embedder name ('hash': no model)"
    )
    parser.add_argument(
        "--fanout", type=int, default=StoreConfig().fanout, help="children per node"
    )
    parser.add_argument("--limit-tokens", type=int, default=None, help="keep the first N tokens")
    parser.add_argument(
        "--split-chars", type=int, default=SPLIT_CHARS, help="part size, long texts"
    )
    add_smoke_option(parser)
    args = parser.parse_args(argv)
    if args.limit_tokens is not None and args.limit_tokens < 1:
        parser.error("--limit-tokens must be positive")
    if args.smoke:
        args.embedder, args.limit_tokens = HASH_EMBEDDER, SMOKE_TOKENS
    return args


if __name__ == "__main__":
    sys.exit(main())
