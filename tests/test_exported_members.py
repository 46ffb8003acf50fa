"""The public surface is pinned: changing it must be a deliberate act (httpx habit)."""

from __future__ import annotations

import subprocess
import sys

import windowpack


def test_all_is_pinned() -> None:
    assert sorted(windowpack.__all__) == sorted(
        [
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
            "PROMPT_CACHE_MINIMUMS",
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
    )


def test_the_facade_return_types_are_exported() -> None:
    """What `Collection` and `Store` methods return can be named from the package root."""
    import inspect
    import typing

    returned = set()
    for cls in (windowpack.Collection, windowpack.Store):
        for name, method in inspect.getmembers(cls, inspect.isfunction):
            if not name.startswith("_"):
                hint = typing.get_type_hints(method).get("return")
                returned.update(getattr(hint, "__args__", ()) or (hint,))
    ours = {t for t in returned if getattr(t, "__module__", "").startswith("windowpack")}
    assert {"Window", "DocumentInfo", "CollectionStats", "TreeNode", "TreeOverview"} <= {
        t.__name__ for t in ours
    }
    missing = {t.__name__ for t in ours if getattr(windowpack, t.__name__, None) is not t}
    assert missing <= {"ApiKeys"}, missing


def test_every_exported_name_resolves() -> None:
    for name in windowpack.__all__:
        assert getattr(windowpack, name) is not None, name


def test_every_error_derives_from_the_root() -> None:
    errors = [getattr(windowpack, name) for name in windowpack.__all__ if name.endswith("Error")]
    assert errors
    for error in errors:
        assert issubclass(error, windowpack.WindowpackError), error
        assert isinstance(error.code, str) and 400 <= error.http_status < 600


def test_import_is_cheap() -> None:
    """`import windowpack` loads no model, tensor, index or database library."""
    heavy = [
        "torch", "sentence_transformers", "faiss", "bm25s", "sqlalchemy", "numpy", "fastapi",
        "httpx",
    ]  # fmt: skip
    code = f"import sys, windowpack; print(','.join(m for m in {heavy!r} if m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""
