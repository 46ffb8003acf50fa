"""Page furniture is not content: an HTML page's navigation bars, site header and footer,
breadcrumbs and "See also" link lists are in no chunk, kept in the document's metadata
instead; the page's content (code, tables, definition lists, its title) is all still there,
and nothing but HTML changes."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from pg_manual import manual_pages

from windowpack.documents import FURNITURE_KEY, chunk_document, parse_bytes, parse_paths
from windowpack.text import TokenCounter, get_token_counter
from windowpack.types import Document

PAGE = """<!DOCTYPE html>
<html><head><title>Installing Lanterns · Example Docs</title></head><body>
<header class="site"><a href="/">Example Docs</a>
  <nav><ul><li><a href="/">Home</a></li><li><a href="/blog">Blog</a></li>
  <li><a href="/pricing">Pricing</a></li></ul></nav></header>
<nav aria-label="Breadcrumb"><ol><li><a href="/">Home</a></li><li><a href="/guides">Guides</a></li>
  <li>Installing</li></ol></nav>
<div class="breadcrumbs"><a href="/docs">Docs</a> › <a href="/docs/setup">Setup</a></div>
<main><article>
  <header><h1>Installing lanterns</h1><p class="byline">Updated in March</p></header>
  <p>A lantern needs a wick of at least 12 millimetres before it is lit.</p>
  <pre><code>lantern install --wick 12mm

lantern light</code></pre>
  <table><tr><th>Setting</th><th>Default</th></tr><tr><td>wick_length</td><td>12mm</td></tr></table>
  <dl><dt><code>wick_length</code> (<code>integer</code>)</dt>
      <dd><p>How long the wick is.</p><p>The default is 12 millimetres.</p></dd></dl>
  <h2>See also</h2><p><a href="/oil">Oil</a>, <a href="/glass">Glass</a></p>
</article></main>
<footer><p>© 2026 Example Lanterns</p><a href="/privacy">Privacy</a> <a href="/terms">Terms</a>
</footer></body></html>"""
FURNITURE_WORDS = ["Blog", "Pricing", "Guides", "Setup", "Privacy", "Terms", "© 2026", "Oil"]
CONTENT = [
    "Installing lanterns",
    "Updated in March",
    "A lantern needs a wick of at least 12 millimetres",
    "lantern install --wick 12mm",
    "lantern light",
    "wick_length",
    "12mm",
    "`wick_length` (`integer`)\n:   How long the wick is.",
    "The default is 12 millimetres.",
]
NAVIGATION = re.compile(r"\[(?:Prev|Next|Up|Home)\]\(")


@cache
def counter() -> TokenCounter:
    return get_token_counter("o200k_base")


def _page(source: str, name: str = "lanterns.html") -> Document:
    (document,) = parse_bytes(source.encode("utf-8"), Path(name))
    return document


def _chunks(document: Document, target: int = 40) -> list[str]:
    return [document.text[c.start : c.end] for c in chunk_document(document, counter(), target)]


def test_navigation_headers_footers_breadcrumbs_and_see_also_are_in_no_chunk() -> None:
    document = _page(PAGE)
    chunks = _chunks(document)
    for word in FURNITURE_WORDS:
        assert not [chunk for chunk in chunks if word in chunk], word
    assert not [chunk for chunk in chunks if "Home" in chunk]
    for content in CONTENT:
        assert content in document.text, content
    assert document.title == "Installing lanterns"


def test_what_was_taken_out_is_kept_with_the_document_where_it_stood() -> None:
    document = _page(PAGE)
    furniture = document.metadata[FURNITURE_KEY]
    assert [entry["kind"] for entry in furniture] == [
        "header",
        "navigation",
        "breadcrumbs",
        "see-also",
        "footer",
    ]
    removed = "\n".join(entry["text"] for entry in furniture)
    for word in FURNITURE_WORDS:
        assert word in removed, word
    assert "[Privacy](/privacy)" in removed  # links kept, as Markdown
    # Each entry's offset is where it stood: the see-also list came after the entry.
    see_also = next(entry for entry in furniture if entry["kind"] == "see-also")
    before = document.text[: see_also["at"]]
    assert before.rstrip().endswith("The default is 12 millimetres.")
    assert all(0 <= entry["at"] <= len(document.text) for entry in furniture)


def test_what_is_not_furniture_stays() -> None:
    """A header with the page's title, a page that is its links, a "See also" that says more
    than links, and any other format than HTML."""
    titled = _page(
        "<header><h1>Lantern care</h1><nav><a href='/'>Home</a></nav></header><p>Oil.</p>"
    )
    assert titled.text.startswith("# Lantern care")
    assert "Home" not in titled.text
    links = "".join(f"<li><a href='/{n}'>Lantern model {n}</a></li>" for n in range(20))
    index = _page(f"<nav><ul>{links}</ul></nav><p>All models.</p>")
    assert "Lantern model 19" in index.text  # the navigation is the page: content
    assert FURNITURE_KEY not in index.metadata
    prose = "<h1>Wicks</h1><h2>See Also</h2><p>The <a href='/oil'>oil</a> guide says why.</p>"
    assert "says why" in _page(prose).text
    text = "# Notes\n\n[Prev](a.md) | [Up](b.md) | [Next](c.md)\n\nSee also: Home.\n"
    (markdown,) = parse_bytes(text.encode(), Path("notes.md"))
    assert markdown.text == text


# --- the PostgreSQL manual -------------------------------------------------------------------


def test_the_postgresql_manual_keeps_its_content_and_loses_its_navigation() -> None:
    pages = manual_pages()
    documents = {
        Path(document.id or "").name: document
        for document in parse_paths(pages, max_bytes=16 * 1024 * 1024).documents
    }
    with_navigation = [
        (name, chunk)
        for name, document in documents.items()
        for chunk in _chunks(document, 200)
        if NAVIGATION.search(chunk)
    ]
    assert not with_navigation, f"{len(with_navigation)} chunks: {with_navigation[:2]}"

    query = documents["runtime-config-query.html"].text
    assert "The default is 4 gigabytes (`4GB`)" in query
    assert query.startswith("## 20.7.\xa0Query Planning")  # the bar's copy of it is gone
    drop = documents["sql-dropdatabase.html"]
    assert drop.title == "DROP DATABASE"
    assert "DROP DATABASE [ IF EXISTS ] _name_ [ [ WITH ] ( _option_ [, ...] ) ]" in drop.text
    assert "`FORCE`\n:   Attempt to terminate all existing connections" in drop.text
    # A table: the severity levels of runtime-config-logging.
    assert "`DEBUG1 .. DEBUG5`| Provides successively-more-detailed information" in (
        documents["runtime-config-logging.html"].text
    )
    # Removed, and kept: both bars of every page, and DROP DATABASE's see-also list.
    for name, document in documents.items():
        kinds = [entry["kind"] for entry in document.metadata[FURNITURE_KEY]]
        assert kinds.count("navigation") == 2, name
    removed = "\n".join(entry["text"] for entry in drop.metadata[FURNITURE_KEY])
    assert '[Prev](sql-dropconversion.html "DROP CONVERSION")' in removed
    assert "[CREATE DATABASE](sql-createdatabase.html" in removed
