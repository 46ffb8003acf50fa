"""Turn files and folders into `Document`s: plain text, Markdown, HTML, PDF, JSON and JSONL.

A file named explicitly must parse or its error is raised, so the caller stores nothing. Files
found while walking a folder are best effort: one that cannot be parsed is recorded in
`ParseResult.skipped` with the reason and the walk goes on.

Each document's id is its path in POSIX form: relative to `root` when one is given (the
facade always gives one: the folder that holds the store), else as given. So ingesting the
same files again yields the same ids, whatever the working directory, and unchanged files
are recognised. Markdown and HTML files are titled by their first level-1 heading.
"""

from __future__ import annotations

import codecs
import io
import json
import os
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from windowpack.documents.conversation import conversation_document, is_message
from windowpack.documents.titles import html_title, markdown_title
from windowpack.errors import (
    EmptyDocumentError,
    FileInputError,
    FileTooLargeError,
    InputPathNotFoundError,
    InvalidArgumentError,
    InvalidInputError,
    UnsupportedFileError,
)
from windowpack.types import Document, DocumentKind, Span

if TYPE_CHECKING:
    from pypdf import PdfReader

SUPPORTED_SUFFIXES: frozenset[str] = frozenset(
    {".txt", ".text", ".md", ".markdown", ".html", ".htm", ".pdf", ".json", ".jsonl", ""}
)
"""Lower-case suffixes `parse_file` reads; `""` stands for files without a suffix (plain text)."""

MAX_PDF_PAGES = 5000
"""Default most pages of one PDF (`StoreConfig.max_pdf_pages`): ~5 s of text extraction."""

_BINARY_SNIFF_BYTES = 8 * 1024
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
        return _parse_paths(paths, limits=limits, parse_many=parse_many)
    # Absolute, normalised paths ("..", "." resolved; links kept) from any working directory.
    prefix = Path(os.path.abspath(root)).as_posix().rstrip("/") + "/"
    absolute = [os.path.abspath(path) for path in paths]
    try:
        result = _parse_paths(absolute, limits=limits, parse_many=parse_many)
    except FileInputError as error:
        raise type(error)(str(error.path).removeprefix(prefix), str(error.problem)) from None
    except InputPathNotFoundError as error:
        raise InputPathNotFoundError(str(error.path).removeprefix(prefix)) from None
    documents = [_relative(document, prefix) for document in result.documents]
    skipped = {
        path.removeprefix(prefix): reason.replace(prefix, "")
        for path, reason in result.skipped.items()
    }
    return ParseResult(documents=documents, skipped=skipped)


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
    return _read_bytes(path, name, max_bytes)


def parse_bytes(data: bytes, path: Path, *, max_pdf_pages: int = MAX_PDF_PAGES) -> list[Document]:
    """Parse the bytes `read_file` read from `path` (no file access: any process can do it)."""
    name = path.as_posix()
    file_format = _format_of(path.suffix.lower())
    if file_format == "pdf":
        return [_parse_pdf(data, path, name, max_pages=max_pdf_pages)]
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


# --- reading ---------------------------------------------------------------------------------


def _read_bytes(path: Path, name: str, max_bytes: int) -> bytes:
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InputPathNotFoundError(name) from None
    except OSError as error:
        raise UnsupportedFileError(name, f"cannot be read: {error.strerror}") from error
    # Only regular files: reading a FIFO or device would block or never end.
    if not stat.S_ISREG(info.st_mode):
        raise UnsupportedFileError(name, "is not a regular file")
    _check_size(name, info.st_size, max_bytes)
    try:
        with path.open("rb") as handle:
            # Read one byte past the limit so a file that grew since `stat` is still refused.
            data = handle.read(max_bytes + 1)
    except OSError as error:
        raise UnsupportedFileError(name, f"cannot be read: {error.strerror}") from error
    _check_size(name, len(data), max_bytes)
    return data


def _check_size(name: str, size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise FileTooLargeError(
            name,
            f"is {_format_size(size)}; the limit is {_format_size(max_bytes)} (max_file_bytes)",
        )


def _format_size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    if size >= 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size} bytes"


def _decode_text(data: bytes, name: str) -> str:
    """UTF-8 text (a BOM is accepted and dropped) with newlines normalised to "\\n"."""
    if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
        raise UnsupportedFileError(
            name, f"looks binary (a NUL byte in the first {_BINARY_SNIFF_BYTES // 1024} KiB)"
        )
    # The BOM is stripped by hand rather than with "utf-8-sig" so error offsets count from the
    # start of the file.
    body_start = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        text = data[body_start:].decode("utf-8")
    except UnicodeDecodeError as error:
        offset = body_start + error.start
        raise UnsupportedFileError(
            name, f"is not valid UTF-8: byte 0x{data[offset]:02x} at offset {offset}"
        ) from None
    text = _normalise_newlines(text)
    if not text.strip():
        raise EmptyDocumentError(name, "has no text")
    return text


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _format_of(suffix: str) -> str:
    if suffix in _MARKDOWN_SUFFIXES:
        return "markdown"
    if suffix in _HTML_SUFFIXES:
        return "html"
    if suffix in {".pdf", ".json", ".jsonl"}:
        return suffix[1:]
    return "txt"


def _document(
    text: str,
    path: Path,
    *,
    file_format: str,
    kind: DocumentKind,
    title: str | None = None,
    units: list[Span] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Document:
    name = path.as_posix()
    return Document(
        text=text,
        title=title or path.name,
        id=name,
        metadata={"path": name, "format": file_format, **(extra or {})},
        kind=kind,
        units=units,
        source=name,
    )


# --- text, Markdown, HTML --------------------------------------------------------------------


def _parse_text(data: bytes, path: Path, name: str) -> Document:
    return _document(_decode_text(data, name), path, file_format="txt", kind="text")


def _parse_markdown(data: bytes, path: Path, name: str) -> Document:
    text = _decode_text(data, name)
    title = markdown_title(text)
    return _document(text, path, file_format="markdown", kind="markdown", title=title)


def _parse_html(data: bytes, path: Path, name: str) -> Document:
    import html2text

    source = _decode_text(data, name)
    converter = html2text.HTML2Text()
    converter.body_width = 0  # no hard wrapping: line breaks would split sentences for search
    converter.unicode_snob = True  # keep "—", "é" as written instead of ASCII stand-ins
    markdown = _normalise_newlines(str(converter.handle(source))).strip()
    if not markdown:
        raise EmptyDocumentError(name, "has no text")
    return _document(markdown, path, file_format="html", kind="markdown", title=html_title(source))


# --- PDF -------------------------------------------------------------------------------------


def _parse_pdf(data: bytes, path: Path, name: str, *, max_pages: int) -> Document:
    pages, title, outline = _read_pdf(data, name, max_pages)
    # Blank pages are dropped so they do not leave runs of empty lines between pages.
    text = "\n\n".join(_with_headings(pages, outline))
    if not text:
        raise EmptyDocumentError(name, "PDF has no extractable text (scanned images?)")
    # With an outline the text is markdown: its heading lines make sections, heading paths
    # and a table of contents exactly as a markdown file's do.
    kind: DocumentKind = "markdown" if outline else "text"
    return _document(
        text, path, file_format="pdf", kind=kind, title=title, extra={"pages": len(pages)}
    )


@dataclass(frozen=True, kw_only=True)
class _OutlineEntry:
    page: int
    depth: int
    title: str


def _with_headings(pages: list[str], outline: list[_OutlineEntry]) -> list[str]:
    """The non-blank pages, each led by a `#` heading line per outline entry starting on it
    (an entry on a blank page leads the next page with text)."""
    waiting = sorted(outline, key=lambda entry: entry.page)  # stable: outline order kept
    parts: list[str] = []
    for number, page in enumerate(pages):
        if not page.strip():
            continue
        here = [entry for entry in waiting if entry.page <= number]
        waiting = waiting[len(here) :]
        headings = [f"{'#' * min(entry.depth, 6)} {entry.title}" for entry in here]
        parts.append("\n\n".join([*headings, page]))
    return parts


def _read_pdf(
    data: bytes, name: str, max_pages: int
) -> tuple[list[str], str | None, list[_OutlineEntry]]:
    """Each page's text, the metadata title and the outline; any failure is an unreadable
    PDF (a damaged outline only loses the outline)."""
    import pypdf

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        _unlock(reader, name)
        # Counted from the page tree before any text is extracted: extraction is the slow
        # part (20,000 small pages took ~20 s in one request).
        if len(reader.pages) > max_pages:
            raise FileTooLargeError(
                name, f"has {len(reader.pages):,} pages; the most is {max_pages:,} (max_pdf_pages)"
            )
        pages = [_normalise_newlines(page.extract_text()) for page in reader.pages]
        title = reader.metadata.title if reader.metadata is not None else None
    except (UnsupportedFileError, FileTooLargeError):
        raise
    # pypdf raises many exception types on damaged files (its own, KeyError, ValueError, ...);
    # every one of them means this file cannot be read, so all are reported the same way.
    except Exception as error:
        raise UnsupportedFileError(name, f"is not a readable PDF: {error}") from error
    clean_title = " ".join(title.split()) if isinstance(title, str) else ""
    return pages, clean_title or None, _outline(reader)


def _outline(reader: PdfReader) -> list[_OutlineEntry]:
    """The outline's entries in order, each with its 0-based page and depth (1 = top)."""
    entries: list[_OutlineEntry] = []

    def walk(items: list[Any], depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
                continue
            page = reader.get_destination_page_number(item)
            title = " ".join(str(item.title or "").split())
            if title and page is not None and page >= 0:
                entries.append(_OutlineEntry(page=page, depth=depth, title=title))

    try:
        walk(reader.outline, 1)
    # An outline that does not parse is not worth refusing the PDF for: its text still is.
    except Exception:
        return []
    return entries


def _unlock(reader: PdfReader, name: str) -> None:
    """Open an encrypted PDF with the empty user password, which many "protected" PDFs use."""
    import pypdf

    if reader.is_encrypted and reader.decrypt("") == pypdf.PasswordType.NOT_DECRYPTED:
        raise UnsupportedFileError(name, "is an encrypted PDF (a password is needed)")


# --- JSON and JSONL --------------------------------------------------------------------------


def _parse_json(data: bytes, path: Path, name: str) -> Document:
    value = _load_json(_decode_text(data, name), name, first_line=1)
    if isinstance(value, list):
        if value and all(is_message(item) for item in value):
            return _conversation(value, path, name, file_format="json")
        return _records([_dump_record(item) for item in value], path, name, file_format="json")
    if isinstance(value, dict):
        return _parse_json_object(value, path, name)
    raise UnsupportedFileError(
        name, f"JSON top level must be a list or an object, got {type(value).__name__}"
    )


def _parse_json_object(value: dict[str, Any], path: Path, name: str) -> Document:
    title = value.get("title") if isinstance(value.get("title"), str) else None
    messages = value.get("messages")
    if isinstance(messages, list):
        return _conversation(messages, path, name, file_format="json", title=title)
    text = value.get("text")
    if isinstance(text, str):
        text = _normalise_newlines(text)
        if not text.strip():
            raise EmptyDocumentError(name, "has no text in its 'text' field")
        return _document(text, path, file_format="json", kind="text", title=title)
    raise UnsupportedFileError(
        name, "JSON object has neither a 'messages' list nor a string 'text' field"
    )


def _parse_jsonl(data: bytes, path: Path, name: str) -> Document:
    lines = [
        (number, line)
        for number, line in enumerate(_decode_text(data, name).split("\n"), start=1)
        if line.strip()
    ]
    values = [_load_json(line, name, first_line=number) for number, line in lines]
    if all(is_message(value) for value in values):
        return _conversation(values, path, name, file_format="jsonl")
    # The original lines are kept verbatim so the stored text matches the file.
    return _records([line for _, line in lines], path, name, file_format="jsonl")


def _load_json(text: str, name: str, *, first_line: int) -> Any:
    """Parse JSON; `first_line` is the file line `text` starts on, for the error message."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        line = first_line + error.lineno - 1
        raise UnsupportedFileError(
            name, f"invalid JSON at line {line} column {error.colno}: {error.msg}"
        ) from None
    except RecursionError:
        raise UnsupportedFileError(name, "JSON is nested too deeply to parse") from None


def _conversation(
    messages: list[Any], path: Path, name: str, *, file_format: str, title: str | None = None
) -> Document:
    if not messages:
        raise EmptyDocumentError(name, "has no messages")
    try:
        document = conversation_document(messages)
    except InvalidInputError as error:
        raise UnsupportedFileError(name, error.message) from None
    # Rebuilt through `_document` so conversations get the same id, title and metadata rules.
    return _document(
        document.text,
        path,
        file_format=file_format,
        kind="conversation",
        title=title,
        units=document.units,
    )


def _dump_record(record: Any) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True)


def _records(lines: list[str], path: Path, name: str, *, file_format: str) -> Document:
    """One record per line; each line is a unit so a chunk never splits or merges records."""
    if not lines:
        raise EmptyDocumentError(name, "has no records")
    units: list[Span] = []
    position = 0
    for line in lines:
        units.append(Span(start=position, end=position + len(line)))
        position += len(line) + 1
    return _document("\n".join(lines), path, file_format=file_format, kind="records", units=units)


_PARSERS: dict[str, Callable[[bytes, Path, str], Document]] = {
    "txt": _parse_text,
    "markdown": _parse_markdown,
    "html": _parse_html,
    "json": _parse_json,
    "jsonl": _parse_jsonl,
}
