"""What the HTML pages of one add share: a site's name in their titles, a banner, and blocks
repeated on most pages (sidebars, tables of contents, theme pickers, footers).

One page alone cannot tell its content from its site's furniture when the furniture has no
markup to know it by: mdBook's theme picker is a plain `<ul>`, its menu bar's `<h1>` is the
book's name on every page, a Sphinx footer is a `div`, and a sidebar `nav` that holds most of
a short page's words is kept by `html_pages` (an index page is its navigation). Across the
pages of one add it shows: the same block on most of them. So, once every file of an add is
parsed (`parse_paths`), its HTML pages are read together:

- **Titles.** Each page offers its `<title>`, its first `<h1>` and its file name, in that
  order of trust (kept in its metadata under `TITLES_KEY`). A part of the `<title>` that most
  pages share at one end, after a separator (" - The Rust Programming Language",
  " — Python 3.11 documentation"), is the site's name and is cut off. A title that most pages
  offer (a banner) is never chosen: the next one is. `shared_title_warning` says when most
  documents of an add still share one title.
- **Repeated blocks.** A Markdown block (`blocks.markdown_blocks`: a paragraph, a list item,
  a code block, a table) found on most pages, counting what `html_pages` already took out of
  them, is furniture where it stands at an edge of the page, with only such blocks between
  it and the edge: it is removed and kept in the metadata with the rest (kind "repeated").
  Furniture frames a page; a block repeated inside the content is the content's own (the
  Rust book's "Filename: src/main.rs" above most listings). A heading is structure, not
  furniture (60 of PostgreSQL's 85 reference pages have a "Description" section), unless
  nothing but furniture stands under it (mdBook's banner). "Most" is more than half of the
  pages and at least `MIN_PAGES`: two pages that share a paragraph may be quoting each
  other.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from windowpack.documents.blocks import markdown_blocks
from windowpack.documents.html_pages import MAX_FURNITURE_CHARS
from windowpack.documents.text_formats import FURNITURE_KEY, TITLES_KEY
from windowpack.documents.titles import SEPARATORS, trusted_title
from windowpack.types import Document

MIN_PAGES = 3
"""The fewest pages a title or block must be on to count as the site's, not a page's."""

_HEADING = re.compile(r"#{1,6}(?:\s|$)")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, kw_only=True)
class _Block:
    start: int
    end: int
    key: str
    heading: bool


def site_pages(documents: Sequence[Document]) -> list[Document]:
    """`documents` (one add's) with their HTML pages titled and their repeated blocks taken
    out, as the module docstring says; other documents as they are, all in order."""
    pages = [index for index, document in enumerate(documents) if _is_page(document)]
    if len(pages) < MIN_PAGES:
        return list(documents)  # too few to show a site: each keeps its own page's title
    result = list(documents)
    for index, page in zip(pages, _without_repeats([documents[i] for i in pages]), strict=True):
        result[index] = page
    banners = _banners([result[index] for index in pages])
    affixes = _site_affixes([_offered(result[index]).get("title") for index in pages])
    for index in pages:
        result[index] = _titled(result[index], banners, affixes)
    return result


def shared_title_warning(documents: Sequence[Document]) -> str | None:
    """A warning when most documents of one add (more than half, at least `MIN_PAGES`) share
    one title: a reader, a summary or a window's header could not tell them apart."""
    titles = Counter(document.title for document in documents if document.title)
    if not titles:
        return None
    title, count = titles.most_common(1)[0]
    if count < MIN_PAGES or count * 2 <= len(documents):
        return None
    return (
        f"{count} of {len(documents)} documents share the title {title!r}: "
        "give each its own (Document.title, or a <title> / first heading per file)"
    )


def _is_page(document: Document) -> bool:
    return document.metadata.get("format") == "html" and TITLES_KEY in document.metadata


def _most(count: int, pages: int) -> bool:
    return count >= MIN_PAGES and count * 2 > pages


# --- titles ----------------------------------------------------------------------------------


def _offered(document: Document) -> dict[str, str]:
    offered = document.metadata.get(TITLES_KEY)
    return dict(offered) if isinstance(offered, dict) else {}


def _site_affixes(titles: Sequence[str | None]) -> tuple[str, str]:
    """The prefix and suffix (separator included) that most of `titles` share, or ""."""
    prefixes: Counter[str] = Counter()
    suffixes: Counter[str] = Counter()
    for title in titles:
        if not title:
            continue
        cuts = list(SEPARATORS.finditer(title))
        prefixes.update({title[: cut.end()] for cut in cuts if title[cut.end() :].strip()})
        suffixes.update({title[cut.start() :] for cut in cuts if title[: cut.start()].strip()})

    def shared(counts: Counter[str]) -> str:
        common = [affix for affix, count in counts.items() if _most(count, len(titles))]
        return max(common, key=len, default="")

    return shared(prefixes), shared(suffixes)


def _banners(pages: Sequence[Document]) -> frozenset[str]:
    """Titles most pages offer (as their `<title>` or first `<h1>`): the site's name."""
    counts = Counter(title for page in pages for title in set(_offered(page).values()))
    return frozenset(title for title, count in counts.items() if _most(count, len(pages)))


def _titled(document: Document, banners: frozenset[str], affixes: tuple[str, str]) -> Document:
    """The document titled by the titles it offers that are no banner (`titles.trusted_title`
    of its `<title>` without the site's affixes and its first `<h1>`), else its file name."""
    offered = _offered(document)
    usable = {}
    if offered.get("title") and offered["title"] not in banners:
        usable["title"] = _without_affixes(offered["title"], affixes)
    if offered.get("h1") and offered["h1"] not in banners:
        usable["h1"] = offered["h1"]
    chosen = trusted_title({tag: title for tag, title in usable.items() if title not in banners})
    name = str(document.metadata.get("path") or document.id or "").rsplit("/", 1)[-1]
    return replace(document, title=chosen or name or document.title)


def _without_affixes(title: str, affixes: tuple[str, str]) -> str:
    prefix, suffix = affixes
    if suffix and title.endswith(suffix) and len(title) > len(suffix):
        title = title[: -len(suffix)]
    if prefix and title.startswith(prefix) and len(title) > len(prefix):
        title = title[len(prefix) :]
    return title


# --- repeated blocks -------------------------------------------------------------------------


def _blocks(text: str) -> list[_Block]:
    found = []
    for block in markdown_blocks(text, 0, len(text)):
        piece = text[block.span.start : block.span.end]
        key = _SPACE.sub(" ", piece).strip()
        if key:
            heading = bool(_HEADING.match(piece))
            found.append(
                _Block(start=block.span.start, end=block.span.end, key=key, heading=heading)
            )
    return found


def _furniture_keys(document: Document) -> set[str]:
    """The blocks of what `html_pages` already took out of the page."""
    keys: set[str] = set()
    for entry in document.metadata.get(FURNITURE_KEY) or []:
        text = entry.get("text") if isinstance(entry, dict) else None
        if isinstance(text, str) and text.strip():
            keys.update(block.key for block in _blocks(text))
    return keys


def _without_repeats(pages: Sequence[Document]) -> list[Document]:
    page_blocks = [_blocks(page.text) for page in pages]
    counts: Counter[str] = Counter()
    for page, blocks in zip(pages, page_blocks, strict=True):
        counts.update({block.key for block in blocks} | _furniture_keys(page))
    repeated = {key for key, count in counts.items() if _most(count, len(pages))}
    if not repeated:
        return list(pages)
    return [
        _taken_out(page, _repeated_blocks(blocks, repeated))
        for page, blocks in zip(pages, page_blocks, strict=True)
    ]


def _repeated_blocks(blocks: list[_Block], repeated: set[str]) -> list[_Block]:
    """The blocks to take out: the repeated ones at each edge of the page, up to the first
    that is not; a repeated heading is one of them only if nothing but repeated blocks
    stands under it (up to the next heading), else it and what follows are content."""
    usable = [_is_furniture(blocks, index, repeated) for index in range(len(blocks))]
    first = next((index for index, ok in enumerate(usable) if not ok), len(blocks))
    last = next((index for index in reversed(range(len(blocks))) if not usable[index]), -1)
    return blocks[:first] + blocks[max(last + 1, first) :]


def _is_furniture(blocks: list[_Block], index: int, repeated: set[str]) -> bool:
    block = blocks[index]
    if block.key not in repeated:
        return False
    if not block.heading:
        return True
    for after in blocks[index + 1 :]:
        if after.heading:
            return True
        if after.key not in repeated:
            return False
    return True


def _taken_out(page: Document, blocks: list[_Block]) -> Document:
    """The page without `blocks` (and the blank lines after each), which join its furniture,
    each at the offset where it stood; the offsets of the furniture already there move with
    the text. A page that would be left empty stays as it was."""
    if not blocks:
        return page
    text = page.text
    kept: list[str] = []
    removed: list[tuple[int, int]] = []  # (start, end) in the old text, in order
    position = 0
    for block in blocks:
        end = block.end
        while end < len(text) and text[end] in " \t\n":
            end += 1
        kept.append(text[position : block.start])
        removed.append((block.start, end))
        position = end
    kept.append(text[position:])
    new_text = "".join(kept)
    if not new_text.strip():
        return page

    def moved(at: int) -> int:
        return at - sum(min(end, max(at, start)) - start for start, end in removed)

    furniture: list[dict[str, Any]] = [
        {**entry, "at": moved(int(entry["at"]))} for entry in page.metadata.get(FURNITURE_KEY) or []
    ]
    room = MAX_FURNITURE_CHARS - sum(len(str(entry.get("text", ""))) for entry in furniture)
    for block, (start, _) in zip(blocks, removed, strict=True):
        piece = text[block.start : block.end]
        entry: dict[str, Any] = {
            "kind": "repeated",
            "at": moved(start),
            "text": piece[: max(room, 0)],
        }
        if len(piece) > room:
            entry["cut"] = len(piece) - max(room, 0)
        room -= len(piece)
        furniture.append(entry)
    furniture.sort(key=lambda entry: int(entry["at"]))
    stripped = new_text.strip()
    lead = len(new_text) - len(new_text.lstrip())
    for entry in furniture:
        entry["at"] = min(max(0, int(entry["at"]) - lead), len(stripped))
    metadata = {**page.metadata, FURNITURE_KEY: furniture}
    return replace(page, text=stripped, metadata=metadata)
