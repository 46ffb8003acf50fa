"""The `windowpack` command line: thin commands over the service facade.

This module holds the app, the everyday commands (ingest, search, pack, tree, rebuild-tree,
demo) and the entry point; `eval`, `serve`, `keys` and `collections` live in `eval_command`,
`serve_command`, `key_commands` and `collection_commands`, the options they share in
`options`, how help reads in `help_format`. Each imports what is heavy inside its command, so
`windowpack --help` stays cheap.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from windowpack.cli.collection_commands import collections, delete_documents
from windowpack.cli.eval_command import eval_
from windowpack.cli.help_format import MAX_HELP_WIDTH, HelpGroup
from windowpack.cli.key_commands import keys
from windowpack.cli.options import (
    CollectionOption,
    EmbedderOption,
    HeadersOption,
    IndexDirOption,
    StoreOption,
    WhereOption,
    open_store,
    parse_where,
    read_collection,
)
from windowpack.cli.output import (
    cache_note,
    console,
    errors,
    print_duplicates,
    print_hits,
    print_node,
    print_report,
    print_tree,
    window_json,
)
from windowpack.cli.questions import QuestionsOption, pack_questions, read_questions
from windowpack.cli.serve_command import mcp, serve, worker
from windowpack.config import DEFAULT_COLLECTION, DEFAULT_STORE
from windowpack.errors import EmbedderMismatchError, InvalidArgumentError, WindowpackError
from windowpack.types import BUDGET_RULE, TreeNode

if TYPE_CHECKING:
    from windowpack.service import Collection
    from windowpack.types import IngestProgress, IngestReport

app = typer.Typer(
    cls=HelpGroup,
    help="windowpack: the best context window for one question, at any token budget.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,  # plain help, wrapped at the terminal's width (cli.help_format)
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": MAX_HELP_WIDTH},
)


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
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON (warnings on stderr).")
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
    col = open_store(
        store, index_dir, embedder, executor=executor, ray_address=ray_address
    ).collection(collection, tokenizer=tokenizer, chunk_tokens=chunk_tokens)
    report = _add_with_progress(
        col, lambda callback: col.add_files(paths, progress=callback, root=root), parsing=True
    )
    if as_json:
        print(json.dumps(asdict(report), ensure_ascii=False, indent=2))
        print_duplicates(report, root_given=root is not None)
    else:
        print_report(report, root_given=root is not None)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="The question or keywords.")],
    k: Annotated[int, typer.Option("-k", help="Number of hits.")] = 10,
    store: StoreOption = DEFAULT_STORE,
    index_dir: IndexDirOption = None,
    collection: CollectionOption = "default",
    as_json: Annotated[bool, typer.Option("--json", help="Print hits as JSON.")] = False,
    embedder: EmbedderOption = None,
    include_summaries: Annotated[
        bool, typer.Option("--include-summaries", help="Let summary-tree nodes compete too.")
    ] = False,
    where: WhereOption = None,
) -> None:
    """Print the k most relevant verbatim chunks."""
    matching = parse_where(where)
    col = read_collection(store, index_dir, embedder, collection)
    hits = col.search(query, k=k, include_summaries=include_summaries, where=matching)
    if as_json:
        print(json.dumps([asdict(hit) for hit in hits], ensure_ascii=False, indent=2))
    else:
        print_hits(hits)


@app.command()
def pack(
    query: Annotated[
        str | None, typer.Argument(help="The question the window is for (or --questions).")
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option(
            "--budget",
            "-b",
            help=f"Token budget: {BUDGET_RULE}. With --questions: for lines that give none.",
        ),
    ] = None,
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
    headers: HeadersOption = "compact",
    embedder: EmbedderOption = None,
    overview_tokens: Annotated[
        int | None,
        typer.Option(
            help="Tokens of the query-independent overview tier (default: none, unless "
            "--align asks for a cacheable prefix)."
        ),
    ] = None,
    where: WhereOption = None,
    questions: QuestionsOption = None,
) -> None:
    """Pack the best window for QUERY in at most --budget tokens and print it."""
    matching = parse_where(where)
    if cache_control and not messages:
        raise InvalidArgumentError("--cache-control", "needs --messages")
    if not include_question and not messages:
        raise InvalidArgumentError("--no-include-question", "needs --messages")
    if query is not None and questions is not None:
        raise InvalidArgumentError("--questions", "is instead of QUERY: give one or the other")
    if query is None and questions is None:
        raise InvalidArgumentError("QUERY", "is required (or --questions FILE: many questions)")
    options: dict[str, Any] = {
        "budget": budget,
        "tokenizer": tokenizer,
        "overview_tokens": overview_tokens,
        "align": align_to if align_to is not None else align,
        "headers": headers,  # checked by the pack
        "where": matching,
    }
    shown_as = {
        "messages": messages,
        "cache_control": cache_control,
        "include_question": include_question,
    }
    if questions is not None:
        asked = read_questions(questions, budget_given=budget is not None)  # before the store
        pack_questions(
            read_collection(store, index_dir, embedder, collection), asked, options, shown_as
        )
        return
    if budget is None or query is None:
        raise InvalidArgumentError("--budget", "is required: the window's size in tokens")
    window = read_collection(store, index_dir, embedder, collection).pack(query, **options)
    if as_json:
        print(json.dumps(window_json(window, **shown_as), ensure_ascii=False, indent=2))
    elif messages:
        chat = window.messages(cache_control=cache_control, include_question=include_question)
        print(json.dumps(chat, ensure_ascii=False, indent=2))
    else:
        print(window.text)
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
    col = read_collection(store, index_dir, embedder, collection)
    shown = col.node(node) if node is not None else col.tree()
    if as_json:
        print(json.dumps(asdict(shown), ensure_ascii=False, indent=2))
    elif isinstance(shown, TreeNode):
        print_node(shown)
    else:
        print_tree(shown)


@app.command("rebuild-tree")
def rebuild_tree(
    store: StoreOption = DEFAULT_STORE,
    index_dir: IndexDirOption = None,
    collection: CollectionOption = "default",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON (warnings on stderr).")
    ] = False,
    embedder: EmbedderOption = None,
) -> None:
    """Rebuild every summary node of the collection with the store's summarizer (extractive),
    atomically: readers see the old tree until the new one is written."""
    col = read_collection(store, index_dir, embedder, collection)
    report = _add_with_progress(col, lambda callback: col.rebuild_tree(progress=callback))
    if as_json:
        print(json.dumps(asdict(report), ensure_ascii=False, indent=2))
        print_duplicates(report)
    else:
        print_report(report)


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

    col = open_store(store, index_dir, embedder).collection(collection)
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

# The commands that live in their own modules, registered after demo so that `--help` lists
# the everyday commands first.
app.command(name="eval")(eval_)
app.command()(serve)
app.command()(worker)
app.command()(mcp)
app.add_typer(keys, name="keys")
app.add_typer(collections, name="collections")
app.command(name="delete")(delete_documents)


def _add_with_progress(
    col: Collection,
    add: Callable[[Callable[[IngestProgress], None]], IngestReport],
    *,
    parsing: bool = False,
) -> IngestReport:
    from windowpack.cli.progress import ingest_progress

    with ingest_progress(errors, parsing=parsing) as update:
        return add(update)


def main() -> None:
    """Entry point: run the app and turn windowpack errors into one clear line and exit 2."""
    try:
        app()
    except WindowpackError as error:
        if isinstance(error, EmbedderMismatchError) and error.built_with is not None:
            error = error.fixed_by(f"pass --embedder {error.built_with}")  # the CLI's fix
        # soft_wrap: one line whatever the terminal width, as scripts and logs expect.
        errors.print(f"[red]error:[/] {error.message}", highlight=False, soft_wrap=True)
        sys.exit(2)
