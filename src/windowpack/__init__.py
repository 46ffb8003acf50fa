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

from windowpack.config import EvidenceSettings, StoreConfig
from windowpack.errors import (
    AuthenticationError,
    CollectionDeletedError,
    CollectionNotFoundError,
    ConflictError,
    DocumentNotFoundError,
    EmbedderMismatchError,
    EmptyDocumentError,
    FileTooLargeError,
    InputPathNotFoundError,
    InvalidArgumentError,
    InvalidInputError,
    JobInterruptedError,
    JobNotFoundError,
    MissingDependencyError,
    NotFoundError,
    PermissionDeniedError,
    ServerUnavailableError,
    StorageError,
    StoreNotFoundError,
    UnsupportedFileError,
    WindowpackError,
)
from windowpack.prompt_cache import PROMPT_CACHE_MINIMUMS
from windowpack.types import (
    CollectionStats,
    DeleteReport,
    Document,
    DocumentInfo,
    Hit,
    IngestProgress,
    IngestReport,
    LevelStats,
    TreeChild,
    TreeNode,
    TreeOverview,
    Window,
    WindowItem,
)

if TYPE_CHECKING:
    from windowpack.client import AsyncClient, Client
    from windowpack.service import Collection, Store, WindowSession, open

__version__ = "0.1.0"

__all__ = [
    "PROMPT_CACHE_MINIMUMS",
    "AsyncClient",
    "AuthenticationError",
    "Client",
    "Collection",
    "CollectionDeletedError",
    "CollectionNotFoundError",
    "CollectionStats",
    "ConflictError",
    "DeleteReport",
    "Document",
    "DocumentInfo",
    "DocumentNotFoundError",
    "EmbedderMismatchError",
    "EmptyDocumentError",
    "EvidenceSettings",
    "FileTooLargeError",
    "Hit",
    "IngestProgress",
    "IngestReport",
    "InputPathNotFoundError",
    "InvalidArgumentError",
    "InvalidInputError",
    "JobInterruptedError",
    "JobNotFoundError",
    "LevelStats",
    "MissingDependencyError",
    "NotFoundError",
    "PermissionDeniedError",
    "ServerUnavailableError",
    "StorageError",
    "Store",
    "StoreConfig",
    "StoreNotFoundError",
    "TreeChild",
    "TreeNode",
    "TreeOverview",
    "UnsupportedFileError",
    "Window",
    "WindowItem",
    "WindowSession",
    "WindowpackError",
    "open",
]

_LAZY = {"open", "Store", "Collection", "WindowSession"}
_CLIENT = {"Client", "AsyncClient"}


def __getattr__(name: str) -> Any:
    # The service pulls in SQLAlchemy, numpy and the index libraries, the client httpx: load
    # them on first use.
    if name in _LAZY:
        from windowpack import service

        return getattr(service, name)
    if name in _CLIENT:
        from windowpack import client

        return getattr(client, name)
    raise AttributeError(f"module 'windowpack' has no attribute {name!r}")
