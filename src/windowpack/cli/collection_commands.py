"""`windowpack collections`: the store's collections, listed, described and deleted; and
`windowpack delete`: a collection's documents deleted by id or metadata filter."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated

import typer

from windowpack.cli.help_format import HelpGroup
from windowpack.cli.options import (
    CollectionOption,
    EmbedderOption,
    IndexDirOption,
    StoreOption,
    WhereOption,
    open_store,
    parse_where,
)
from windowpack.cli.output import errors
from windowpack.config import DEFAULT_COLLECTION, DEFAULT_STORE
from windowpack.errors import CollectionNotFoundError, InvalidArgumentError

if TYPE_CHECKING:
    from windowpack.filters import Filter
    from windowpack.service import Collection, Store
    from windowpack.types import CollectionStats

collections = typer.Typer(
    help="The store's collections: list, stats, delete.",
    no_args_is_help=True,
    rich_markup_mode=None,
    cls=HelpGroup,
)


@collections.command("list")
def collections_list(
    store: StoreOption = DEFAULT_STORE,
    index_dir: IndexDirOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """List the collections with their documents, chunks and tokens."""
    stats = open_store(store, index_dir, None, create=False).stats()
    if as_json:
        print(json.dumps([asdict(item) for item in stats], indent=2))
        return
    if not stats:
        errors.print(f"no collections in {store}")
    for item in stats:
        print(
            f"{item.name}  {item.documents:,} documents  {item.chunks:,} chunks  "
            f"{item.tokens:,} tokens  version {item.index_version}"
        )


@collections.command("stats")
def collections_stats(
    name: Annotated[str, typer.Argument(help="The collection.")] = DEFAULT_COLLECTION,
    store: StoreOption = DEFAULT_STORE,
    index_dir: IndexDirOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """A collection's settings and size: documents, chunks, tokens, index version."""
    stats = asdict(_stats_of(open_store(store, index_dir, None, create=False), name))
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
    opened = open_store(store, index_dir, None, create=False)
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


def delete_documents(
    ids: Annotated[
        list[str] | None, typer.Argument(help="Ids of the documents to delete.", metavar="IDS")
    ] = None,
    where: WhereOption = None,
    store: StoreOption = DEFAULT_STORE,
    index_dir: IndexDirOption = None,
    collection: CollectionOption = DEFAULT_COLLECTION,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
    every: Annotated[
        bool,
        typer.Option("--all", help="Allow a --where filter that keeps every document."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    embedder: EmbedderOption = None,
) -> None:
    """Delete documents by id, by --where filter, or both (the listed ones it matches), in one
    index version. Without --yes it says how many would go and asks (an error when no one
    can answer: stdin is not a terminal); a --where that keeps every document also needs
    --all."""
    matching = parse_where(where)
    if not ids and matching is None:
        raise InvalidArgumentError("IDS", "name documents to delete, or give --where (or both)")
    col = open_store(store, index_dir, embedder, create=False).collection(collection, create=False)
    if not yes:
        count = _deleted_count(col, ids, matching)
        question = f"delete {count:,} document(s) from collection {collection!r}?"
        if not _interactive():
            raise InvalidArgumentError(
                "--yes", f"{count:,} document(s) would be deleted; confirm with --yes"
            )
        if not typer.confirm(question):
            raise InvalidArgumentError("--yes", "nothing deleted: not confirmed")
    report = col.delete(list(ids) if ids else None, where=matching, all=every)
    if as_json:
        print(json.dumps(asdict(report), ensure_ascii=False, indent=2))
        return
    missing = f"; not found: {', '.join(report.missing)}" if report.missing else ""
    errors.print(
        f"deleted {len(report.deleted):,} document(s) from {collection!r}; index version "
        f"{report.index_version}{missing}",
        highlight=False,
    )


def _deleted_count(col: Collection, ids: list[str] | None, where: Filter | None) -> int:
    """How many documents `Collection.delete(ids, where=where)` would delete (both must
    hold), read from the listing without their texts."""
    listed = set(ids) if ids else None
    return sum(
        1
        for info in col.documents()
        if (listed is None or info.id in listed) and (where is None or where.matches(info.metadata))
    )


def _interactive() -> bool:
    """Whether someone can answer a question (stdin is a terminal)."""
    return sys.stdin.isatty()
