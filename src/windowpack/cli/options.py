"""The options every command shares (store, index folder, collection, embedder) and how a
command opens the store they name."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

from windowpack.errors import InvalidArgumentError

if TYPE_CHECKING:
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
