"""Document titles from their text: the first level-1 heading of Markdown and HTML files."""

from __future__ import annotations

import re
from html.parser import HTMLParser

# What sites put between a page's own title and the site's name in a `<title>`.
SEPARATORS = re.compile(r"\s+[-\u2013\u2014|\u00b7:]{1,2}\s+|:\s+")


def markdown_title(text: str) -> str | None:
    """The text of the first level-1 heading (`# Title` or a `===` underline), if any.

    Parsed with markdown-it (CommonMark), so a `#` line inside a code block is not a title;
    inline markup (`*em*`, links) is dropped, its text kept.
    """
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(text)
    for index, token in enumerate(tokens[:-1]):
        if token.type == "heading_open" and token.tag == "h1":
            parts = tokens[index + 1].children or []
            words = "".join(p.content for p in parts if p.type in ("text", "code_inline"))
            title = " ".join(words.split())
            if title:
                return title
    return None


class _TitleParser(HTMLParser):
    """Collects the text of the first `<h1>` and of the first `<title>` element."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: dict[str, list[str]] = {"h1": [], "title": []}
        self._inside: str | None = None
        self._done: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.parts and tag not in self._done and self._inside is None:
            self._inside = tag

    def handle_endtag(self, tag: str) -> None:
        if tag == self._inside:
            self._inside = None
            # An empty element (an icon-only heading) does not count as the first one.
            if "".join(self.parts[tag]).strip():
                self._done.add(tag)

    def handle_data(self, data: str) -> None:
        if self._inside is not None:
            self.parts[self._inside].append(data)


def html_title(source: str) -> str | None:
    """The text of the `<title>` element, else of the first `<h1>`, if any: the order of
    trust, since a site's banner is often an `<h1>` on every page (mdBook's menu bar), while
    a `<title>` names its page, often with the site's name: a `<title>` that starts with the
    `<h1>` and goes on past a separator (" · Example Docs") gives the `<h1>`; the pages of one
    add shed a name they share together (`page_sets`)."""
    return trusted_title(html_titles(source))


def trusted_title(titles: dict[str, str]) -> str | None:
    """The title to trust of those a page offers (`html_titles`), as `html_title` says."""
    title, h1 = titles.get("title"), titles.get("h1")
    if title and h1 and _own_part(title, h1):
        return h1  # "Installing lanterns · Example Docs": the rest is the site's name
    # Else the title as written: an `<h1>` at its end may be the site's banner (mdBook's
    # "Wicks - The Lantern Book" under the `<h1>` "The Lantern Book"), and the title holds
    # the page's name either way ("PostgreSQL: Documentation: 15: CREATE TABLE").
    return title or h1


def _own_part(title: str, heading: str) -> bool:
    """Whether `title` is `heading`, a separator and more (the site's name, after it)."""
    folded, part = title.casefold(), heading.casefold()
    return any(folded[: cut.start()] == part for cut in SEPARATORS.finditer(title))


def html_titles(source: str) -> dict[str, str]:
    """The titles an HTML page offers: `"title"` (its `<title>`) and `"h1"` (its first
    non-empty `<h1>`), each as plain text, each only when the page has it."""
    parser = _TitleParser()
    parser.feed(source)
    parser.close()
    titles = {tag: " ".join("".join(parser.parts[tag]).split()) for tag in ("title", "h1")}
    return {tag: title for tag, title in titles.items() if title}
