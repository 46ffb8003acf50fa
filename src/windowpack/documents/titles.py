"""Document titles from their text: the first level-1 heading of Markdown and HTML files."""

from __future__ import annotations

from html.parser import HTMLParser


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
    """The text of the first `<h1>`, else of `<title>`, if any."""
    parser = _TitleParser()
    parser.feed(source)
    parser.close()
    for tag in ("h1", "title"):
        title = " ".join("".join(parser.parts[tag]).split())
        if title:
            return title
    return None
