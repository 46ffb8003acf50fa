"""Markdown and text blocks, so chunks start where a reader's eye would: at a list item, a
definition-list entry or a block.

Splitting a markdown section that is too big for one chunk at blank lines (as for prose)
would cut a tight list, which has none, at sentences: the chunk that answers "the default
maxBuffer of exec" in Node's docs would begin mid-bullet ("If exceeded, …") without the
option name; and a fenced code block with blank lines in it would be cut at them. So a
section is split into its CommonMark blocks instead (markdown-it-py, block rules only: inline
parsing is most of its cost and tells nothing about boundaries): each top-level block
(paragraph, heading, table, fence, …) and each list item, at any depth, up to the next item.
A fence or indented code block is one block and, if it must be split further, is split at
lines (sentence rules make no sense in code); any other block too big for a chunk is split
at sentences, as prose is.

A **definition-list entry** is one block too, like a list item: its term and its definition
(`Block.term`, `Block.parts`), so a parameter's name is never in another chunk than the text
about it. In Markdown it is the definition-list syntax of mdit-py-plugins' `deflist` (a term
line, then `: definition`; HTML's `<dl>` is written so, see `html_pages`); in plain text
(`text_blocks`) the reStructuredText form: a term line, after a blank line or another entry,
whose next line is indented more, the definition being every line indented more than the
term (blank lines within it included).

A **lead-in** and what it introduces are one unit of meaning too (design §4.8): a paragraph
ending with a colon ("Here are the rules:", "There are three things you can do:") means
nothing without the list, table, code block or definitions after it, and the list is hard to
place without it. On the Rust book, three of the five worst misses were a window holding the
lead-in and a gap where its list stood. `with_lead_ins` makes them one block, held like a
definition-list entry: the lead-in as its `term`, what follows as its `parts` (a whole list,
a run of entries, or one other block; a heading ends it), so a chunk holds both, or, when
they are too big for one, the lead-in starts a chunk with as much of the list as fits.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING

from windowpack.text import append_trimmed
from windowpack.types import Span

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_NEWLINE = re.compile("\n")
# A list item's first line (Markdown's and plain text's bullets, numbered items).
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+•]|\d{1,9}[.)])(?:[ \t]|$)")
_HEADING_LINE = re.compile(r"#{1,6}(?:[ \t]|$)")
# A lead-in's colon may sit inside emphasis or a link's text: "**Options:**".
_LEAD_IN_END = re.compile(r":[*_`\]]*\Z")
_CODE_BLOCKS = frozenset({"fence", "code_block"})


@dataclass(frozen=True, kw_only=True)
class Block:
    """One block of a text: `text[span.start:span.end]`, trimmed; code or not.

    A definition-list entry has its `term` (the term line) and its definition's blocks as
    `parts` (at least one, after the term, within `span`); a lead-in and what it introduces
    (`with_lead_ins`) likewise, the lead-in as the `term`."""

    span: Span
    code: bool
    term: Span | None = None
    parts: tuple[Block, ...] = ()


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.deflist import deflist_plugin

    parser = MarkdownIt("commonmark").use(deflist_plugin)
    return parser.disable(["inline", "text_join"], ignoreInvalid=True)


def markdown_blocks(text: str, start: int, end: int) -> list[Block]:
    """The blocks of `text[start:end]` in order; together they hold all its non-blank text."""
    fragment = text[start:end]
    line_starts = [start, *(start + m.end() for m in _NEWLINE.finditer(fragment)), end]
    reader = _TokenBlocks(text, _parser().parse(fragment), line_starts)
    return reader.blocks(0, len(reader.tokens), level=0, lines=(0, len(line_starts) - 1))


class _TokenBlocks:
    """Blocks from markdown-it's tokens of a fragment whose line starts are known."""

    def __init__(self, text: str, tokens: Sequence[Token], line_starts: list[int]) -> None:
        self.text, self.tokens, self.line_starts = text, tokens, line_starts

    def offset(self, line: int) -> int:
        return self.line_starts[min(line, len(self.line_starts) - 1)]

    def blocks(self, first: int, stop: int, *, level: int, lines: tuple[int, int]) -> list[Block]:
        """The blocks of tokens `[first, stop)`, whose blocks are at `level`, within `lines`."""
        bounds = {self.offset(lines[0]), self.offset(lines[1])}
        code_starts: set[int] = set()
        entries: dict[int, Block] = {}
        index = first
        while index < stop:
            token = self.tokens[index]
            index += 1
            if token.map is None or token.nesting < 0:
                continue
            if token.type == "dl_open" and token.level == level:
                close = self._closing(index - 1)
                for entry_start, entry_end, entry in self._entries(index, close, level, token.map):
                    bounds.update((entry_start, entry_end))
                    if entry is not None:
                        entries[entry_start] = entry
                index = close + 1
            elif token.type == "list_item_open":
                bounds.add(self.offset(token.map[0]))
            elif token.level == level:
                bounds.update((self.offset(token.map[0]), self.offset(token.map[1])))
                if token.type in _CODE_BLOCKS:
                    code_starts.add(self.offset(token.map[0]))
        found: list[Block] = []
        for block_start, block_end in itertools.pairwise(sorted(bounds)):
            if block_start in entries:
                found.append(entries[block_start])
                continue
            spans: list[Span] = []
            append_trimmed(spans, self.text, block_start, block_end)
            found += [Block(span=span, code=block_start in code_starts) for span in spans]
        return found

    def _closing(self, opening: int) -> int:
        """The index of the token that closes the one at `opening`."""
        depth = 0
        for index in range(opening, len(self.tokens)):
            depth += self.tokens[index].nesting
            if depth == 0:
                return index
        return len(self.tokens) - 1

    def _entries(
        self, first: int, close: int, level: int, dl_lines: list[int]
    ) -> list[tuple[int, int, Block | None]]:
        """(start, end, entry) of each entry of the list whose tokens are `[first, close)`:
        a term line (markdown-it's `dt`) up to the next one (its `dd`s are the definition)."""
        terms = [
            index
            for index in range(first, close)
            if self.tokens[index].type == "dt_open" and self.tokens[index].level == level + 1
        ]
        found: list[tuple[int, int, Block | None]] = []
        for number, term in enumerate(terms):
            term_line = self._line(term)
            is_last = number + 1 == len(terms)
            end_line = dl_lines[1] if is_last else self._line(terms[number + 1])
            token_stop = close if is_last else terms[number + 1]
            # The definition: the tokens after the term's own (its `dt` and inline text).
            definition = self._closing(term) + 1
            parts = self.blocks(
                definition, token_stop, level=level + 2, lines=(term_line + 1, end_line)
            )
            found.append(
                (
                    self.offset(term_line),
                    self.offset(end_line),
                    self._entry(term_line, end_line, parts),
                )
            )
        return found

    def _line(self, index: int) -> int:
        token_map = self.tokens[index].map
        assert token_map is not None
        return token_map[0]

    def _entry(self, term_line: int, end_line: int, parts: list[Block]) -> Block | None:
        term: list[Span] = []
        append_trimmed(term, self.text, self.offset(term_line), self.offset(term_line + 1))
        entry: list[Span] = []
        append_trimmed(entry, self.text, self.offset(term_line), self.offset(end_line))
        if not term or not entry or not parts:
            return None  # nothing to keep together: an ordinary block
        return Block(span=entry[0], code=False, term=term[0], parts=tuple(parts))


def with_lead_ins(text: str, blocks: Sequence[Block]) -> list[Block]:
    """`blocks` with each lead-in (a block ending with ":" that is no heading, code or entry)
    joined to what it introduces: the list after it (for a list item, its own nested items),
    the run of definition-list entries after it, or else the one block after it unless that
    is a heading; the same within each entry's definition and within what a lead-in
    introduces (a list item ending "as follows:" in a list that a paragraph introduces)."""
    # A definition's own lead-ins first, held the same way.
    blocks = [
        replace(block, parts=tuple(with_lead_ins(text, block.parts))) if block.parts else block
        for block in blocks
    ]
    joined: list[Block] = []
    index = 0
    while index < len(blocks):
        block = blocks[index]
        stop = _introduced(text, blocks, index) if _is_lead_in(text, block) else index + 1
        if stop > index + 1:
            parts = tuple(with_lead_ins(text, blocks[index + 1 : stop]))
            span = Span(start=block.span.start, end=parts[-1].span.end)
            joined.append(Block(span=span, code=False, term=block.span, parts=parts))
        else:
            joined.append(block)
        index = max(stop, index + 1)
    return joined


def _is_lead_in(text: str, block: Block) -> bool:
    piece = text[block.span.start : block.span.end]
    return (
        not block.code
        and block.term is None
        and not _HEADING_LINE.match(piece)
        and _LEAD_IN_END.search(piece.rstrip()) is not None
    )


def _introduced(text: str, blocks: Sequence[Block], lead_in: int) -> int:
    """Where what the lead-in `blocks[lead_in]` introduces ends (an index past it)."""
    first = lead_in + 1
    if first >= len(blocks):
        return first
    following = blocks[first]
    if following.code:
        return first + 1  # (trimmed, a code block may start "# comment": no heading)
    if _HEADING_LINE.match(text, following.span.start):
        return first
    if _is_list_item(text, following):
        # A list item introduces the items nested in it, not its siblings after them.
        floor = _indent(text, blocks[lead_in]) if _is_list_item(text, blocks[lead_in]) else -1
        stop = first
        while (
            stop < len(blocks)
            and _is_list_item(text, blocks[stop])
            and _indent(text, blocks[stop]) > floor
        ):
            stop += 1
        return stop
    if following.term is not None:
        stop = first
        while stop < len(blocks) and blocks[stop].term is not None:
            stop += 1
        return stop
    if _is_lead_in(text, following):  # "Here are examples:", "Use a tag:", then the code
        return max(first + 1, _introduced(text, blocks, first))
    return first + 1


def _indent(text: str, block: Block) -> int:
    """The column a block starts at."""
    return block.span.start - (text.rfind("\n", 0, block.span.start) + 1)


def _is_list_item(text: str, block: Block) -> bool:
    return not block.code and bool(_LIST_ITEM.match(text, block.span.start))


# --- plain text ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Line:
    start: int
    end: int
    indent: int
    blank: bool


def text_blocks(text: str, start: int, end: int) -> list[Block]:
    """The paragraphs of plain `text[start:end]` (blank-line separated), each entry of a
    reStructuredText-style definition list as one block; together they hold all its
    non-blank text."""
    lines = _lines(text, start, end)
    return _text_blocks(text, lines, 0, len(lines))


def _lines(text: str, start: int, end: int) -> list[_Line]:
    lines: list[_Line] = []
    position = start
    while position < end:
        line_end = text.find("\n", position, end)
        line_end = end if line_end < 0 else line_end
        content = text[position:line_end]
        stripped = content.lstrip(" \t")
        lines.append(_Line(position, line_end, len(content) - len(stripped), not stripped.strip()))
        position = line_end + 1
    return lines


def _text_blocks(text: str, lines: list[_Line], first: int, stop: int) -> list[Block]:
    blocks: list[Block] = []
    paragraph: int | None = None  # the first line of the paragraph being read

    def close(at: int) -> None:
        nonlocal paragraph
        if paragraph is not None:
            spans: list[Span] = []
            append_trimmed(spans, text, lines[paragraph].start, lines[at - 1].end)
            blocks.extend(Block(span=span, code=False) for span in spans)
        paragraph = None

    index = first
    while index < stop:
        if lines[index].blank:
            close(index)
            index += 1
        elif paragraph is None and _is_term(lines, index, stop):
            # A term starts an item: after a blank line, another entry or the start.
            after = _definition_end(lines, index, stop)
            blocks.append(_text_entry(text, lines, index, after))
            index = after
        else:
            if paragraph is None:
                paragraph = index
            index += 1
    close(stop)
    return blocks


def _is_term(lines: list[_Line], index: int, stop: int) -> bool:
    """Whether the line at `index` is a term: the next line is indented more."""
    following = index + 1
    return (
        following < stop
        and not lines[following].blank
        and lines[following].indent > lines[index].indent
    )


def _definition_end(lines: list[_Line], term: int, stop: int) -> int:
    """The line after the definition of the term at `term` (trailing blank lines left out)."""
    end = term + 1
    last = term + 1
    while end < stop and (lines[end].blank or lines[end].indent > lines[term].indent):
        if not lines[end].blank:
            last = end
        end += 1
    return last + 1


def _text_entry(text: str, lines: list[_Line], term: int, after: int) -> Block:
    parts = tuple(_text_blocks(text, lines, term + 1, after))
    spans: list[Span] = []
    append_trimmed(spans, text, lines[term].start, lines[term].end)
    append_trimmed(spans, text, lines[term].start, lines[after - 1].end)
    term_span, entry_span = spans  # the term line is not blank, so neither is the entry
    return Block(span=entry_span, code=False, term=term_span, parts=parts)
