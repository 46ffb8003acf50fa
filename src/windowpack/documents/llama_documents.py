"""llama-index `Document`s as windowpack documents, read by duck typing.

The core must not import llama-index (an optional extra; the import-linter contract forbids
it), and the service may not import `windowpack.integrations`, which sits above it. Reading
a llama-index document needs no import anyway: it is a pydantic model with a string `id_`,
a `text` and a `metadata` dict. So the conversion lives here, below the service, and
accepts anything with those attributes.

A reader's document is named as `add_files` names a file. `SimpleDirectoryReader` gives a
file's path as its id (`filename_as_id=True`) and `file_path`, absolute but not normalised
(`/home/me/project/../llamadocs/a.html`, which no store accepts as an id); that path is made
relative to `root` (the store's root), or absolute and normalised for a file outside it, so
a file has the same id whether it came through `add_files` or a reader, from any working
directory. A reader's `_part_N` suffix (one file read as several documents) is kept.

A reader that does not convert a format hands over its source: `SimpleDirectoryReader`
without `llama-index-readers-file` reads HTML as markup and a PDF as its raw bytes. Such a
document is parsed as `add_files` would parse the file: HTML markup (its metadata says HTML
and its text has tags, or its text opens as an HTML page) to Markdown without its page
furniture, titled by its `<title>` or `<h1>`; a raw PDF (text opening `%PDF-`) from its file
at `file_path`; Markdown (by its metadata, or with no file type given, a text opening with a
`#` heading) as markdown, titled by its first level-1 heading. A `title` key in the metadata
is kept as the title; `file_name` is the title of last resort.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from windowpack.documents.file_text import read_bytes
from windowpack.documents.parsing import MAX_PDF_PAGES, root_prefix
from windowpack.documents.pdf import parse_pdf
from windowpack.documents.text_formats import html_document
from windowpack.documents.titles import html_title, markdown_title
from windowpack.errors import InputPathNotFoundError, InvalidInputError
from windowpack.types import Document, DocumentKind

_MARKDOWN_SUFFIXES = (".md", ".markdown")
_HTML_SUFFIXES = (".html", ".htm", ".xhtml")
_MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown"})
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_PDF_TYPE = "application/pdf"
# A page of HTML: its doctype or <html> first (after an XML declaration and comments).
_HTML_PAGE = re.compile(
    r"\s*(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html[\s>])", re.I | re.S
)
_HTML_TAG = re.compile(
    r"<(?:html|head|body|div|p|h[1-6]|table|dl|ul|ol|pre|span|a|section|article)\b[^>]*>", re.I
)
_FIRST_LINE_HEADING = re.compile(r"\s*#{1,6}[ \t]+\S")
_PART_SUFFIX = re.compile(r"_part_\d+")
_DOT_SEGMENT = re.compile(r"(?:^|[/\\])\.{1,2}(?:[/\\]|$)")


@dataclass(frozen=True, kw_only=True)
class _Limits:
    root: str | None  # the root's prefix ("/store/parent/"), or None to keep paths absolute
    max_bytes: int
    max_pdf_pages: int


def from_llama_documents(
    documents: Iterable[Any],
    *,
    root: str | os.PathLike[str] | None = None,
    max_bytes: int = 64 * 1024 * 1024,
    max_pdf_pages: int = MAX_PDF_PAGES,
) -> list[Document]:
    """Each document's `id_` and `metadata` kept, a reader's file paths named relative to
    `root` as `add_files` names files (absolute, normalised, without one or outside it);
    HTML, raw PDF and Markdown parsed as `add_files` parses those files (module docstring).
    A raw PDF is read from its `file_path`, within `max_bytes` and `max_pdf_pages`."""
    limits = _Limits(
        root=root_prefix(Path(root)) if root is not None else None,
        max_bytes=max_bytes,
        max_pdf_pages=max_pdf_pages,
    )
    return [_converted(document, index, limits) for index, document in enumerate(documents)]


def _converted(document: Any, index: int, limits: _Limits) -> Document:
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
    metadata = dict(metadata)
    file_path = metadata.get("file_path")
    path = file_path if isinstance(file_path, str) and file_path else None
    name = _name(path, limits.root) if path is not None else None
    if name is not None:
        metadata["file_path"] = name
    converted = Document(
        text=text,
        id=_renamed(document_id, path, name, limits.root),
        title=_title(metadata, None),
        metadata=metadata,
        kind="text",
        source=name,
    )
    return _parsed(converted, _file_format(metadata, text), path, limits)


def _name(path: str, prefix: str | None) -> str:
    """A file's name as `add_files` gives it: absolute and normalised, relative to the root
    when under it."""
    absolute = Path(os.path.abspath(path)).as_posix()
    return absolute.removeprefix(prefix) if prefix is not None else absolute


def _renamed(document_id: str, path: str | None, name: str | None, prefix: str | None) -> str:
    """The id: a reader's file path (with any `_part_N`) as the file's name; another id with
    a `.` or `..` segment normalised as a path; any other id as given."""
    if path is not None and name is not None and document_id.startswith(path):
        rest = document_id[len(path) :]
        if not rest or _PART_SUFFIX.fullmatch(rest):
            return name + rest
    if _DOT_SEGMENT.search(document_id):
        return _name(document_id, prefix)
    return document_id


def _title(metadata: Mapping[str, Any], parsed: str | None) -> str | None:
    title = metadata.get("title") or parsed or metadata.get("file_name")
    return str(title) if title else None


def _file_format(metadata: Mapping[str, Any], text: str) -> str:
    """What the text is: "html", "pdf" (raw bytes of one), "markdown" or "text"."""
    declared = str(metadata.get("file_type") or metadata.get("mime_type") or "").lower()
    declared = declared.split(";")[0].strip()
    name = str(metadata.get("file_name") or metadata.get("file_path") or "").lower()
    says_html = declared in _HTML_TYPES or name.endswith(_HTML_SUFFIXES)
    if _HTML_PAGE.match(text) or (says_html and _HTML_TAG.search(text)):
        return "html"
    if text.lstrip().startswith("%PDF-") and (declared == _PDF_TYPE or name.endswith(".pdf")):
        return "pdf"
    if declared in _MARKDOWN_TYPES or name.endswith(_MARKDOWN_SUFFIXES):
        return "markdown"
    if not declared and not name and _FIRST_LINE_HEADING.match(text):
        return "markdown"
    return "text"


def _parsed(document: Document, file_format: str, path: str | None, limits: _Limits) -> Document:
    """The document with its text parsed as its format says (unchanged for plain text)."""
    label = document.id or ""
    if file_format == "markdown":
        kind: DocumentKind = "markdown"
        title = _title(document.metadata, markdown_title(document.text))
        return _with(document, document.text, title, kind, {})
    if file_format == "html":
        page = html_document(document.text, Path(document.source or label), label)
        # The page's own title only: not the file name a file's document falls back to.
        title = _title(document.metadata, html_title(document.text))
    elif file_format == "pdf":
        page = _pdf(document, path, limits)
        title = _title(document.metadata, page.title)
    else:
        return document
    extra = {key: value for key, value in page.metadata.items() if key != "path"}
    return _with(document, page.text, title, page.kind, extra)


def _with(
    document: Document, text: str, title: str | None, kind: DocumentKind, extra: dict[str, Any]
) -> Document:
    return Document(
        text=text,
        id=document.id,
        title=title,
        metadata={**document.metadata, **extra},
        kind=kind,
        source=document.source,
    )


def _pdf(document: Document, path: str | None, limits: _Limits) -> Document:
    """A PDF a reader handed over as raw bytes, parsed again from its file."""
    label = document.id or ""
    if path is None:
        raise InvalidInputError(
            f"{label}: is a PDF's raw bytes and has no file_path to read it from"
        )
    try:
        data = read_bytes(Path(path), document.source or label, limits.max_bytes)
    except InputPathNotFoundError:
        raise InvalidInputError(
            f"{label}: is a PDF's raw bytes and its file {document.source} is not there to parse"
        ) from None
    name = document.source or label
    return parse_pdf(data, Path(name), name, max_pages=limits.max_pdf_pages)
