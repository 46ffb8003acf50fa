"""`windowpack collections`: the store's collections, listed, described and deleted."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated

import typer

from windowpack.cli.help_format import HelpGroup
from windowpack.cli.options import IndexDirOption, StoreOption, open_store
from windowpack.cli.output import errors
from windowpack.config import DEFAULT_COLLECTION, DEFAULT_STORE
from windowpack.errors import CollectionNotFoundError, InvalidArgumentError

if TYPE_CHECKING:
    from windowpack.service import Store
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
