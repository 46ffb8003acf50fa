"""The `windowpack` command line: thin commands over the service facade."""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.padding import Padding
from rich.table import Table

from windowpack.errors import WindowpackError

if TYPE_CHECKING:
    from windowpack.service import Collection, Store
    from windowpack.types import Hit, IngestProgress, IngestReport, TreeNode, TreeOverview

app = typer.Typer(
    help="windowpack: the best context window for one question, at any token budget.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
console = Console()
errors = Console(stderr=True)

StoreOption = Annotated[
    Path, typer.Option("--store", envvar="WINDOWPACK_STORE", help="Store folder (embedded).")
]
CollectionOption = Annotated[str, typer.Option("--collection", "-c", help="Collection name.")]
EmbedderOption = Annotated[
    str | None,
    typer.Option(help="Embedding model name or path ('hash' for a model-free dry run)."),
]


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files and folders to add.")],
    store: StoreOption = Path("wp-store"),
    collection: CollectionOption = "default",
    tokenizer: Annotated[str | None, typer.Option(help="Tokenizer of a new collection.")] = None,
    chunk_tokens: Annotated[
        int | None, typer.Option(help="Chunk size of a new collection.")
    ] = None,
    embedder: EmbedderOption = None,
) -> None:
    """Parse, chunk, embed and index files and folders (txt, md, html, pdf, json, jsonl)."""
    col = _open(store, embedder).collection(
        collection, tokenizer=tokenizer, chunk_tokens=chunk_tokens
    )
    report = _add_with_progress(col, lambda callback: col.add_files(paths, progress=callback))
    _print_report(report)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="The question or keywords.")],
    k: Annotated[int, typer.Option("-k", help="Number of hits.")] = 10,
    store: StoreOption = Path("wp-store"),
    collection: CollectionOption = "default",
    as_json: Annotated[bool, typer.Option("--json", help="Print hits as JSON.")] = False,
    embedder: EmbedderOption = None,
) -> None:
    """Print the k most relevant verbatim chunks."""
    hits = _open(store, embedder).collection(collection, create=False).search(query, k=k)
    if as_json:
        print(json.dumps([asdict(hit) for hit in hits], ensure_ascii=False, indent=2))
    else:
        _print_hits(hits)


@app.command()
def pack(
    query: Annotated[str, typer.Argument(help="The question the window is for.")],
    budget: Annotated[int, typer.Option("--budget", "-b", help="Token budget (1 to 10M).")],
    store: StoreOption = Path("wp-store"),
    collection: CollectionOption = "default",
    tokenizer: Annotated[
        str, typer.Option(help="cl100k_base, o200k_base or a tokenizer.json path.")
    ] = "o200k_base",
    align: Annotated[bool, typer.Option(help="Pad the stable tier to 256 tokens.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the window as JSON.")] = False,
    messages: Annotated[
        bool, typer.Option(help="With --json: chat messages, stable tier first.")
    ] = False,
    cache_control: Annotated[
        bool, typer.Option(help="With --messages: an Anthropic cache breakpoint.")
    ] = False,
    embedder: EmbedderOption = None,
) -> None:
    """Pack the best window for QUERY in at most --budget tokens and print it."""
    col = _open(store, embedder).collection(collection, create=False)
    window = col.pack(query, budget=budget, tokenizer=tokenizer, align=align)
    if as_json:
        shown = asdict(window)
        if messages:
            shown["messages"] = window.messages(cache_control=cache_control)
        print(json.dumps(shown, ensure_ascii=False, indent=2))
        return
    print(window.text)
    errors.print(
        f"{window.tokens:,} of {window.budget:,} tokens ({window.tokenizer}); "
        f"cacheable prefix {window.cacheable_prefix_tokens:,}; index version "
        f"{window.index_version}" + (f"; {window.reason}" if window.reason else ""),
        highlight=False,
    )


@app.command()
def tree(
    store: StoreOption = Path("wp-store"),
    collection: CollectionOption = "default",
    node: Annotated[int | None, typer.Option(help="Show this node: text and children.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    embedder: EmbedderOption = None,
) -> None:
    """Show the summary tree: levels, node counts and tokens, or one node with its children."""
    col = _open(store, embedder).collection(collection, create=False)
    shown = col.node(node) if node is not None else col.tree()
    if as_json:
        print(json.dumps(asdict(shown), ensure_ascii=False, indent=2))
    elif node is not None:
        _print_node(col.node(node))
    else:
        _print_tree(col.tree())


@app.command()
def demo(
    store: Annotated[Path, typer.Option(help="Store folder for the demo.")] = Path("wp-demo"),
    embedder: EmbedderOption = None,
) -> None:
    """Create a store, ingest a generated corpus, run searches and print the hits."""
    from windowpack.demo import PLANTED, demo_documents

    col = _open(store, embedder).collection("demo")
    documents = demo_documents()
    console.print(f"[bold]Ingesting[/] {len(documents)} generated documents into {store}")
    _print_report(_add_with_progress(col, lambda callback: col.add(documents, progress=callback)))
    console.rule("[bold]summary tree[/] (windowpack tree)")
    _print_tree(col.tree())
    for fact in PLANTED:
        console.rule(f"[bold]search[/] {fact.question}")
        _print_hits(col.search(fact.question, k=3))
    question = PLANTED[0].question
    window = col.pack(question, budget=_DEMO_BUDGET)
    console.rule(f"[bold]pack[/] {question} (budget {_DEMO_BUDGET} tokens)")
    console.print(window.text, highlight=False, markup=False)
    console.rule(
        f"{window.tokens} of {_DEMO_BUDGET} tokens; cacheable prefix "
        f"{window.cacheable_prefix_tokens}; {len(window.items)} items"
    )


_DEMO_BUDGET = 700


@app.command(name="eval")
def eval_(
    tasks: Annotated[list[str], typer.Argument(help="niah, ruler and/or mrcr.")],
    budgets: Annotated[str, typer.Option(help="Budgets, e.g. 2k,8k,32k,128k (K = 1024).")],
    haystack: Annotated[
        Path | None, typer.Option(help="Folder of .txt, JSON {text}, JSONL; generated if none.")
    ] = None,
    lengths: Annotated[str, typer.Option(help="Haystack lengths, e.g. 8k,32k,full.")] = "8k",
    ruler_lengths: Annotated[
        str | None, typer.Option(help="RULER lengths (default: --lengths).")
    ] = None,
    mrcr_lengths: Annotated[
        str | None, typer.Option(help="MRCR conversation lengths (default: --lengths).")
    ] = None,
    depths: Annotated[str, typer.Option(help="NIAH needle depths in %.")] = "0,25,50,75,100",
    systems: Annotated[
        str, typer.Option(help="Systems compared side by side.")
    ] = "windowpack,truncation,dense,bm25,llama-index",
    out: Annotated[Path, typer.Option(help="Folder for the report and plots.")] = Path(
        "eval-results"
    ),
    store: Annotated[
        Path | None, typer.Option("--store", help="Store to reuse (default: a temporary one).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of every generator.")] = 0,
    samples: Annotated[
        int, typer.Option(help="Cases per cell (seeds seed, seed+1, ...): mean and 95% interval.")
    ] = 1,
    mrcr_shapes: Annotated[
        str, typer.Option(help="MRCR conversation shapes: gdm (MRCR v2 transcripts), openai.")
    ] = "gdm",
    mrcr_needles: Annotated[
        str, typer.Option(help="Instances of the asked MRCR request, e.g. 2,4,8.")
    ] = "2,4,8",
    keep_collections: Annotated[
        bool, typer.Option(help="Keep each case's collection in the store (default: deleted).")
    ] = False,
    tokenizer: Annotated[str, typer.Option(help="Tokenizer of every count.")] = "o200k_base",
    reader_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible endpoint of an LLM reader.")
    ] = None,
    reader_model: Annotated[str | None, typer.Option(help="Model name of the LLM reader.")] = None,
    reader_key: Annotated[
        str | None, typer.Option(envvar="WINDOWPACK_READER_API_KEY", help="Its API key.")
    ] = None,
    embedder: EmbedderOption = None,
) -> None:
    """Run NIAH, RULER-style and MRCR-style evals; write JSON, markdown and PNG plots."""
    from windowpack.evals.cli_run import EvalRequest, run_evals

    request = EvalRequest(
        tasks=tasks,
        budgets=budgets,
        haystack=haystack,
        lengths=lengths,
        task_lengths={"ruler": ruler_lengths, "mrcr": mrcr_lengths},
        depths=depths,
        systems=systems,
        seed=seed,
        samples=samples,
        mrcr_shapes=mrcr_shapes,
        mrcr_needles=mrcr_needles,
        keep_collections=keep_collections,
        tokenizer=tokenizer,
        reader_url=reader_url,
        reader_model=reader_model,
        reader_key=reader_key,
    )
    with _eval_store(store, embedder) as opened:
        paths = run_evals(request, opened, out, command=" ".join(["windowpack", *sys.argv[1:]]))
    print(Path(paths[1]).read_text(encoding="utf-8"))
    console.print(f"Report written to {out}: " + ", ".join(path.name for path in paths))


@contextlib.contextmanager
def _eval_store(store: Path | None, embedder: str | None) -> Iterator[Store]:
    """The given store, or a temporary one removed afterwards (one store per run, so the
    embedding cache serves every case of the run)."""
    with contextlib.ExitStack() as stack:
        folder = store or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="wp-eval-")))
        opened = stack.enter_context(_open(folder, embedder))
        yield opened


@app.command()
def serve(
    store: Annotated[
        str, typer.Option(envvar="WINDOWPACK_STORE", help="Store folder or database URL.")
    ] = "wp-store",
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    index_dir: Annotated[
        str | None, typer.Option(help="Index folder (needed with a database URL).")
    ] = None,
    embedder: EmbedderOption = None,
) -> None:
    """Serve the REST API (docs at /docs); beyond 127.0.0.1 only with API keys."""
    from windowpack.api.server import serve as run_server
    from windowpack.api.settings import ApiSettings

    run_server(
        ApiSettings(store=store, host=host, port=port, index_dir=index_dir, embedder=embedder)
    )


keys = typer.Typer(help="API keys of the REST service: create, list, revoke.", no_args_is_help=True)
app.add_typer(keys, name="keys")


@keys.command("create")
def keys_create(
    name: Annotated[str, typer.Argument(help="What the key is for (shown in `keys list`).")],
    collection: Annotated[
        list[str], typer.Option("--collection", "-c", help="A collection it may use; '*': all.")
    ],
    write: Annotated[bool, typer.Option("--write", help="Allow writes, not only reads.")] = False,
    store: StoreOption = Path("wp-store"),
) -> None:
    """Create a key; its secret is printed once and stored only as a hash."""
    created = _open(store, None).api_keys.create(name, collections=collection, can_write=write)
    errors.print(f"key {created.key.key_id} created; keep the secret, it is not shown again:")
    print(created.secret)


@keys.command("list")
def keys_list(store: StoreOption = Path("wp-store")) -> None:
    """List the keys (never their secrets)."""
    for key in _open(store, None).api_keys.list():
        access = "read-write" if key.can_write else "read-only"
        state = "revoked" if key.revoked else "active"
        print(f"{key.key_id}  {state}  {access}  {','.join(key.collections)}  {key.name}")


@keys.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="The key id from `keys list`.")],
    store: StoreOption = Path("wp-store"),
) -> None:
    """Revoke a key: it stops working at the next request."""
    _open(store, None).api_keys.revoke(key_id)
    errors.print(f"key {key_id} revoked")


def _open(store: Path, embedder: str | None) -> Store:
    import windowpack
    from windowpack.config import StoreConfig

    config = StoreConfig(embedder=embedder) if embedder else StoreConfig()
    return windowpack.open(store, config=config)


def _add_with_progress(
    col: Collection, add: Callable[[Callable[[IngestProgress], None]], IngestReport]
) -> IngestReport:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    started = time.perf_counter()
    columns = (TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
    with Progress(*columns, console=errors, transient=True) as bar:
        task = bar.add_task("parsing", total=None)

        def update(progress: IngestProgress) -> None:
            if progress.note:
                bar.console.print(progress.note, highlight=False)
            rate = progress.tokens / max(time.perf_counter() - started, 1e-9)
            bar.update(
                task,
                description=(
                    f"{progress.stage}: {progress.documents}/{progress.documents_total} docs, "
                    f"{progress.chunks} chunks, {progress.summaries} summaries, "
                    f"{progress.embedded} embedded, {rate:,.0f} tok/s"
                ),
                total=progress.chunks or None,
                completed=progress.embedded,
            )

        return add(update)


def _print_report(report: IngestReport) -> None:
    console.print(
        f"added {report.added}, replaced {report.replaced}, unchanged {report.unchanged}: "
        f"{report.chunks} chunks, {report.tokens:,} tokens, {report.summaries} summaries, "
        f"{report.embedded} embedded; index version {report.index_version}"
    )
    for node, reason in report.summary_failures.items():
        errors.print(f"summary of {node} fell back to extractive: {reason}", highlight=False)
    for path, reason in report.skipped.items():
        errors.print(
            f"[yellow]skipped[/] {reason}" if path in reason else f"skipped {path}: {reason}"
        )


def _print_tree(overview: TreeOverview) -> None:
    table = Table(title=f"{overview.documents} documents", title_justify="left")
    for column in ("scope", "level", "nodes", "tokens"):
        table.add_column(column, justify="left" if column == "scope" else "right")
    table.add_row("chunks", "0", f"{overview.chunks:,}", f"{overview.chunk_tokens:,}")
    for level in overview.levels:
        table.add_row(level.scope, str(level.level), f"{level.nodes:,}", f"{level.tokens:,}")
    console.print(table)
    console.print(
        f"summaries: {overview.summary_tokens:,} tokens = {overview.summary_ratio:.1%} of the "
        f"chunks; root node: {overview.root_id}"
    )


def _print_node(node: TreeNode) -> None:
    scope = f"document {node.document_id}" if node.document_id else "collection"
    console.print(
        f"[bold]node {node.id}[/]: level {node.level} of {scope}, leaves "
        f"{node.leaf_start}-{node.leaf_end - 1}, {node.tokens} tokens, parent {node.parent_id}, "
        f"by {node.summarizer}",
        highlight=False,
    )
    console.print(Padding(node.text, (0, 0, 1, 4)), highlight=False)
    for child in node.children:
        label = f"node {child.node_id}" if child.kind == "node" else f"chunk {child.ordinal}"
        console.print(f"  - {label} of {child.document_id or 'collection'} ({child.tokens} tokens)")


def _print_hits(hits: list[Hit]) -> None:
    if not hits:
        console.print("no hits")
    for rank, hit in enumerate(hits, start=1):
        where = f"chunk {hit.ordinal}"
        if hit.kind == "summary":
            where = f"level-{hit.level} summary of chunks {hit.ordinal}-{hit.last_ordinal}"
        if hit.span is not None:
            where += f", chars {hit.span.start}-{hit.span.end}"
        if hit.unit is not None:
            where = f"turn/record {hit.unit + 1}, {where}"
        console.print(
            f"[bold]{rank}.[/] {hit.title or hit.document_id} [dim]({hit.document_id}; "
            f"{where}; score {hit.score:.3f})[/]",
            highlight=False,
        )
        console.print(Padding(hit.text, (0, 0, 1, 4)), highlight=False)


def main() -> None:
    """Entry point: run the app and turn windowpack errors into one clear line and exit 2."""
    try:
        app()
    except WindowpackError as error:
        # soft_wrap: one line whatever the terminal width, as scripts and logs expect.
        errors.print(f"[red]error:[/] {error.message}", highlight=False, soft_wrap=True)
        sys.exit(2)
