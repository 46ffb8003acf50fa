"""Markdown sections and their heading paths: the one place headings are recognised.

Chunking cuts a markdown document at its headings (`heading_starts`), the packer heads each
section's passages with its heading path and the summary tree lists those paths as a table
of contents (`section_paths`). HTML reaches here as markdown (html2text writes `#` headings)
and a PDF with an outline gets a heading line where each outline entry's page starts, so
all three share these rules.

Headings are ATX lines (`## exec`) outside fenced code blocks: a `#` line inside a code block
is a comment. A title is shown as plain text: inline code ticks, emphasis and link targets
are dropped (`[exec](#anchor)` reads `exec`), and so is the `#` mark html2text leaves where a
page had a "link to this heading" anchor.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from windowpack.types import Span

PATH_SEPARATOR = " › "
# A heading path longer than this is shortened in the middle: it is a header, not content.
_PATH_CHARS = 120
_MARKDOWN_LINE = re.compile(
    r"^(?:(?P<fence> {0,3}(?:```|~~~))|(?P<heading> {0,3}#{1,6})(?=\s|$))", re.M
)
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
# Code ticks and `*` emphasis; `_` stays, it is part of names such as `__dirname`.
_MARKUP = re.compile(r"`|\*\*|(?<!\w)\*(?=\w)|(?<=\w)\*(?!\w)")


@dataclass(frozen=True, kw_only=True)
class Heading:
    """One heading: its level (1 for `#`) and its title as plain text."""

    level: int
    title: str


def heading_starts(text: str, start: int, end: int, *, include_start: bool = False) -> list[int]:
    """Where markdown headings start in `text[start:end]` (at `start` itself only if asked)."""
    starts: list[int] = []
    in_fence = False
    for match in _MARKDOWN_LINE.finditer(text, start, end):
        if match.group("fence"):
            in_fence = not in_fence  # a "#" line inside a code block is a comment, not a heading
        elif not in_fence and (match.start() > start or include_start):
            starts.append(match.start())
    return starts


def parse_heading(line: str) -> Heading | None:
    """The heading a line is, if it is an ATX heading with a title."""
    match = _HEADING.match(line)
    if match is None:
        return None
    title = plain_title(match.group(2))
    return Heading(level=len(match.group(1)), title=title) if title else None


def plain_title(markup: str) -> str:
    """A heading's inline markdown as the text a reader sees."""
    text = _MARKUP.sub("", _LINK.sub(r"\1", markup))
    return " ".join(text.split()).rstrip("#").rstrip()


def heading_trail(text: str, sections: Sequence[Span]) -> list[tuple[str, ...]]:
    """For each section, the titles of the headings it lies under, outermost first, its own
    last; a section that does not start with a heading (the text before the first) has the
    headings open where it starts (none for the first)."""
    trails: list[tuple[str, ...]] = []
    open_headings: list[Heading] = []  # outermost first
    for section in sections:
        line_end = text.find("\n", section.start, section.end)
        heading = parse_heading(text[section.start : section.end if line_end < 0 else line_end])
        if heading is not None:
            open_headings = [h for h in open_headings if h.level < heading.level]
            open_headings.append(heading)
        trails.append(tuple(h.title for h in open_headings))
    return trails


def section_paths(name: str, text: str, sections: Sequence[Span]) -> list[str]:
    """Each section's heading path, `guide.md › exec › options`: `name`, then the headings the
    section lies under (its own last), shortened in the middle past 120 characters."""
    return [shortened_path((name, *trail)) for trail in heading_trail(text, sections)]


def shortened_path(parts: Sequence[str]) -> str:
    """Parts joined by " › ", cut in the middle when longer than a header should be."""
    path = PATH_SEPARATOR.join(parts)
    if len(path) > _PATH_CHARS:
        half = _PATH_CHARS // 2 - 1
        path = f"{path[:half]}…{path[-half:]}"
    return path
