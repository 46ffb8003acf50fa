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

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from windowpack.budget.allocate import Overheads
from windowpack.budget.tokens import TokenCounter

SEPARATOR = "\n\n"


@dataclass(frozen=True, kw_only=True)
class DocumentView:
    """What the layout needs of one document.

    A passage never crosses a change of `chunk_units`; its header numbers the unit as
    `unit_name` (a conversation's turns by default).
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
    return Overheads(
        document=counter.count(document + SEPARATOR) + 12,
        passage=counter.count(passage_header(None, 1000, 1001, 2000, 1234567, 1234789)) + 4,
        summary=counter.count(summary_header(2, "chunks", 1000, 1200, 2000) + SEPARATOR) + 4,
        gap=counter.count(gap_marker(1_234_567, "documents", 1234) + SEPARATOR) + 2,
    )


def document_header(view: DocumentView, position: int, documents: int) -> str:
    title = view.title or view.external_id
    named = f"{title} ({view.external_id})" if view.title else title
    return f"## {named} · document {position + 1} of {documents}"


def passage_header(
    units: tuple[int, int] | None,
    first: int,
    last: int,
    chunks: int,
    char_start: int,
    char_end: int,
    unit_name: str = "turn",
) -> str:
    """`[chunks 3-4 of 80 · chars 100-900]`, or turns/records for conversations and records."""
    if units is not None:
        low, high = units
        where = f"{unit_name} {low + 1}" if low == high else f"{unit_name}s {low + 1}-{high + 1}"
    else:
        where = f"chunk {first + 1}" if first == last else f"chunks {first + 1}-{last + 1}"
    return f"[{where} of {chunks} · chars {char_start}-{char_end}]"


def summary_header(level: int, what: str, first: int, last: int, total: int) -> str:
    """`[summary (level 2) of chunks 9-16 of 80]` — never a score or anything query-specific."""
    return f"[summary (level {level}) of {what} {first + 1}-{last + 1} of {total}]"


def gap_marker(tokens: int, what: str, count: int | None = None) -> str:
    counted = f"{count:,} {what}, " if count is not None else ""
    return f"[... {counted}{tokens:,} tokens left out ...]"


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


def render_documents(
    documents: Sequence[DocumentView],
    document_first_chunk: Sequence[int],
    chosen_chunks: Sequence[int],
    chosen_nodes: Sequence[int],
    nodes: Sequence[NodeView],
    chunk_scores: Sequence[float],
    node_scores: Sequence[float],
) -> list[Block]:
    """The query tier: chosen chunks and summaries by document, gap markers between."""
    selected = set(chosen_chunks)
    by_first_chunk = {nodes[index].first_chunk: index for index in chosen_nodes}
    blocks: list[Block] = []
    skipped: list[int] = []
    position = 0
    while position < len(documents):
        view, offset = documents[position], document_first_chunk[position]
        node_index = by_first_chunk.get(offset)
        if node_index is not None and nodes[node_index].document < 0:
            # A collection-level summary stands for several whole documents.
            blocks.extend(_gap_for_documents(documents, skipped))
            skipped = []
            node = nodes[node_index]
            blocks.append(summary_block(view, position, node, offset, node_scores[node_index]))
            position = node.last_document
            continue
        chunks = range(offset, offset + len(view.chunk_starts))
        if not any(index in selected or index in by_first_chunk for index in chunks):
            skipped.append(position)
        else:
            blocks.extend(_gap_for_documents(documents, skipped))
            skipped = []
            blocks.extend(
                document_blocks(
                    view, position, len(documents), offset, selected, by_first_chunk, nodes,
                    chunk_scores, node_scores,
                )
            )  # fmt: skip
        position += 1
    blocks.extend(_gap_for_documents(documents, skipped))
    return blocks


def _gap_for_documents(documents: Sequence[DocumentView], skipped: list[int]) -> list[Block]:
    if not skipped:
        return []
    tokens = sum(sum(documents[p].chunk_tokens) for p in skipped)
    what = "document" if len(skipped) == 1 else "documents"
    return [Block(kind="gap", text=gap_marker(tokens, what, len(skipped)))]


def document_blocks(
    view: DocumentView,
    position: int,
    documents: int,
    offset: int,
    selected: set[int],
    by_first_chunk: dict[int, int],
    nodes: Sequence[NodeView],
    chunk_scores: Sequence[float],
    node_scores: Sequence[float],
) -> list[Block]:
    blocks = [
        Block(kind="header", text=document_header(view, position, documents), document=position)
    ]
    count = len(view.chunk_starts)
    ordinal = 0
    while ordinal < count:
        index = offset + ordinal
        if index in selected:
            last = ordinal
            # One passage per run of chunks, but a new one at each conversation turn or
            # record, so that every turn carries its own number.
            while (
                last + 1 < count
                and offset + last + 1 in selected
                and view.chunk_units[last + 1] == view.chunk_units[ordinal]
            ):
                last += 1
            blocks.append(_passage(view, position, offset, ordinal, last, chunk_scores))
            ordinal = last + 1
        elif index in by_first_chunk:
            node_index = by_first_chunk[index]
            node = nodes[node_index]
            blocks.append(summary_block(view, position, node, offset, node_scores[node_index]))
            ordinal = max(ordinal + 1, node.last_chunk - offset)
        else:
            last = ordinal
            while (
                last + 1 < count
                and offset + last + 1 not in selected
                and offset + last + 1 not in by_first_chunk
            ):
                last += 1
            tokens = sum(view.chunk_tokens[ordinal : last + 1])
            blocks.append(Block(kind="gap", text=gap_marker(tokens, "tokens"), document=position))
            ordinal = last + 1
    return blocks


def _passage(
    view: DocumentView,
    position: int,
    offset: int,
    first: int,
    last: int,
    chunk_scores: Sequence[float],
) -> Block:
    start, end = view.chunk_starts[first], view.chunk_ends[last]
    low, high = view.chunk_units[first], view.chunk_units[last]
    units = (low, high) if low is not None and high is not None else None
    header = passage_header(units, first, last, len(view.chunk_starts), start, end, view.unit_name)
    return Block(
        kind="chunk",
        text=f"{header}\n{view.text[start:end]}",
        document=position,
        first_chunk=offset + first,
        last_chunk=offset + last,
        char_start=start,
        char_end=end,
        score=max(chunk_scores[offset + first : offset + last + 1]),
    )


def summary_block(
    view: DocumentView, position: int, node: NodeView, offset: int, score: float
) -> Block:
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
        document=position if node.document >= 0 else None,
        level=node.level,
        first_chunk=node.first_chunk,
        last_chunk=node.last_chunk - 1,
        char_start=view.chunk_starts[node.first_chunk - offset] if node.document >= 0 else None,
        char_end=view.chunk_ends[node.last_chunk - offset - 1] if node.document >= 0 else None,
        score=score,
        documents=(node.first_document, node.last_document - 1) if node.document < 0 else None,
    )
