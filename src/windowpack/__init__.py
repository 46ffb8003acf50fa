"""windowpack: the best context window for one question, at any token budget.

    import windowpack as wp
    store = wp.open("./wp-store")
    col = store.collection("docs")
    col.add([wp.Document(text="...", title="...")])
    hits = col.search("question", k=10)

Importing the package is cheap: the store, its database layer and the models load on first
use of `open`, `Store` or `Collection`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from windowpack.config import StoreConfig
from windowpack.errors import (
    CollectionNotFoundError,
    ConflictError,
    DocumentNotFoundError,
    EmptyDocumentError,
    FileTooLargeError,
    InputPathNotFoundError,
    InvalidArgumentError,
    InvalidInputError,
    MissingDependencyError,
    NotFoundError,
    StorageError,
    StoreNotFoundError,
    UnsupportedFileError,
    WindowpackError,
)
from windowpack.types import (
    PROMPT_CACHE_MINIMUMS,
    Document,
    Hit,
    IngestReport,
    Window,
    WindowItem,
)

if TYPE_CHECKING:
    from windowpack.service import Collection, Store, open

__version__ = "0.1.0"

__all__ = [
    "PROMPT_CACHE_MINIMUMS",
    "Collection",
    "CollectionNotFoundError",
    "ConflictError",
    "Document",
    "DocumentNotFoundError",
    "EmptyDocumentError",
    "FileTooLargeError",
    "Hit",
    "IngestReport",
    "InputPathNotFoundError",
    "InvalidArgumentError",
    "InvalidInputError",
    "MissingDependencyError",
    "NotFoundError",
    "StorageError",
    "Store",
    "StoreConfig",
    "StoreNotFoundError",
    "UnsupportedFileError",
    "Window",
    "WindowItem",
    "WindowpackError",
    "open",
]

_LAZY = {"open", "Store", "Collection"}


def __getattr__(name: str) -> Any:
    # The service pulls in SQLAlchemy, numpy and the index libraries: load it on first use.
    if name in _LAZY:
        from windowpack import service

        return getattr(service, name)
    raise AttributeError(f"module 'windowpack' has no attribute {name!r}")
