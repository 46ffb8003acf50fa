"""Markdown as the text a reader sees: what a page's Markdown must say, word for word.

HTML reaches the store as Markdown (`html_pages`); whether the conversion kept what the page
says is asked of this text, not of the Markdown, whose marks (`*`, `` ` ``, `[..](..)`,
backslash escapes) are no part of what a reader reads. markdown-it (CommonMark, with
definition lists) renders it: inline text, code spans' content, link text, code blocks as
written; each line break a new line and each block on lines of its own. What CommonMark would
take for raw HTML (`<pathspec>`) is kept as text: html2text writes no HTML, so a tag in its
output was the page's text (escaped there as `&lt;pathspec&gt;`).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_TEXT_TOKENS = frozenset({"text", "code_inline", "html_inline"})
_BREAKS = frozenset({"softbreak", "hardbreak"})
_BLOCK_TEXT = frozenset({"fence", "code_block", "html_block"})


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.deflist import deflist_plugin

    return MarkdownIt("commonmark").use(deflist_plugin)


def plain_text(markdown: str) -> str:
    """The text `markdown` shows a reader, each block on lines of its own."""
    lines: list[str] = []
    for token in _parser().parse(markdown):
        if token.type == "inline":
            lines.append(_inline_text(token.children or []))
        elif token.type in _BLOCK_TEXT:
            lines.append(token.content.rstrip("\n"))
    return "\n".join(lines)


def _inline_text(children: list[Token]) -> str:
    parts: list[str] = []
    for child in children:
        if child.type in _TEXT_TOKENS:
            parts.append(child.content)
        elif child.type in _BREAKS:
            parts.append("\n")
        elif child.type == "image":
            parts.append(_inline_text(child.children or []))
    return "".join(parts)
