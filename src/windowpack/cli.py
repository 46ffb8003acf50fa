"""The `windowpack` command line: thin commands over the service facade."""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from windowpack.cli_output import (
    cache_note,
    console,
    errors,
    print_hits,
    print_node,
    print_report,
    print_tree,
)
from windowpack.config import DEFAULT_COLLECTION, DEFAULT_STORE
from windowpack.errors import CollectionNotFoundError, InvalidArgumentError, WindowpackError

if TYPE_CHECKING:
    from windowpack.api import ApiSettings
    from windowpack.service import Collection, Store
    from windowpack.types import CollectionStats, IngestProgress, IngestReport

app = typer.Typer(
    help="windowpack: the best context window for one question, at any token budget.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

StoreOption = Annotated[
    str,
    typer.Option(
        "--store",
        envvar="WINDOWPACK_STORE",
        help="Store folder (embedded) or database URL (postgresql+psycopg://...).",
    ),
]
IndexDirOption = Annotated[
    str | None,
    typer.Option(
        "--index-dir", envvar="WINDOWPACK_INDEX_DIR", help="Index folder (needed with a URL)."
    ),
]
CollectionOption = Annotated[str, typer.Option("--collection", "-c", help="Collection name.")]
EmbedderOption = Annotated[
    str | None,
    typer.Option(help="Embedding model name or path ('hash' for a model-free dry run)."),
]


LogLevel = Literal["critical", "error", "warning", "info", "debug", "trace"]


def _show_version(value: bool) -> None:
    if value:
        from windowpack import __version__

        print(f"windowpack {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """windowpack: the best context window for one question, at any token budget."""


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files and folders to add.")],
    store: StoreOption = DEFAULT_STORE,
    index_dir: IndexDirOption = None,
    collection: CollectionOption = "default",
    tokenizer: Annotated[str | None, typer.Option(help="Tokenizer of a new collection.")] = None,
    chunk_tokens: Annotated[
        int | None, typer.Option(help="Chunk size of a new collection.")
    ] = None,
    embedder: EmbedderOption = None,
    root: Annotated[
        Path | None,
        typer.Option(help="Folder file ids are relative to (default: the store's parent)."),
    ] = None,
    ray: Annotated[
        bool, typer.Option("--ray", help="Parse, chunk and embed on Ray (extra 'ray').")
    ] = False,
    ray_address: Annotated[
        str | None,
        typer.Option(
            envvar="WINDOWPACK_RAY_ADDRESS",
            help="The Ray cluster for --ray ('auto', 'ray://head:10001'); default: a local one.",
        ),
    ] = None,
) -> None:
    """Parse, chunk, embed and index files and folders (txt, md, html, pdf, json, jsonl)."""
    executor = "ray" if ray else "local"
    col = _open(store, index_dir, embedder, executor=executor, ray_address=ray_address).collection(
        collection, tokenizer=tokenizer, chunk_tokens=chunk_tokens
    )
    report = _add_with_progress(
        col, lambda callback: col.add_files(paths, progress=callback, root=root)
    )
    print_report(report)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="The question or keywords.")],
    k: Annotated[int, typer.Option("-k", help="Number of hits.")] = 10,
    store: StoreOption = DEFAULT_STORE,
    index_dir: IndexDirOption = None,
    collection: CollectionOption = "default",
    as_json: Annotated[bool, typer.Option("--json", help="Print hits as JSON.")] = False,
    embedder: EmbedderOption = None,
) -> None:
    """Print the k most relevant verbatim chunks."""
    hits = _read(store, index_dir, embedder, collection).search(query, k=k)
    if as_json:
        print(json.dumps([asdict(hit) for hit in hits], ensure_ascii=False, indent=2))
    else:
        print_hits(hits)


@app.command()
def pack(
    query: Annotated[str, typer.Argument(help="The question the window is for.")],
    budget: Annotated[int, typer.Option("--budget", "-b", help="Token budget (1 to 10M).")],
    store: StoreOption = DEFAULT_STORE,
    index_dir: IndexDirOption = None,
    collection: CollectionOption = "default",
    tokenizer: Annotated[
        str, typer.Option(help="cl100k_base, o200k_base or a tokenizer.json path.")
    ] = "o200k_base",
    align: Annotated[bool, typer.Option(help="Pad the stable tier to 256 tokens.")] = False,
    align_to: Annotated[
        int | None,
        typer.Option(help="Pad the stable tier to at least N tokens (e.g. 1024) if it fits."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the window as JSON.")] = False,
    messages: Annotated[
        bool, typer.Option(help="Chat messages (JSON), stable tier first, question last.")
    ] = False,
    include_question: Annotated[
        bool, typer.Option(help="With --messages: the question as the last user message.")
    ] = True,
    cache_control: Annotated[
        bool, typer.Option(help="With --messages: an Anthropic cache breakpoint.")
    ] = False,
    embedder: EmbedderOption = None,
) -> None:
    """Pack the best window for QUERY in at most --budget tokens and print it."""
    if cache_control and not messages:
        raise InvalidArgumentError("--cache-control", "needs --messages")
    if not include_question and not messages:
        raise InvalidArgumentError("--no-include-question", "needs --messages")
    col = _read(store, index_dir, embedder, collection)
    aligned: bool | int = align_to if align_to is not None else align
    window = col.pack(query, budget=budget, tokenizer=tokenizer, align=aligned)
    chat = window.messages(cache_control=cache_control, include_question=include_question)
    if as_json:
        shown = {**asdict(window), "prefix_cache": window.prefix_cache()}
        shown |= {"messages": chat} if messages else {}
        print(json.dumps(shown, ensure_ascii=False, indent=2))
    else:
        print(json.dumps(chat, ensure_ascii=False, indent=2) if messages else window.text)
    errors.print(
        f"{window.tokens:,} of {window.budget:,} tokens ({window.tokenizer}); index version "
        f"{window.index_version}; {cache_note(window)}"
        + (f"; {window.reason}" if window.reason else ""),
        highlight=False,
    )


@app.command()
def tree(
    store: StoreOption = DEFAULT_STORE,
    index_dir: IndexDirOption = None,
    collection: CollectionOption = "default",
    node: Annotated[int | None, typer.Option(help="Show this node: text and children.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    embedder: EmbedderOption = None,
) -> None:
    """Show the summary tree: levels, node counts and tokens, or one node with its children."""
    col = _read(store, index_dir, embedder, collection)
    shown = col.node(node) if node is not None else col.tree()
    if as_json:
        print(json.dumps(asdict(shown), ensure_ascii=False, indent=2))
    elif node is not None:
        print_node(col.node(node))
    else:
        print_tree(col.tree())


@app.command()
def demo(
    store: StoreOption = DEFAULT_STORE,
    index_dir: IndexDirOption = None,
    collection: CollectionOption = DEFAULT_COLLECTION,
    embedder: EmbedderOption = None,
) -> None:
    """Ingest a generated corpus into the default store and collection, then search and pack.

    The other commands' defaults are the same store and collection, so `windowpack search
    QUERY` works on the demo corpus right after.
    """
    from windowpack.demo import PLANTED, demo_documents

    col = _open(store, index_dir, embedder).collection(collection)
    documents = demo_documents()
    console.print(
        f"[bold]Ingesting[/] {len(documents)} generated documents into collection "
        f"{collection!r} of {store}"
    )
    print_report(_add_with_progress(col, lambda callback: col.add(documents, progress=callback)))
    console.rule("[bold]summary tree[/] (windowpack tree)")
    print_tree(col.tree())
    for fact in PLANTED:
        console.rule(f"[bold]search[/] {fact.question}")
        print_hits(col.search(fact.question, k=3))
    question = PLANTED[0].question
    window = col.pack(question, budget=_DEMO_BUDGET)
    console.rule(f"[bold]pack[/] {question} (budget {_DEMO_BUDGET} tokens)")
    console.print(window.text, highlight=False, markup=False)
    console.rule(
        f"{window.tokens} of {_DEMO_BUDGET} tokens; cacheable prefix "
        f"{window.cacheable_prefix_tokens}; {len(window.items)} items"
    )
    console.print(f'next: windowpack search "{PLANTED[1].question}" (same store and collection)')


_DEMO_BUDGET = 700


@app.command(name="eval")
def eval_(
    tasks: Annotated[
        list[str],
        typer.Argument(
            help="niah, ruler, mrcr, associative, multihop and/or aggregation; or "
            "`load FILE...` to run benchmark files (LOFT prompt, OpenAI MRCR JSONL, "
            "GDM MRCR v2 CSV, RULER JSONL)."
        ),
    ],
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
    associative_lengths: Annotated[
        str | None, typer.Option(help="Associative haystack lengths (default: --lengths).")
    ] = None,
    multihop_lengths: Annotated[
        str | None, typer.Option(help="Multi-hop haystack lengths (default: --lengths).")
    ] = None,
    aggregation_lengths: Annotated[
        str | None, typer.Option(help="Aggregation haystack lengths (default: --lengths).")
    ] = None,
    aggregation_facts: Annotated[
        int, typer.Option(help="Office openings planted per aggregation case.")
    ] = 16,
    load: Annotated[
        list[Path] | None, typer.Option(help="A benchmark file to run beside the tasks.")
    ] = None,
    load_format: Annotated[
        str | None,
        typer.Option("--format", help="Format of the loaded files (default: detected)."),
    ] = None,
    load_limit: Annotated[
        int | None, typer.Option(help="At most this many rows of each loaded file.")
    ] = None,
    depths: Annotated[str, typer.Option(help="NIAH needle depths in %.")] = "0,25,50,75,100",
    systems: Annotated[
        str, typer.Option(help="Systems compared side by side.")
    ] = "windowpack,truncation,dense,bm25,llama-index,llama-index-reorder,raptor",
    out: Annotated[Path, typer.Option(help="Folder for the report and plots.")] = Path(
        "eval-results"
    ),
    store: Annotated[
        str | None,
        typer.Option("--store", help="Store folder or URL to reuse (default: a temporary one)."),
    ] = None,
    index_dir: IndexDirOption = None,
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
    """Run NIAH, RULER-style, MRCR-style, associative, multi-hop and aggregation evals;
    write JSON, markdown and PNG plots."""
    from windowpack.evals import EvalRequest, run_evals

    # `eval load FILE...` runs benchmark files alone; `--load FILE` runs one beside tasks.
    loading = tasks[0] == "load"
    files = [Path(name) for name in tasks[1:]] if loading else []
    if loading and not files:
        raise typer.BadParameter("name the file(s) to load", param_hint="tasks")
    request = EvalRequest(
        tasks=[] if loading else tasks,
        budgets=budgets,
        haystack=haystack,
        lengths=lengths,
        task_lengths={
            "ruler": ruler_lengths,
            "mrcr": mrcr_lengths,
            "associative": associative_lengths,
            "multihop": multihop_lengths,
            "aggregation": aggregation_lengths,
        },
        depths=depths,
        systems=systems,
        seed=seed,
        samples=samples,
        mrcr_shapes=mrcr_shapes,
        mrcr_needles=mrcr_needles,
        aggregation_facts=aggregation_facts,
        loads=[*files, *(load or [])],
        load_format=load_format,
        load_limit=load_limit,
        keep_collections=keep_collections,
        tokenizer=tokenizer,
        reader_url=reader_url,
        reader_model=reader_model,
        reader_key=reader_key,
    )
    with _eval_store(store, index_dir, embedder) as opened:
        paths = run_evals(request, opened, out, command=" ".join(["windowpack", *sys.argv[1:]]))
    print(Path(paths[1]).read_text(encoding="utf-8"))
    console.print(f"Report written to {out}: " + ", ".join(path.name for path in paths))


@contextlib.contextmanager
def _eval_store(store: str | None, index_dir: str | None, embedder: str | None) -> Iterator[Store]:
    """The given store, or a temporary one removed afterwards (one store per run, so the
    embedding cache serves every case of the run)."""
    with contextlib.ExitStack() as stack:
        folder = store or stack.enter_context(tempfile.TemporaryDirectory(prefix="wp-eval-"))
        opened = stack.enter_context(_open(folder, index_dir, embedder))
        yield opened


@app.command()
def serve(
    store: Annotated[
        str | None, typer.Option(help="Store folder or database URL [env: WINDOWPACK_STORE].")
    ] = None,
    host: Annotated[
        str | None, typer.Option(help="Address to listen on [env: WINDOWPACK_HOST; 127.0.0.1].")
    ] = None,
    port: Annotated[
        int | None, typer.Option(help="Port to listen on [env: WINDOWPACK_PORT; 8000].")
    ] = None,
    index_dir: Annotated[
        str | None,
        typer.Option(help="Index folder, needed with a database URL [env: WINDOWPACK_INDEX_DIR]."),
    ] = None,
    embedder: Annotated[
        str | None,
        typer.Option(help="Embedding model name or path, or 'hash' [env: WINDOWPACK_EMBEDDER]."),
    ] = None,
    log_level: Annotated[
        LogLevel | None,
        typer.Option(help="Server log level; at info every request is logged [env: ...; info]."),
    ] = None,
    access_log: Annotated[
        bool | None, typer.Option(help="Log every request, at info [env: WINDOWPACK_ACCESS_LOG].")
    ] = None,
    warm_up: Annotated[
        bool | None,
        typer.Option(
            help="Load the model and every collection's indexes at start, in the background; "
            "/readyz answers 200 once done [env: WINDOWPACK_WARM_UP; on]."
        ),
    ] = None,
) -> None:
    """Serve the REST API (docs at /docs, inspector at /ui); beyond 127.0.0.1 only with keys.

    Each setting comes from its flag, else from its WINDOWPACK_* environment variable, else
    from its default: a flag left out never hides the environment.
    """
    from windowpack.api import serve as run_server

    flags = {
        "store": store,
        "host": host,
        "port": port,
        "index_dir": index_dir,
        "embedder": embedder,
        "log_level": log_level,
        "access_log": access_log,
        "warm_up": warm_up,
    }
    run_server(
        _server_settings({name: value for name, value in flags.items() if value is not None})
    )


def _server_settings(flags: dict[str, object]) -> ApiSettings:
    """The server's settings: `flags` given, the environment for the rest; a bad value is an
    error naming the setting and its environment variable."""
    import pydantic

    from windowpack.api import ApiSettings

    try:
        return ApiSettings(**flags)  # type: ignore[arg-type]
    except pydantic.ValidationError as error:
        problem = error.errors()[0]
        name = ".".join(str(part) for part in problem["loc"])
        raise InvalidArgumentError(
            f"--{name.replace('_', '-')} / WINDOWPACK_{name.upper()}", problem["msg"]
        ) from None


keys = typer.Typer(help="API keys of the REST service: create, list, revoke.", no_args_is_help=True)
app.add_typer(keys, name="keys")


@keys.command("create")
def keys_create(
    name: Annotated[str, typer.Argument(help="What the key is for (shown in `keys list`).")],
    collection: Annotated[
        list[str], typer.Option("--collection", "-c", help="A collection it may use; '*': all.")
    ],
    write: Annotated[bool, typer.Option("--write", help="Allow writes, not only reads.")] = False,
    store: StoreOption = DEFAULT_STORE,
    index_dir: IndexDirOption = None,
) -> None:
    """Create a key; its secret is printed once and stored only as a hash."""
    created = _open(store, index_dir, None).api_keys.create(
        name, collections=collection, can_write=write
    )
    errors.print(f"key {created.key.key_id} created; keep the secret, it is not shown again:")
    print(created.secret)


@keys.command("list")
def keys_list(store: StoreOption = DEFAULT_STORE, index_dir: IndexDirOption = None) -> None:
    """List the keys (never their secrets)."""
    for key in _open(store, index_dir, None, create=False).api_keys.list():
        access = "read-write" if key.can_write else "read-only"
        state = "revoked" if key.revoked else "active"
        print(f"{key.key_id}  {state}  {access}  {','.join(key.collections)}  {key.name}")


@keys.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="The key id from `keys list`.")],
    store: StoreOption = DEFAULT_STORE,
    index_dir: IndexDirOption = None,
) -> None:
    """Revoke a key: it stops working at the next request."""
    _open(store, index_dir, None, create=False).api_keys.revoke(key_id)
    errors.print(f"key {key_id} revoked")


collections = typer.Typer(
    help="The store's collections: list, stats, delete.", no_args_is_help=True
)
app.add_typer(collections, name="collections")


@collections.command("list")
def collections_list(
    store: StoreOption = DEFAULT_STORE,
    index_dir: IndexDirOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """List the collections with their documents, chunks and tokens."""
    stats = _open(store, index_dir, None, create=False).stats()
    if as_json:
        print(json.dumps([asdict(item) for item in stats], indent=2))
    elif not stats:
        errors.print(f"no collections in {store}")
    for item in [] if as_json else stats:
        print(f"{item.name}  {item.documents:,} documents  {item.chunks:,} chunks  "
              f"{item.tokens:,} tokens  version {item.index_version}")  # fmt: skip


@collections.command("stats")
def collections_stats(
    name: Annotated[str, typer.Argument(help="The collection.")] = DEFAULT_COLLECTION,
    store: StoreOption = DEFAULT_STORE,
    index_dir: IndexDirOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """A collection's settings and size: documents, chunks, tokens, index version."""
    stats = asdict(_stats_of(_open(store, index_dir, None, create=False), name))
    print(
        json.dumps(stats, indent=2) if as_json else "\n".join(f"{k}: {v}" for k, v in stats.items())
    )


@collections.command("delete")
def collections_delete(
    name: Annotated[str, typer.Argument(help="The collection to delete.")],
    store: StoreOption = DEFAULT_STORE,
    index_dir: IndexDirOption = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete a collection with its documents, summary tree and index files."""
    opened = _open(store, index_dir, None, create=False)
    documents = _stats_of(opened, name).documents
    if not yes and not typer.confirm(f"delete collection {name!r} ({documents:,} documents)?"):
        raise InvalidArgumentError("--yes", f"collection {name!r} kept: not confirmed")
    opened.delete_collection(name)
    errors.print(f"collection {name!r} deleted ({documents:,} documents)")


def _stats_of(store: Store, name: str) -> CollectionStats:
    found = [item for item in store.stats() if item.name == name]
    if not found:
        raise CollectionNotFoundError(name, existing=store.collections())
    return found[0]


def _open(
    store: str,
    index_dir: str | None,
    embedder: str | None,
    *,
    create: bool = True,
    executor: str = "local",
    ray_address: str | None = None,
) -> Store:
    """The store, a folder or a database URL as in `windowpack.open` (a URL needs
    `--index-dir`); read-only commands pass `create=False`, so a typo creates nothing."""
    import windowpack
    from windowpack.config import StoreConfig

    if "://" in store and index_dir is None:
        raise InvalidArgumentError(
            "--index-dir", "is required with a database URL as --store (or $WINDOWPACK_INDEX_DIR)"
        )
    config = StoreConfig(executor=executor, ray_address=ray_address)
    if embedder:
        config = replace(config, embedder=embedder)
    return windowpack.open(store, config=config, create=create, index_dir=index_dir)


def _read(store: str, index_dir: str | None, embedder: str | None, collection: str) -> Collection:
    """An existing collection of an existing store: the error names what exists."""
    return _open(store, index_dir, embedder, create=False).collection(collection, create=False)


def _add_with_progress(
    col: Collection, add: Callable[[Callable[[IngestProgress], None]], IngestReport]
) -> IngestReport:
    from windowpack.cli_progress import ingest_progress

    with ingest_progress(errors) as update:
        return add(update)


def main() -> None:
    """Entry point: run the app and turn windowpack errors into one clear line and exit 2."""
    try:
        app()
    except WindowpackError as error:
        # soft_wrap: one line whatever the terminal width, as scripts and logs expect.
        errors.print(f"[red]error:[/] {error.message}", highlight=False, soft_wrap=True)
        sys.exit(2)
