"""Rendering a window: a stable overview tier, then the query's material in document order.

Layout (design §5): the window opens with a query-independent tier — the collection overview
built from top-level summaries, rendered with no scores, timestamps or request ids — so that
provider prompt caches and engine prefix caches can reuse it across questions. Then, grouped
by document in collection order: verbatim passages (consecutive chunks as one span of the
source, byte-identical), summaries marked as such with the range they stand for, and gap
markers saying how many tokens were left out. Blocks are separated by a blank line and every
block starts with a bracketed header, so a block boundary is also a tokenizer boundary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from windowpack.pack.corpus import Overheads
from windowpack.text.tokens import TokenCounter

SEPARATOR = "\n\n"


@dataclass(frozen=True, kw_only=True)
class DocumentView:
    """What the layout needs of one document.

    A passage never crosses a change of `chunk_units`; its header names the unit by its
    `unit_titles` entry when it has one (a section's heading path), else numbers it as
    `unit_name` (turn, record, section, passage).
    """

    external_id: str
    title: str | None
    text: str
    chunk_starts: Sequence[int]
    chunk_ends: Sequence[int]
    chunk_units: Sequence[int | None]
    chunk_tokens: Sequence[int]
    units: int
    unit_name: str = "turn"
    unit_titles: Sequence[str] = ()
    metadata: dict[str, Any] = field(default_factory=dict)


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


def overheads(counter: TokenCounter) -> Overheads:
    """Token costs of the headers and markers, measured on typical renderings."""
    document = "## A document title of a typical length (document-id-0000) · document 100 of 200"
    # Measured on long numbers and a long title, plus a margin: the allocator must not
    # under-estimate, or the exact count sends it round again.
    passage = "[turn 1000 of 2000 · instance 12 of 20 · chars 1234567-1234789]"
    return Overheads(
        document=counter.count(document + SEPARATOR) + 12,
        passage=counter.count(passage + SEPARATOR) + 4,
        summary=counter.count(summary_header(2, "chunks", 1000, 1200, 2000) + SEPARATOR) + 4,
        gap=counter.count(gap_marker(1_234_567, "documents", 1234) + SEPARATOR) + 2,
    )


def document_header(view: DocumentView, position: int, documents: int) -> str:
    title = view.title or view.external_id
    named = f"{title} ({view.external_id})" if view.title else title
    return f"## {named} · document {position + 1} of {documents}"


def passage_header(view: DocumentView, first: int, last: int, *, label: str | None = None) -> str:
    """The header of chunks `first` to `last` of `view`: `[chunks 3-4 of 80 · chars 100-900]`;
    a turn or record by its number, `[turn 45 of 150 · instance 2 of 4 · chars …]`; a section
    by its heading path, `[guide.md › exec › options · chunks 12-14 of 80 · chars …]`."""
    chunks = f"chunk {first + 1}" if first == last else f"chunks {first + 1}-{last + 1}"
    where = f"{chunks} of {len(view.chunk_starts)}"
    unit = view.chunk_units[first]
    if unit is not None and unit < len(view.unit_titles):
        where = f"{view.unit_titles[unit]} · {where}"
    elif unit is not None:
        where = f"{view.unit_name} {unit + 1} of {view.units}"
    labelled = f" · {label}" if label else ""
    start, end = view.chunk_starts[first], view.chunk_ends[last]
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


def count_exactly(counter: TokenCounter, text: str) -> int:
    """The exact token count of the rendered text."""
    return counter.count(text)


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


@dataclass(frozen=True, kw_only=True)
class Selection:
    """What goes in verbatim (global chunk indices) and as summaries (node index by the node's
    first chunk), with the scores the items report. `choose()` builds one."""

    chunks: AbstractSet[int]
    summaries: Mapping[int, int]
    chunk_scores: Sequence[float] = ()
    node_scores: Sequence[float] = ()
    labels: Mapping[tuple[int, int], str] = field(default_factory=dict)
    """Extra words for the header of a unit, by (document position, unit): "instance 2 of 4"."""

    def chunk_score(self, first: int, last: int) -> float:
        """The best score of the chunks `first` to `last` (0 when unscored)."""
        scores = self.chunk_scores[first : last + 1]
        return max(scores) if len(scores) else 0.0

    def node_score(self, node: int) -> float:
        return self.node_scores[node] if len(self.node_scores) else 0.0


def choose(
    source: Source,
    chunks: Sequence[int],
    nodes: Sequence[int] = (),
    scores: tuple[Sequence[float], Sequence[float]] = ((), ()),
    labels: Mapping[tuple[int, int], str] | None = None,
) -> Selection:
    """The selection of `chunks` verbatim and `nodes` as summaries, with (chunk, node) scores
    and header labels by (document position, unit)."""
    return Selection(
        chunks=set(chunks),
        summaries={source.nodes[index].first_chunk: index for index in nodes},
        chunk_scores=scores[0],
        node_scores=scores[1],
        labels=labels or {},
    )


def render_documents(source: Source, selection: Selection) -> list[Block]:
    """The query tier: chosen chunks and summaries by document, gap markers between."""
    documents, nodes = source.documents, source.nodes
    by_first_chunk = selection.summaries
    blocks: list[Block] = []
    skipped: list[int] = []
    position = 0
    while position < len(documents):
        view, offset = documents[position], source.document_first_chunk[position]
        node_index = by_first_chunk.get(offset)
        if node_index is not None and nodes[node_index].document < 0:
            # A collection-level summary stands for several whole documents.
            blocks.extend(_gap_for_documents(documents, skipped))
            skipped = []
            blocks.append(summary_block(source, node_index, selection.node_score(node_index)))
            position = nodes[node_index].last_document
            continue
        chunks = range(offset, offset + len(view.chunk_starts))
        if not any(index in selection.chunks or index in by_first_chunk for index in chunks):
            skipped.append(position)
        else:
            blocks.extend(_gap_for_documents(documents, skipped))
            skipped = []
            blocks.extend(document_blocks(source, position, selection))
        position += 1
    blocks.extend(_gap_for_documents(documents, skipped))
    return blocks


def _gap_for_documents(documents: Sequence[DocumentView], skipped: list[int]) -> list[Block]:
    if not skipped:
        return []
    tokens = sum(sum(documents[p].chunk_tokens) for p in skipped)
    what = "document" if len(skipped) == 1 else "documents"
    return [Block(kind="gap", text=gap_marker(tokens, what, len(skipped)))]


def document_blocks(source: Source, position: int, selection: Selection) -> list[Block]:
    """One document's header, then its passages, summaries and gaps in order."""
    view, offset = source.documents[position], source.document_first_chunk[position]
    header = document_header(view, position, len(source.documents))
    blocks = [Block(kind="header", text=header, document=position)]
    by_first_chunk = selection.summaries
    count = len(view.chunk_starts)
    ordinal = 0
    while ordinal < count:
        index = offset + ordinal
        if index in selection.chunks:
            last = ordinal
            # One passage per run of chunks, but a new one at each conversation turn or
            # record, so that every turn carries its own number.
            while (
                last + 1 < count
                and offset + last + 1 in selection.chunks
                and view.chunk_units[last + 1] == view.chunk_units[ordinal]
            ):
                last += 1
            blocks.append(_passage(source, position, ordinal, last, selection))
            ordinal = last + 1
        elif index in by_first_chunk:
            node_index = by_first_chunk[index]
            blocks.append(summary_block(source, node_index, selection.node_score(node_index)))
            ordinal = max(ordinal + 1, source.nodes[node_index].last_chunk - offset)
        else:
            last = ordinal
            while (
                last + 1 < count
                and offset + last + 1 not in selection.chunks
                and offset + last + 1 not in by_first_chunk
            ):
                last += 1
            blocks.extend(_gaps(source, position, ordinal, last, selection))
            ordinal = last + 1
    return blocks


def _gaps(
    source: Source, position: int, first: int, last: int, selection: Selection
) -> list[Block]:
    """Markers for chunks `first` to `last` of a document, left out: one marker, except that
    what is missing of a unit partly in the window (a cut unit) is said on its own."""
    view, offset = source.documents[position], source.document_first_chunk[position]
    units = view.chunk_units
    pieces: list[tuple[int, int, bool]] = []  # (first, last, inside a cut unit)
    ordinal = first
    while ordinal <= last:
        end = ordinal
        while end + 1 <= last and units[end + 1] == units[ordinal]:
            end += 1
        cut = units[ordinal] is not None and _partly_in(view, offset, ordinal, selection)
        if pieces and not cut and not pieces[-1][2]:
            pieces[-1] = (pieces[-1][0], end, False)  # whole units left out: one marker
        else:
            pieces.append((ordinal, end, cut))
        ordinal = end + 1
    blocks = []
    for low, high, cut in pieces:
        tokens = sum(view.chunk_tokens[low : high + 1])
        text = cut_marker(tokens, view.unit_name) if cut else gap_marker(tokens, "tokens")
        blocks.append(Block(kind="gap", text=text, document=position))
    return blocks


def _partly_in(view: DocumentView, offset: int, ordinal: int, selection: Selection) -> bool:
    """Whether some chunk of the unit of chunk `ordinal` is in the window verbatim."""
    unit = view.chunk_units[ordinal]
    low = high = ordinal
    while low > 0 and view.chunk_units[low - 1] == unit:
        low -= 1
    while high + 1 < len(view.chunk_units) and view.chunk_units[high + 1] == unit:
        high += 1
    return any(offset + i in selection.chunks for i in range(low, high + 1))


def _passage(source: Source, position: int, first: int, last: int, selection: Selection) -> Block:
    view, offset = source.documents[position], source.document_first_chunk[position]
    start, end = view.chunk_starts[first], view.chunk_ends[last]
    unit = view.chunk_units[first]
    label = selection.labels.get((position, unit)) if unit is not None else None
    header = passage_header(view, first, last, label=label)
    return Block(
        kind="chunk",
        text=f"{header}\n{view.text[start:end]}",
        document=position,
        first_chunk=offset + first,
        last_chunk=offset + last,
        char_start=start,
        char_end=end,
        score=selection.chunk_score(offset + first, offset + last),
    )


def summary_block(source: Source, node_index: int, score: float) -> Block:
    """A summary node with its header: the chunks (or documents) it stands for."""
    node = source.nodes[node_index]
    view, offset = source.documents[node.anchor], source.document_first_chunk[node.anchor]
    if node.document < 0:
        header = summary_header(
            node.level, "documents", node.first_document, node.last_document - 1, -1
        ).replace(" of -1]", "]")
    else:
        header = summary_header(
            node.level,
            "chunks",
            node.first_chunk - offset,
            node.last_chunk - offset - 1,
            len(view.chunk_starts),
        )
    return Block(
        kind="summary",
        text=f"{header}\n{node.text}",
        document=node.document if node.document >= 0 else None,
        level=node.level,
        first_chunk=node.first_chunk,
        last_chunk=node.last_chunk - 1,
        char_start=view.chunk_starts[node.first_chunk - offset] if node.document >= 0 else None,
        char_end=view.chunk_ends[node.last_chunk - offset - 1] if node.document >= 0 else None,
        score=score,
        documents=(node.first_document, node.last_document - 1) if node.document < 0 else None,
    )
