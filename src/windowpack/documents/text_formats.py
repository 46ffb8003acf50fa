"""Plain text, Markdown and HTML files to documents; the Markdown and HTML ones titled by
their first level-1 heading."""

from __future__ import annotations

from pathlib import Path

from windowpack.documents.file_text import decode_text, file_document, normalise_newlines
from windowpack.documents.titles import html_title, markdown_title
from windowpack.errors import (
    EmptyDocumentError,
)
from windowpack.types import Document


def parse_text(data: bytes, path: Path, name: str) -> Document:
    """A plain-text file, as written."""
    return file_document(decode_text(data, name), path, file_format="txt", kind="text")


def parse_markdown(data: bytes, path: Path, name: str) -> Document:
    """A Markdown file, titled by its first level-1 heading."""
    text = decode_text(data, name)
    title = markdown_title(text)
    return file_document(text, path, file_format="markdown", kind="markdown", title=title)


def parse_html(data: bytes, path: Path, name: str) -> Document:
    """An HTML file as Markdown (html2text), titled by its first level-1 heading."""
    import html2text

    source = decode_text(data, name)
    converter = html2text.HTML2Text()
    converter.body_width = 0  # no hard wrapping: line breaks would split sentences for search
    converter.unicode_snob = True  # keep "—", "é" as written instead of ASCII stand-ins
    markdown = normalise_newlines(str(converter.handle(source))).strip()
    if not markdown:
        raise EmptyDocumentError(name, "has no text")
    return file_document(
        markdown, path, file_format="html", kind="markdown", title=html_title(source)
    )
