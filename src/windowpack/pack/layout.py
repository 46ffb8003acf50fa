"""The pieces of a window and their text: documents, summary nodes and blocks as the layout
sees them, and the headers and markers that introduce each block.

Layout (design §5): the window opens with a query-independent tier — the collection overview
built from top-level summaries, rendered with no scores, timestamps or request ids — so that
provider prompt caches and engine prefix caches can reuse it across questions. Then, grouped
by document in collection order: verbatim passages (consecutive chunks as one span of the
source, byte-identical), summaries marked as such with the range they stand for, and gap
markers saying how many tokens were left out (`rendering` puts them in that order). Blocks are
separated by a blank line and every block starts with a character no tokenizer merges
across a blank line (`[` or `#` of a header, or a passage's own first character where it
needs no header), so a block boundary is also a tokenizer boundary.

How much the headers say is the window's header style (`types.HeaderStyle`). "full" repeats
the provenance on every passage: `[guide.md › exec › options · chunks 12-14 of 80 · chars
…]` under `## Guide (guide.md) · document 3 of 9`. "compact" says once per document what a
reader needs, `## Guide`, and of a passage only what its own text does not show: the heading
path above the heading it starts with (none for a top-level section), the number of a turn
or record; a piece of prose or a section's continuation has no header, or its heading path.
"none" has no document or passage headers. The provenance is in the window's items in every
style.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from windowpack.documents import PATH_SEPARATOR
from windowpack.pack.corpus import Overheads
from windowpack.text import TokenCounter
from windowpack.types import SEPARATOR as SEPARATOR
from windowpack.types import HeaderStyle, Why

# A compact heading path longer than this is cut in the middle: it is a header, not content.
_PATH_CHARS = 120
# What a compact passage header is when it has nothing to say but its text cannot open a
# block (it starts with white space or "/", which a tokenizer may join to the blank line).
_PLACEHOLDER = "[…]"
_OPENS_BLOCK = re.compile(r"[^\s/]")


class LazyText(Protocol):
    """A text read when it is used."""

    def read(self) -> str: ...


@dataclass(frozen=True, kw_only=True)
class DocumentView:
    """What the layout needs of one document.

    A passage never crosses a change of `chunk_units`; its header names the unit by its
    `unit_titles` entry when it has one (a section's heading path), else numbers it as
    `unit_name` (turn, record, section, passage). A compact header shows the unit's
    `unit_trails` entry instead (its headings without the document's name), without the
    heading the passage's text starts with (`unit_headed`: the unit starts with its own
    heading, the last of its trail).
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
    unit_trails: Sequence[tuple[str, ...]] = ()
    unit_headed: Sequence[bool] = ()
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
    node: int | None = None
    """A summary's node (its index in the state it was rendered from)."""
    left_out: int = 0
    """A gap marker's tokens left out."""
    cut: str | None = None
    """A gap marker's unit name, when what it stands for is the rest of a unit partly in."""
    cut_unit: int | None = None
    """That unit (its index in its document)."""
    why: Why | None = None
    """Why it is in the window (`types.WHY`); None for a header, and for a gap marker, which
    is always `gap`."""


def overheads(
    counter: TokenCounter, style: HeaderStyle = "full", most_tokens: int = 1_234_567
) -> Overheads:
    """Token costs of the headers and markers, measured on typical renderings (a document's
    header is counted exactly, per document: `Corpus.document_cost`; a compact passage's
    header too, per chunk: `Corpus.chunk_opening`). `most_tokens` bounds the numbers a
    compact marker or summary header can hold: the collection's tokens."""
    if style != "full":
        # A compact header is counted exactly where the allocator uses it (one token of
        # margin for where it merges with its line break); markers and summary headers hold
        # at most the collection's tokens.
        return Overheads(
            passage=1,
            summary=counter.count(compact_summary_header(tokens=most_tokens) + "\n" + SEPARATOR),
            gap=counter.count(compact_marker(most_tokens) + SEPARATOR) + 1,
            # The longest label a repeated request's instance gets, plus its merge margin.
            label=counter.count("[turn 1000 of 2000 · instance 12 of 20]")
            - counter.count("[turn 1000 of 2000]")
            + 1,
        )
    # Measured on long numbers and a long title, plus a margin: the allocator must not
    # under-estimate, or the exact count sends it round again.
    passage = "[turn 1000 of 2000 · instance 12 of 20 · chars 1234567-1234789]"
    return Overheads(
        passage=counter.count(passage + SEPARATOR) + 4,
        summary=counter.count(summary_header(2, "chunks", 1000, 1200, 2000) + SEPARATOR) + 4,
        gap=counter.count(gap_marker(1_234_567, "documents", 1234) + SEPARATOR) + 2,
    )


def document_header(view: DocumentView, position: int, documents: int) -> str:
    """The line a document's material opens with in a "full" window."""
    title = view.title or view.external_id
    named = f"{title} ({view.external_id})" if view.title else title
    return f"## {named} · document {position + 1} of {documents}"


def styled_document_header(
    view: DocumentView, position: int, documents: int, style: HeaderStyle
) -> str | None:
    """The line a document's material opens with in `style` (None: none, in "none")."""
    if style == "none":
        return None
    if style == "compact":
        return f"## {view.title or view.external_id}"
    return document_header(view, position, documents)


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


def compact_passage_header(view: DocumentView, first: int, label: str | None = None) -> str:
    """What a compact header says of a passage opening at chunk `first` ("" for nothing):
    `[exec]` above `### options`, `[turn 45 of 150 · instance 2 of 4]`; never the document's
    name (its header says it once) or characters (the window's items hold them)."""
    where = ""
    unit = view.chunk_units[first]
    if unit is not None and unit < len(view.unit_trails):
        trail = view.unit_trails[unit]
        if trail and view.title is not None and trail[0] == view.title:
            trail = trail[1:]  # the document's header says it
        opens_unit = first == 0 or view.chunk_units[first - 1] != unit
        headed = unit < len(view.unit_headed) and view.unit_headed[unit]
        if trail and opens_unit and headed:
            trail = trail[:-1]  # the passage's own first line
        where = _shortened(PATH_SEPARATOR.join(trail))
    elif unit is not None:
        where = f"{view.unit_name} {unit + 1} of {view.units}"
    said = " · ".join(part for part in (where, label) if part)
    return f"[{said}]" if said else ""


def opens_block(text: str) -> str:
    """`text`, or a placeholder header line before it when its first character could merge
    with the blank line before it in a tokenizer (`piece_counts`): every block must start a
    token."""
    return text if starts_a_token(text) else f"{_PLACEHOLDER}\n{text}"


def starts_a_token(text: str) -> bool:
    """Whether `text` can follow a blank line and start a token there in every tokenizer
    `piece_counts` cuts at lines: its first character is neither white space nor "/"."""
    return _OPENS_BLOCK.match(text) is not None


def _shortened(path: str) -> str:
    if len(path) <= _PATH_CHARS:
        return path
    half = _PATH_CHARS // 2 - 1
    return f"{path[:half]}…{path[-half:]}"


def summary_header(level: int, what: str, first: int, last: int, total: int) -> str:
    """`[summary (level 2) of chunks 9-16 of 80]` — never a score or anything query-specific."""
    return f"[summary (level {level}) of {what} {first + 1}-{last + 1} of {total}]"


def compact_summary_header(
    *, tokens: int | None = None, documents: int | None = None, named: str | None = None
) -> str:
    """`[summary of 1,234 tokens]` (the tokens it stands for), `[summary of 21 documents]`,
    `[summary of Title]` (a whole document, named)."""
    if named is not None:
        return f"[summary of {named}]"
    return "[summary …]"


def gap_marker(tokens: int, what: str, count: int | None = None) -> str:
    counted = f"{count:,} {what}, " if count is not None else ""
    return f"[... {counted}{tokens:,} tokens left out ...]"


def cut_marker(tokens: int, unit_name: str) -> str:
    """What is missing of a unit too large for its share of the budget, which was cut."""
    return f"[... {tokens:,} tokens of this {unit_name} left out ...]"


def compact_marker(tokens: int, cut: tuple[int, str] | None = None) -> str:
    """A compact window's one marker for a run of what was left out, `tokens` in all:
    `[…1,234 tokens]`; when the run starts with the rest of a unit partly in (`cut`: its
    tokens and the unit's name), `[…300 tokens of this section]`, or, when the run goes on
    past the unit, `[…1,234 tokens, from this section on]`. Short: a 4K window holds a dozen
    or more markers (the ellipsis is one token where `... ` is two), and `full` has the
    detail (`[... 300 tokens of this section left out ...]`, a marker per piece)."""
    if cut is None:
        return f"[\u2026{tokens:,} tokens]"
    cut_tokens, unit_name = cut
    if cut_tokens >= tokens:
        return f"[\u2026{tokens:,} tokens of this {unit_name}]"
    return f"[\u2026{tokens:,} tokens, from this {unit_name} on]"


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
