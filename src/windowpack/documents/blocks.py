"""Markdown blocks, so chunks start where a reader's eye would: at a list item or a block.

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
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from windowpack.text import append_trimmed
from windowpack.types import Span

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

_NEWLINE = re.compile("\n")
_CODE_BLOCKS = frozenset({"fence", "code_block"})


@dataclass(frozen=True, kw_only=True)
class Block:
    """One block of a markdown text: `text[span.start:span.end]`, trimmed; code or not."""

    span: Span
    code: bool


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").disable(["inline", "text_join"], ignoreInvalid=True)


def markdown_blocks(text: str, start: int, end: int) -> list[Block]:
    """The blocks of `text[start:end]` in order; together they hold all its non-blank text."""
    fragment = text[start:end]
    line_starts = [start, *(start + m.end() for m in _NEWLINE.finditer(fragment)), end]

    def offset(line: int) -> int:
        return line_starts[min(line, len(line_starts) - 1)]

    bounds = {start, end}
    code_starts: set[int] = set()
    for token in _parser().parse(fragment):
        if token.map is None or token.nesting < 0:
            continue
        if token.type == "list_item_open":
            bounds.add(offset(token.map[0]))
        elif token.level == 0:
            bounds.update((offset(token.map[0]), offset(token.map[1])))
            if token.type in _CODE_BLOCKS:
                code_starts.add(offset(token.map[0]))
    ordered = sorted(bounds)
    blocks: list[Block] = []
    for block_start, block_end in itertools.pairwise(ordered):
        spans: list[Span] = []
        append_trimmed(spans, text, block_start, block_end)
        blocks += [Block(span=span, code=block_start in code_starts) for span in spans]
    return blocks
