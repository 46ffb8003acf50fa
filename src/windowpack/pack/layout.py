"""The pieces of a window and their text: documents, summary nodes and blocks as the layout
sees them, and the headers and markers that introduce each block.

Layout (design §5): the window opens with a query-independent tier — the collection overview
built from top-level summaries, rendered with no scores, timestamps or request ids — so that
provider prompt caches and engine prefix caches can reuse it across questions. Then, grouped
by document in collection order: verbatim passages (consecutive chunks as one span of the
source, byte-identical), summaries marked as such with the range they stand for, and gap
markers saying how many tokens were left out (`rendering` puts them in that order). Blocks are
separated by a blank line and every block starts with a bracketed header, so a block boundary
is also a tokenizer boundary.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from windowpack.pack.corpus import Overheads
from windowpack.text import TokenCounter
from windowpack.types import SEPARATOR as SEPARATOR


class LazyText(Protocol):
    """A text read when it is used."""

    def read(self) -> str: ...


@dataclass(frozen=True, kw_only=True)
class DocumentView:
    """What the layout needs of one document.

    A passage never crosses a change of `chunk_units`; its header names the unit by its
    `unit_titles` entry when it has one (a section's heading path), else numbers it as
    `unit_name` (turn, record, section, passage).
    """

    external_id: str
    title: str | None
    body: str | LazyText
    """The text, or what reads it when used (`document_texts.StoredText`): read `text`."""
    chunk_starts: Sequence[int]
    chunk_ends: Sequence[int]
    chunk_units: Sequence[int | None]
    chunk_tokens: Sequence[int]
    units: int
    unit_name: str = "turn"
    unit_titles: Sequence[str] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    text_hash: str = ""
    """SHA-256 of `text` as the store keeps it (`text.hashing.content_hash`); "" when not known."""

    @property
    def text(self) -> str:
        body = self.body
        return body if isinstance(body, str) else body.read()

    @property
    def length(self) -> int:
        """Characters of the text up to its last chunk's end, without reading the text."""
        return self.chunk_ends[-1] if self.chunk_ends else 0

    @functools.cached_property
    def token_prefix(self) -> list[int]:
        """Tokens of the chunks before ordinal i (i from 0 to the count, inclusive)."""
        return [0, *itertools.accumulate(self.chunk_tokens)]


@dataclass(frozen=True, kw_only=True)
class Block:
    """One rendered piece of the window and what it stands for."""

    kind: Literal["header", "chunk", "summary", "gap"]
    text: str
    document: int | None = None
    level: int = 0
    first_chunk: int | None = None
    last_chunk: int | None = None
    char_start: int | None = None
    char_end: int | None = None
    score: float = 0.0
    # A collection-level summary's documents (first and last, inclusive).
    documents: tuple[int, int] | None = None
    # A passage's document text from its last chunk's end to the next chunk (None after the
    # document's last chunk): when it is what follows the passage in the window, the last
    # chunk costs its tile's count (`piece_counts`).
    after: str | None = None


def overheads(counter: TokenCounter) -> Overheads:
    """Token costs of the headers and markers, measured on typical renderings (a document's
    header is counted exactly, per document: `Corpus.document_cost`)."""
    # Measured on long numbers and a long title, plus a margin: the allocator must not
    # under-estimate, or the exact count sends it round again.
    passage = "[turn 1000 of 2000 · instance 12 of 20 · chars 1234567-1234789]"
    return Overheads(
        passage=counter.count(passage + SEPARATOR) + 4,
        summary=counter.count(summary_header(2, "chunks", 1000, 1200, 2000) + SEPARATOR) + 4,
        gap=counter.count(gap_marker(1_234_567, "documents", 1234) + SEPARATOR) + 2,
    )


def document_header(view: DocumentView, position: int, documents: int) -> str:
    title = view.title or view.external_id
    named = f"{title} ({view.external_id})" if view.title else title
    return f"## {named} · document {position + 1} of {documents}"


def passage_header(
    view: DocumentView,
    first: int,
    last: int,
    *,
    label: str | None = None,
    chars: tuple[int, int] | None = None,
) -> str:
    """The header of chunks `first` to `last` of `view`: `[chunks 3-4 of 80 · chars 100-900]`;
    a turn or record by its number, `[turn 45 of 150 · instance 2 of 4 · chars …]`; a section
    by its heading path, `[guide.md › exec › options · chunks 12-14 of 80 · chars …]`.
    `chars`: the characters shown, when not the chunks' own (an excerpt)."""
    chunks = f"chunk {first + 1}" if first == last else f"chunks {first + 1}-{last + 1}"
    where = f"{chunks} of {len(view.chunk_starts)}"
    unit = view.chunk_units[first]
    if unit is not None and unit < len(view.unit_titles):
        where = f"{view.unit_titles[unit]} · {where}"
    elif unit is not None:
        where = f"{view.unit_name} {unit + 1} of {view.units}"
    labelled = f" · {label}" if label else ""
    start, end = chars if chars is not None else (view.chunk_starts[first], view.chunk_ends[last])
    return f"[{where}{labelled} · chars {start}-{end}]"


def summary_header(level: int, what: str, first: int, last: int, total: int) -> str:
    """`[summary (level 2) of chunks 9-16 of 80]` — never a score or anything query-specific."""
    return f"[summary (level {level}) of {what} {first + 1}-{last + 1} of {total}]"


def gap_marker(tokens: int, what: str, count: int | None = None) -> str:
    counted = f"{count:,} {what}, " if count is not None else ""
    return f"[... {counted}{tokens:,} tokens left out ...]"


def cut_marker(tokens: int, unit_name: str) -> str:
    """What is missing of a unit too large for its share of the budget, which was cut."""
    return f"[... {tokens:,} tokens of this {unit_name} left out ...]"


def join_blocks(blocks: Sequence[Block]) -> str:
    return SEPARATOR.join(block.text for block in blocks)


@dataclass(frozen=True, kw_only=True)
class NodeView:
    """A summary node as the layout needs it (`document` -1 for collection-level nodes)."""

    text: str
    level: int
    document: int
    first_chunk: int
    last_chunk: int
    first_document: int
    last_document: int

    @property
    def anchor(self) -> int:
        """The document the node is rendered with: its own, or the first it stands for."""
        return self.document if self.document >= 0 else self.first_document


class Source(Protocol):
    """What a window is rendered from: documents, where their chunks start, summary nodes."""

    @property
    def documents(self) -> Sequence[DocumentView]: ...

    @property
    def document_first_chunk(self) -> Sequence[int]: ...

    @property
    def nodes(self) -> Sequence[NodeView]: ...

    @property
    def document_tokens_before(self) -> Sequence[int]:
        """Tokens of all documents before position i (i from 0 to the count, inclusive)."""
        ...
