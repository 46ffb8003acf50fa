"""Plain text, Markdown and HTML files to documents; Markdown titled by its first level-1
heading, HTML by its `<title>`, else its first `<h1>` (the titles it offers kept for the pages
of one add to be titled together, `page_sets`), HTML without its page furniture."""

from __future__ import annotations

from pathlib import Path

from windowpack.documents.file_text import decode_text, file_document
from windowpack.documents.html_pages import furniture_metadata, html_markdown
from windowpack.documents.titles import html_titles, markdown_title, trusted_title
from windowpack.errors import (
    EmptyDocumentError,
)
from windowpack.types import Document

FURNITURE_KEY = "furniture"
"""The metadata key of the page furniture an HTML document's text was parsed without."""

TITLES_KEY = "titles"
"""The metadata key of the titles an HTML page offers: `{"title": <title>, "h1": first <h1>}`
(each only when the page has it), from which `page_sets` chooses across one add."""


def parse_text(data: bytes, path: Path, name: str) -> Document:
    """A plain-text file, as written."""
    return file_document(decode_text(data, name), path, file_format="txt", kind="text")


def parse_markdown(data: bytes, path: Path, name: str) -> Document:
    """A Markdown file, titled by its first level-1 heading."""
    text = decode_text(data, name)
    title = markdown_title(text)
    return file_document(text, path, file_format="markdown", kind="markdown", title=title)


def parse_html(data: bytes, path: Path, name: str) -> Document:
    """An HTML file as Markdown without its page furniture (`html_pages`), titled by its
    `<title>`, else its first `<h1>`, else its file name."""
    return html_document(decode_text(data, name), path, name)


def html_document(source: str, path: Path, name: str) -> Document:
    """The document of an HTML page's source: its content as Markdown; the navigation,
    headers, footers, breadcrumbs and "See also" link lists taken out are kept in the
    metadata under `FURNITURE_KEY` (kind, text and offset of each, `html_pages`)."""
    page = html_markdown(source)
    if not page.text:
        raise EmptyDocumentError(name, "has no text")
    extra: dict[str, object] = {}
    if page.furniture:
        extra[FURNITURE_KEY] = furniture_metadata(page.furniture)
    offered = html_titles(source)
    if offered:
        extra[TITLES_KEY] = offered
    title = trusted_title(offered)
    return file_document(
        page.text, path, file_format="html", kind="markdown", title=title, extra=extra
    )
