"""llama-index `Document`s as windowpack documents, read by duck typing.

The core must not import llama-index (an optional extra; the import-linter contract forbids
it), and the service may not import `windowpack.integrations`, which sits above it. Reading
a llama-index document needs no import anyway: it is a pydantic model with a string `id_`,
a `text` and a `metadata` dict. So the conversion lives here, below the service, and
accepts anything with those attributes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from windowpack.errors import InvalidInputError
from windowpack.types import Document, DocumentKind

_MARKDOWN_SUFFIXES = (".md", ".markdown")


def from_llama_documents(documents: Iterable[Any]) -> list[Document]:
    """Each document's `id_` and `metadata` kept; the title from a `title` or `file_name`
    key, markdown chunking for markdown files, `file_path` as the source."""
    return [_converted(document, index) for index, document in enumerate(documents)]


def _converted(document: Any, index: int) -> Document:
    document_id = getattr(document, "id_", None)
    text = getattr(document, "text", None)
    metadata = getattr(document, "metadata", None)
    if not isinstance(document_id, str) or not isinstance(text, str):
        raise InvalidInputError(
            f"documents[{index}]: expected a llama-index Document (a string id_ and text), "
            f"got {type(document).__name__}"
        )
    if not isinstance(metadata, Mapping):
        raise InvalidInputError(f"{document_id}: metadata must be a mapping")
    title = metadata.get("title") or metadata.get("file_name")
    source = metadata.get("file_path")
    return Document(
        text=text,
        id=document_id,
        title=str(title) if title else None,
        metadata=dict(metadata),
        kind=_kind(metadata),
        source=source if isinstance(source, str) else None,
    )


def _kind(metadata: Mapping[str, Any]) -> DocumentKind:
    name = str(metadata.get("file_name") or metadata.get("file_path") or "").lower()
    markdown = metadata.get("file_type") == "text/markdown" or name.endswith(_MARKDOWN_SUFFIXES)
    return "markdown" if markdown else "text"
