"""The options every command shares (store, index folder, collection, embedder, a metadata
filter) and how a command opens the store they name."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

from windowpack.errors import InvalidArgumentError

if TYPE_CHECKING:
    from windowpack.filters import Filter
    from windowpack.service import Collection, Store

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
HeadersOption = Annotated[
    str,
    typer.Option(
        help="What the window says around its passages: compact (each document's title once, "
        "a passage's heading path only where its text does not show it), full (every "
        "passage's document, chunks and characters) or none (no headers; the provenance is "
        "in --json's items).",
    ),
]
EmbedderOption = Annotated[
    str | None,
    typer.Option(help="Embedding model name or path ('hash' for a model-free dry run)."),
]


_WHERE_CHARS = 4 * 1024 * 1024
# Twenty full `$in` lists: far past any filter typed by hand, well short of a slow parse.
_MAX_WHERE_VALUES = 200_000

WhereOption = Annotated[
    str | None,
    typer.Option(
        "--where",
        metavar="JSON",
        help="Only documents whose metadata matches this filter, in Chroma's where shape: "
        '\'{"team": "ops"}\', \'{"year": {"$gte": 2020}}\', \'{"$or": [...]}\' '
        "(docs/library.md).",
    ),
]


def parse_where(text: str | None) -> Filter | None:
    """`--where`'s JSON as a checked filter (None when not given); bad JSON or a bad filter
    is an error naming `--where` and the path inside it."""
    if text is None:
        return None
    from windowpack.filters import MAX_DEPTH, parse_filter
    from windowpack.text import load_untrusted_json

    # A clause level is a mapping and its `$and` list: two JSON levels, plus a condition's own.
    where = load_untrusted_json(
        text, argument="--where", max_chars=_WHERE_CHARS, max_depth=2 * MAX_DEPTH + 4,
        max_values=_MAX_WHERE_VALUES,
    )  # fmt: skip
    return parse_filter(where, argument="--where")


def open_store(
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


def read_collection(
    store: str, index_dir: str | None, embedder: str | None, collection: str
) -> Collection:
    """An existing collection of an existing store: the error names what exists."""
    return open_store(store, index_dir, embedder, create=False).collection(collection, create=False)
