"""What a window's budget went to: content, summaries, headers, markers, and what was left.

Read from the window a system returned, through the public `Window.items` only (kinds,
texts, spans, token counts), so it measures whatever the renderer produces:

- **content**: the verbatim text of each `chunk` item, counted alone: its document's span
  (`item.span` of `document_text(item.document_id)`) where the item shows it, else the
  item's text after its leading bracketed header lines;
- **summaries**: each `summary` item's text after its bracketed header lines, counted alone;
- **markers**: the `gap` items (what was left out, and how much);
- **headers**: everything else the window spends: the items' header lines and separators,
  and the text outside any item (document headers, the overview's title);
- **unused**: the budget the window did not spend.

The five add up to the budget. A baseline's context (no window) is its chunks joined by
blank lines: all of it content, except RAPTOR's summaries (`Context.summary_tokens`); the
joins (a token each) count with the content.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import ClassVar

from windowpack.evals.contexts import Context
from windowpack.text import TokenCounter
from windowpack.types import Window, WindowItem

DocumentText = Callable[[str], "str | None"]
"""A document's stored text by id (None when it is not known)."""

_HEADER_LINES = re.compile(r"\A(?:\[[^\n]*\]\n)+")


@dataclass(frozen=True, kw_only=True)
class Composition:
    """Tokens of a window by what they are; they add up to `budget`."""

    PARTS: ClassVar[tuple[str, ...]] = ("content", "summaries", "headers", "markers", "unused")

    content: int
    summaries: int
    headers: int
    markers: int
    unused: int
    budget: int

    def shares(self) -> dict[str, float]:
        """Each part's share of the budget, as `{part}_share`."""
        return {f"{part}_share": getattr(self, part) / self.budget for part in self.PARTS}


def window_composition(
    window: Window, counter: TokenCounter, document_text: DocumentText
) -> Composition:
    """The composition of a packed window (see the module docstring); `counter` counts in
    the window's tokenizer."""
    content = summaries = markers = headers = 0
    for item in window.items:
        if item.kind == "gap":
            markers += item.tokens
            continue
        body = _chunk_text(item, document_text) if item.kind == "chunk" else _body(item.text)
        # Counted alone a text can take a token more than inside the window: never more than
        # the item's own count.
        tokens = min(item.tokens, counter.count(body)) if body else 0
        if item.kind == "chunk":
            content += tokens
        else:
            summaries += tokens
        headers += item.tokens - tokens
    headers += max(0, window.tokens - sum(item.tokens for item in window.items))
    return Composition(
        content=content,
        summaries=summaries,
        headers=headers,
        markers=markers,
        unused=window.budget - window.tokens,
        budget=window.budget,
    )


def context_composition(
    context: Context, budget: int, counter: TokenCounter, document_text: DocumentText
) -> Composition:
    """The composition of any system's context at `budget`: a window's, from its items;
    a baseline's, its summaries and the rest content."""
    if context.window is not None:
        composition = window_composition(context.window, counter, document_text)
        return replace(composition, unused=budget - context.window.tokens, budget=budget)
    return Composition(
        content=context.tokens - context.summary_tokens,
        summaries=context.summary_tokens,
        headers=0,
        markers=0,
        unused=budget - context.tokens,
        budget=budget,
    )


def _chunk_text(item: WindowItem, document_text: DocumentText) -> str:
    """The verbatim text a chunk item shows: its document's span, where the item holds it."""
    if item.span is not None and item.document_id is not None:
        text = document_text(item.document_id)
        if text is not None:
            verbatim = text[item.span.start : item.span.end]
            if verbatim and verbatim in item.text:
                return verbatim
    return _body(item.text)


def _body(text: str) -> str:
    """An item's text after its bracketed header lines."""
    return _HEADER_LINES.sub("", text, count=1)
