"""Turn files and folders into `Document`s: plain text, Markdown, HTML, PDF, JSON and JSONL.

A file named explicitly must parse or its error is raised, so the caller stores nothing. Files
found while walking a folder are best effort: one that cannot be parsed is recorded in
`ParseResult.skipped` with the reason and the walk goes on.

Each document's id is its path in POSIX form: relative to `root` when one is given (the
facade always gives one: the folder that holds the store), else as given. So ingesting the
same files again yields the same ids, whatever the working directory, and unchanged files
are recognised. Markdown files are titled by their first level-1 heading, HTML pages by their
`<title>`, else their first `<h1>`, else their file name; the HTML pages of one call are then
read together (`page_sets`): a site's name is cut from their titles, a banner is no title,
and blocks repeated on most pages are furniture.

Each format's parser is a module of its own (`text_formats`, `pdf`, `json_files`), over
the reading, decoding and naming rules of `file_text`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from windowpack.documents.file_text import read_bytes
from windowpack.documents.json_files import parse_json, parse_jsonl
from windowpack.documents.page_sets import site_pages
from windowpack.documents.pdf import parse_pdf
from windowpack.documents.text_formats import parse_html, parse_markdown, parse_text
from windowpack.errors import (
    FileInputError,
    InputPathNotFoundError,
    InvalidArgumentError,
    UnsupportedFileError,
)
from windowpack.types import Document

SUPPORTED_SUFFIXES: frozenset[str] = frozenset(
    {".txt", ".text", ".md", ".markdown", ".html", ".htm", ".pdf", ".json", ".jsonl", ""}
)
"""Lower-case suffixes `parse_file` reads; `""` stands for files without a suffix (plain text)."""

MAX_PDF_PAGES = 5000
"""Default most pages of one PDF (`StoreConfig.max_pdf_pages`): ~5 s of text extraction."""

_MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
_HTML_SUFFIXES = frozenset({".html", ".htm"})


@dataclass(frozen=True, kw_only=True)
class ParseResult:
    """The documents parsed from some paths and the folder files skipped (path -> why)."""

    documents: list[Document]
    skipped: dict[str, str] = field(default_factory=dict)


def parse_paths(
    paths: Sequence[str | os.PathLike[str]],
    *,
    max_bytes: int,
    root: Path | None = None,
    max_pdf_pages: int = MAX_PDF_PAGES,
    parse_many: ParseMany | None = None,
) -> ParseResult:
    """Parse files and folders (walked recursively, in sorted order, hidden entries skipped).

    Every path must exist, checked before anything is parsed (`InputPathNotFoundError`). A
    file named in `paths` that cannot be parsed raises its `FileInputError`; a file found
    inside a folder that cannot be parsed is recorded in `skipped` instead. A document reached
    twice (a file also inside a named folder) is returned once. With `root`, names (ids,
    sources, error messages, `skipped`) are paths relative to it, the same from any working
    directory (a file outside it keeps its absolute path); files uploaded to a temporary
    folder keep the names the client gave them. A PDF of more than `max_pdf_pages` pages is
    a `FileTooLargeError`, refused before any page is read. `parse_many` parses the files
    found (an executor's `parse_files`, which may spread them over processes); by default,
    one by one.
    """
    limits = ParseLimits(max_bytes=max_bytes, max_pdf_pages=max_pdf_pages)
    if root is None:
        result = _parse_paths(paths, limits=limits, parse_many=parse_many)
        return replace(result, documents=site_pages(result.documents))
    prefix = root_prefix(root)
    absolute = [os.path.abspath(path) for path in paths]
    try:
        result = _parse_paths(absolute, limits=limits, parse_many=parse_many)
    except FileInputError as error:
        raise type(error)(str(error.path).removeprefix(prefix), str(error.problem)) from None
    except InputPathNotFoundError as error:
        raise InputPathNotFoundError(str(error.path).removeprefix(prefix)) from None
    documents = site_pages([_relative(document, prefix) for document in result.documents])
    skipped = {
        path.removeprefix(prefix): reason.replace(prefix, "")
        for path, reason in result.skipped.items()
    }
    return ParseResult(documents=documents, skipped=skipped)


def root_prefix(root: Path) -> str:
    """What names under `root` start with, taken off them: its absolute, normalised path
    ("..", "." resolved; links kept) and a "/", the same from any working directory."""
    return Path(os.path.abspath(root)).as_posix().rstrip("/") + "/"


def _relative(document: Document, prefix: str) -> Document:
    def strip(name: str | None) -> str | None:
        return name.removeprefix(prefix) if name is not None else None

    metadata = dict(document.metadata)
    if isinstance(metadata.get("path"), str):
        metadata["path"] = metadata["path"].removeprefix(prefix)
    return replace(
        document, id=strip(document.id), source=strip(document.source), metadata=metadata
    )


def _parse_paths(
    paths: Sequence[str | os.PathLike[str]], *, limits: ParseLimits, parse_many: ParseMany | None
) -> ParseResult:
    _require_positive_max_bytes(limits.max_bytes)
    given = [Path(path) for path in paths]
    for path in given:
        # `exists()` follows links, so a dangling link counts as missing too.
        if not path.exists():
            raise InputPathNotFoundError(os.fspath(path))
    skipped: dict[str, str] = {}
    # Every file first (named ones flagged), then one batch parse: an executor may spread it.
    files = [
        (file, not path.is_dir())
        for path in given
        for file in (_walk(path, skipped) if path.is_dir() else [path])
    ]
    parse = parse_many or _parse_each
    documents: dict[str, Document] = {}
    for (path, named), parsed in zip(files, parse([f for f, _ in files], limits), strict=True):
        if isinstance(parsed, Exception):
            # A named file that cannot be parsed is an error; one found in a folder (even one
            # removed while the folder is walked) is skipped like any other bad file.
            if named or not isinstance(parsed, FileInputError | InputPathNotFoundError):
                raise parsed
            skipped[path.as_posix()] = parsed.message
            continue
        for document in parsed:
            documents.setdefault(document.id or "", document)
    return ParseResult(documents=list(documents.values()), skipped=skipped)


@dataclass(frozen=True, kw_only=True)
class ParseLimits:
    """What one file may cost: its size, and a PDF's pages."""

    max_bytes: int
    max_pdf_pages: int = MAX_PDF_PAGES


ParsedFile = list[Document] | Exception
"""What parsing one file gave: its documents, or the error to raise or record as skipped."""

ParseMany = Callable[[Sequence[Path], ParseLimits], Sequence[ParsedFile]]
"""Parses files within the limits and returns each one's result, in order."""


def _parse_each(paths: Sequence[Path], limits: ParseLimits) -> list[ParsedFile]:
    return [parse_or_error(path, limits) for path in paths]


def parse_or_error(path: Path, limits: ParseLimits) -> ParsedFile:
    """`parse_file`, with an input error returned instead of raised (it may cross a process)."""
    try:
        return parse_file(path, max_bytes=limits.max_bytes, max_pdf_pages=limits.max_pdf_pages)
    except (FileInputError, InputPathNotFoundError) as error:
        return error


def parse_file(path: Path, *, max_bytes: int, max_pdf_pages: int = MAX_PDF_PAGES) -> list[Document]:
    """Parse one file into its documents (today always exactly one).

    Raises `UnsupportedFileError` (unknown suffix, binary, not UTF-8, bad PDF or JSON),
    `EmptyDocumentError` (no text) or `FileTooLargeError` (over `max_bytes`, checked with
    `stat` before reading; a PDF over `max_pdf_pages` pages); all name the file.
    """
    data = read_file(path, max_bytes=max_bytes)
    return parse_bytes(data, path, max_pdf_pages=max_pdf_pages)


def read_file(path: Path, *, max_bytes: int) -> bytes:
    """A file's bytes, checked for a supported type and size first (errors as `parse_file`)."""
    _require_positive_max_bytes(max_bytes)
    name = path.as_posix()
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        supported = ", ".join(sorted(s for s in SUPPORTED_SUFFIXES if s))
        raise UnsupportedFileError(
            name, f"has an unsupported file type {suffix!r} (supported: {supported})"
        )
    return read_bytes(path, name, max_bytes)


def parse_bytes(data: bytes, path: Path, *, max_pdf_pages: int = MAX_PDF_PAGES) -> list[Document]:
    """Parse the bytes `read_file` read from `path` (no file access: any process can do it)."""
    name = path.as_posix()
    file_format = _format_of(path.suffix.lower())
    if file_format == "pdf":
        return [parse_pdf(data, path, name, max_pages=max_pdf_pages)]
    return [_PARSERS[file_format](data, path, name)]


def _require_positive_max_bytes(max_bytes: int) -> None:
    if max_bytes <= 0:
        raise InvalidArgumentError("max_bytes", f"must be a positive integer, got {max_bytes}")


# --- folders ---------------------------------------------------------------------------------


def _walk(folder: Path, skipped: dict[str, str]) -> Iterator[Path]:
    """Files under `folder` depth first, entries sorted by name, hidden ones left out."""
    try:
        entries = sorted(folder.iterdir(), key=lambda entry: entry.name)
    except OSError as error:
        skipped[folder.as_posix()] = f"{folder.as_posix()}: cannot be listed: {error.strerror}"
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            # Linked folders are not followed: a link back up the tree would never end.
            if entry.is_symlink():
                skipped[entry.as_posix()] = (
                    f"{entry.as_posix()}: is a link to a folder (not followed)"
                )
                continue
            yield from _walk(entry, skipped)
        else:
            yield entry


def _format_of(suffix: str) -> str:
    if suffix in _MARKDOWN_SUFFIXES:
        return "markdown"
    if suffix in _HTML_SUFFIXES:
        return "html"
    if suffix in {".pdf", ".json", ".jsonl"}:
        return suffix[1:]
    return "txt"


_PARSERS: dict[str, Callable[[bytes, Path, str], Document]] = {
    "txt": parse_text,
    "markdown": parse_markdown,
    "html": parse_html,
    "json": parse_json,
    "jsonl": parse_jsonl,
}
