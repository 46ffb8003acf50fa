"""PDF files to documents: each page's text, and with an outline, a Markdown heading per
entry, so a PDF gets sections as a Markdown file does."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from windowpack.documents.file_text import file_document, normalise_newlines
from windowpack.errors import (
    EmptyDocumentError,
    FileTooLargeError,
    UnsupportedFileError,
)
from windowpack.types import Document, DocumentKind

if TYPE_CHECKING:
    from pypdf import PdfReader


def parse_pdf(data: bytes, path: Path, name: str, *, max_pages: int) -> Document:
    """A PDF's text; with an outline, Markdown with a heading per entry."""
    pages, title, outline = _read_pdf(data, name, max_pages)
    # Blank pages are dropped so they do not leave runs of empty lines between pages.
    text = "\n\n".join(_with_headings(pages, outline))
    if not text:
        raise EmptyDocumentError(name, "PDF has no extractable text (scanned images?)")
    # With an outline the text is markdown: its heading lines make sections, heading paths
    # and a table of contents exactly as a markdown file's do.
    kind: DocumentKind = "markdown" if outline else "text"
    return file_document(
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
        # part (~1 ms a page: 20,000 small pages cost ~20 s).
        if len(reader.pages) > max_pages:
            raise FileTooLargeError(
                name, f"has {len(reader.pages):,} pages; the most is {max_pages:,} (max_pdf_pages)"
            )
        pages = [normalise_newlines(page.extract_text()) for page in reader.pages]
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
