"""Definition lists in markdown: a term line and the text that defines it.

A reference manual is mostly terms and their definitions: PostgreSQL's configuration
chapters are lists of `` `work_mem` (`integer`) `` each followed by what the parameter does
and its default, its SQL pages list each parameter of a command the same way. A summary that
quotes "The default value is `off`." without the term it belongs to says nothing, so the
summary tree reads these lists: a node names the terms defined in it, and a node inside one
long definition names its term.

A definition list reaches here as markdown in one of these forms (the term line is short,
is not a heading, a list item, a table row or indented code, and does not end like a
sentence or a lead-in: `.`, `!`, `?`, `:`, `;`, `,`):

- html2text's rendering of `<dl>`: the term line, then a line of spaces only, then a blank
  line and the definition (`<pre>` blocks are set off by space-only lines too, but their
  lines are indented code, which a term is not);
- Pandoc and PHP Markdown Extra: the term line, then (after at most one blank line) the
  definition, starting with `:` and a space;
- reStructuredText: the term line, then the definition indented on the very next line;
- a term line that opens with inline code or emphasis, set off by blank lines and followed
  by a prose paragraph, when a section has at least two of them.

Each definition runs from its term line to the next term line or the end of the text given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from windowpack.summarizer.prose import is_generic_label, is_prose_line
from windowpack.types import Span

_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_NOT_A_TERM = re.compile(
    r"^ {0,3}(#{1,6}(\s|$)|[-*+][ \t]|\d{1,9}[.)][ \t]|>|\|)|^\s*:?-{3,}|^ {4,}|^\t"
)
# Closing quotes (straight and curly), brackets and markup may follow the punctuation.
_SENTENCE_END = re.compile(r"[.!?:;,]['\"\u201d\u2019)*_`]*$")
_MARKUP_START = re.compile(r"^(`|\*\*?\S|_\S)")
_CODE_OR_HEADING = re.compile(r"^( {4,}|\t| {0,3}#{1,6}(\s|$))")
_PANDOC_DEFINITION = re.compile(r"^ {0,3}[:~][ \t]+\S")
_INDENTED_PROSE = re.compile(r"^( {2,}|\t)\S")
_LINK = re.compile(r"!?\[[^\]]*\]\([^)]*\)")
_WORD = re.compile(r"[^\W_]+")
_TRAILING_TYPE = re.compile(r"\s*\([^()]*\)$")
_MAX_TERM_CHARS = 160
_MAX_TERM_WORDS = 12
# A bare "`term`" line between blank lines is a term only where the pattern repeats.
_MIN_PLAIN_TERMS = 2


@dataclass(frozen=True, kw_only=True)
class Definition:
    """One entry of a definition list: its term line and its definition (both trimmed)."""

    term: Span
    body: Span


def term_name(term: str) -> str:
    """A term as a short name: its text with runs of whitespace collapsed and a trailing
    parenthesised type dropped (`` `work_mem` (`integer`) `` is `` `work_mem` ``)."""
    text = " ".join(term.split())
    shorter = _TRAILING_TYPE.sub("", text)
    return shorter if shorter else text


def definitions(text: str, start: int, end: int) -> list[Definition]:
    """The definitions in `text[start:end]`, in order (none inside fenced code)."""
    lines = _lines(text, start, end)
    strong: list[tuple[int, int]] = []  # (line of the term, line where the definition starts)
    plain: list[tuple[int, int]] = []
    in_fence = False
    for index, (line_start, line_end) in enumerate(lines):
        line = text[line_start:line_end]
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence or not _is_term_line(line):
            continue
        kind = _definition_after(text, lines, index)
        if kind is None:
            continue
        body_line, is_plain = kind
        (plain if is_plain else strong).append((index, body_line))
    found = sorted(strong + (plain if len(plain) >= _MIN_PLAIN_TERMS else []))
    result: list[Definition] = []
    for position, (term_line, body_line) in enumerate(found):
        body_start = _body_start(text, lines[body_line])
        next_term = found[position + 1][0] if position + 1 < len(found) else None
        body_end = lines[next_term][0] if next_term is not None else end
        term = _trimmed(text, *lines[term_line])
        body = _trimmed(text, body_start, body_end)
        if term is not None and body is not None:
            result.append(Definition(term=term, body=body))
    return result


def _lines(text: str, start: int, end: int) -> list[tuple[int, int]]:
    lines = []
    position = start
    while position < end:
        newline = text.find("\n", position, end)
        line_end = end if newline < 0 else newline
        lines.append((position, line_end))
        position = line_end + 1
    return lines


def _is_term_line(line: str) -> bool:
    stripped = line.strip()
    if not stripped or len(stripped) > _MAX_TERM_CHARS or _NOT_A_TERM.match(line):
        return False
    if _SENTENCE_END.search(stripped) or "|" in stripped or is_generic_label(stripped):
        return False
    visible = _LINK.sub("", stripped)
    words = _WORD.findall(visible)
    # A line of links is navigation; a term names something in words.
    return 0 < len(words) <= _MAX_TERM_WORDS and len(visible.strip()) * 2 >= len(stripped)


def _definition_after(
    text: str, lines: list[tuple[int, int]], index: int
) -> tuple[int, bool] | None:
    """Where the definition of a term on line `index` starts (a line index), and whether the
    form is the weak one (a bare term between blank lines); None if it is not a term."""

    def line(k: int) -> str | None:
        return text[lines[k][0] : lines[k][1]] if k < len(lines) else None

    following, after = line(index + 1), line(index + 2)
    if following is None:
        return None
    # html2text: "term", "    ", "" and an unindented paragraph.
    if following and not following.strip() and after is not None and not after.strip():
        body = _next_nonblank(text, lines, index + 3)
        if body is not None and not _CODE_OR_HEADING.match(line(body) or ""):
            return body, False
        return None
    # Pandoc / Markdown Extra: "term", [""], ": definition".
    for k in (index + 1, index + 2):
        candidate = line(k)
        marked = candidate is not None and _PANDOC_DEFINITION.match(candidate) is not None
        if marked and (k == index + 1 or not following.strip()):
            return k, False
    # reStructuredText: "term" and its definition indented on the next line.
    if _INDENTED_PROSE.match(following) and is_prose_line(following):
        previous = line(index - 1) if index > 0 else ""
        if not (previous or "").strip():
            return index + 1, False
    # A bare term in code or emphasis between blank lines, then a prose paragraph.
    previous = line(index - 1) if index > 0 else ""
    if _MARKUP_START.match(text[lines[index][0] : lines[index][1]].strip()) and not (
        (previous or "").strip() or following.strip()
    ):
        body = _next_nonblank(text, lines, index + 2)
        paragraph = line(body) if body == index + 2 else None
        if paragraph is not None and "|" not in paragraph and is_prose_line(paragraph):
            return index + 2, True
    return None


def _next_nonblank(text: str, lines: list[tuple[int, int]], k: int) -> int | None:
    while k < len(lines):
        if text[lines[k][0] : lines[k][1]].strip():
            return k
        k += 1
    return None


def _body_start(text: str, line: tuple[int, int]) -> int:
    """Where a definition's text starts on its first line: after a `:` or `~` marker."""
    match = _PANDOC_DEFINITION.match(text[line[0] : line[1]])
    return line[0] + match.end() - 1 if match else line[0]


def _trimmed(text: str, start: int, end: int) -> Span | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Span(start=start, end=end) if start < end else None
