"""Rendering a window: the query's material in document order, and the summaries of the
overview tier.

Grouped by document in collection order: verbatim passages (consecutive chunks as one span of
the source, byte-identical), summaries marked as such with the range they stand for, and gap
markers saying how many tokens were left out. The pieces and their headers are `layout`'s.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from windowpack.pack.layout import (
    Block,
    DocumentView,
    Source,
    cut_marker,
    document_header,
    gap_marker,
    passage_header,
    summary_header,
)


@dataclass(frozen=True, kw_only=True)
class Selection:
    """What goes in verbatim (global chunk indices) and as summaries (node index by the node's
    first chunk), with the scores the items report. `choose()` builds one."""

    chunks: AbstractSet[int]
    summaries: Mapping[int, int]
    chunk_scores: Mapping[int, float] = field(default_factory=dict)
    """By global chunk index, of the chosen chunks (not the corpus's: converting all would
    cost what the corpus costs at every pack, not what the window does)."""
    node_scores: Mapping[int, float] = field(default_factory=dict)
    labels: Mapping[tuple[int, int], str] = field(default_factory=dict)
    """Extra words for the header of a unit, by (document position, unit): "instance 2 of 4"."""
    by_document: Mapping[int, list[int]] = field(default_factory=dict)
    """The chosen chunks' ordinals (sorted) by document position."""
    summary_starts: Mapping[int, list[int]] = field(default_factory=dict)
    """The ordinals (sorted) where a chosen document-level summary starts, by document."""
    excerpts: Mapping[int, tuple[int, int]] = field(default_factory=dict)
    """Chosen chunks shown only in part, by global chunk index: the characters shown, in
    their document (a set question packed for coverage, `coverage`)."""

    def chunk_score(self, first: int, last: int) -> float:
        """The best score of the chunks `first` to `last` (0 when unscored)."""
        scores = self.chunk_scores
        return max(scores.get(i, 0.0) for i in range(first, last + 1)) if scores else 0.0

    def node_score(self, node: int) -> float:
        return self.node_scores.get(node, 0.0)


def choose(
    source: Source,
    chunks: Sequence[int],
    nodes: Sequence[int] = (),
    scores: tuple[Mapping[int, float], Mapping[int, float]] = ({}, {}),
    labels: Mapping[tuple[int, int], str] | None = None,
    excerpts: Mapping[int, tuple[int, int]] | None = None,
) -> Selection:
    """The selection of `chunks` verbatim and `nodes` as summaries, with (chunk, node) scores,
    header labels by (document position, unit) and the chunks shown in part (`excerpts`)."""
    firsts = source.document_first_chunk
    chosen = set(chunks)
    by_document: dict[int, list[int]] = {}
    for index in sorted(chunks):
        position = bisect.bisect_right(firsts, index) - 1
        by_document.setdefault(position, []).append(index - firsts[position])
    summary_starts: dict[int, list[int]] = {}
    for index in sorted(nodes, key=lambda n: source.nodes[n].first_chunk):
        node = source.nodes[index]
        if node.document >= 0:
            first = node.first_chunk - firsts[node.document]
            summary_starts.setdefault(node.document, []).append(first)
    return Selection(
        chunks=chosen,
        summaries={source.nodes[index].first_chunk: index for index in nodes},
        chunk_scores=scores[0],
        node_scores=scores[1],
        labels=labels or {},
        by_document=by_document,
        summary_starts=summary_starts,
        excerpts={i: span for i, span in (excerpts or {}).items() if i in chosen},
    )


def render_documents(source: Source, selection: Selection) -> list[Block]:
    """The query tier: chosen chunks and summaries by document, gap markers between.

    Only the documents something was chosen in are visited, so the cost follows the window,
    not the corpus.
    """
    nodes = source.nodes
    spans = {
        nodes[i].first_document: i for i in selection.summaries.values() if nodes[i].document < 0
    }
    touched = sorted({*selection.by_document, *selection.summary_starts, *spans})
    blocks: list[Block] = []
    cursor = 0
    for position in touched:
        if position < cursor:
            continue  # inside the documents a collection-level summary stands for
        blocks.extend(_gap_for_documents(source, cursor, position))
        node_index = spans.get(position)
        if node_index is not None:
            blocks.append(summary_block(source, node_index, selection.node_score(node_index)))
            cursor = nodes[node_index].last_document
        else:
            blocks.extend(document_blocks(source, position, selection))
            cursor = position + 1
    blocks.extend(_gap_for_documents(source, cursor, len(source.documents)))
    return blocks


def _gap_for_documents(source: Source, first: int, end: int) -> list[Block]:
    """The marker for documents `first` to `end - 1`, left out (none when the range is empty)."""
    if end <= first:
        return []
    before = source.document_tokens_before
    tokens, count = before[end] - before[first], end - first
    what = "document" if count == 1 else "documents"
    return [Block(kind="gap", text=gap_marker(tokens, what, count))]


def document_blocks(source: Source, position: int, selection: Selection) -> list[Block]:
    """One document's header, then its passages, summaries and gaps in order."""
    view, offset = source.documents[position], source.document_first_chunk[position]
    header = document_header(view, position, len(source.documents))
    blocks = [Block(kind="header", text=header, document=position)]
    chosen = selection.by_document.get(position, [])
    starts = selection.summary_starts.get(position, [])
    count, units = len(view.chunk_starts), view.chunk_units
    cut = {unit for ordinal in chosen if (unit := units[ordinal]) is not None}  # units in
    next_chosen = next_start = 0  # indices into `chosen` and `starts`
    ordinal = 0
    while ordinal < count:
        while next_chosen < len(chosen) and chosen[next_chosen] < ordinal:
            next_chosen += 1
        while next_start < len(starts) and starts[next_start] < ordinal:
            next_start += 1
        upcoming = min(
            chosen[next_chosen] if next_chosen < len(chosen) else count,
            starts[next_start] if next_start < len(starts) else count,
        )
        if upcoming > ordinal:
            blocks.extend(_gaps(view, position, ordinal, upcoming - 1, cut))
            ordinal = upcoming
        elif next_chosen < len(chosen) and chosen[next_chosen] == ordinal:
            last, taken = ordinal, next_chosen
            # One passage per run of chunks, but a new one at each conversation turn, record
            # or section, so that every unit carries its own header; an excerpt stands alone.
            excerpts = selection.excerpts
            while (
                offset + last not in excerpts
                and taken + 1 < len(chosen)
                and chosen[taken + 1] == last + 1
                and units[last + 1] == units[ordinal]
                and offset + last + 1 not in excerpts
            ):
                last, taken = last + 1, taken + 1
            blocks.append(_passage(source, position, ordinal, last, selection))
            ordinal = last + 1
        else:
            node_index = selection.summaries[offset + ordinal]
            blocks.append(summary_block(source, node_index, selection.node_score(node_index)))
            ordinal = max(ordinal + 1, source.nodes[node_index].last_chunk - offset)
    return blocks


def _gaps(view: DocumentView, position: int, first: int, last: int, cut: set[int]) -> list[Block]:
    """Markers for chunks `first` to `last` of a document, left out: one marker, except that
    what is missing of a unit partly in the window (one of `cut`) is said on its own. Only
    the units at either end of the run can be partly in: a unit is contiguous."""
    units, prefix = view.chunk_units, view.token_prefix
    pieces: list[tuple[int, int, bool]] = []  # (first, last, inside a cut unit)
    low = first
    if units[first] in cut:
        high = first
        while high < last and units[high + 1] == units[first]:
            high += 1
        pieces.append((first, high, True))
        low = high + 1
    if low <= last:
        tail = last + 1
        if units[last] in cut:
            tail = last
            while tail - 1 >= low and units[tail - 1] == units[last]:
                tail -= 1
        if low < tail:
            pieces.append((low, tail - 1, False))
        if tail <= last:
            pieces.append((tail, last, True))
    blocks = []
    for start, end, in_cut in pieces:
        tokens = prefix[end + 1] - prefix[start]
        text = cut_marker(tokens, view.unit_name) if in_cut else gap_marker(tokens, "tokens")
        blocks.append(Block(kind="gap", text=text, document=position))
    return blocks


def _passage(source: Source, position: int, first: int, last: int, selection: Selection) -> Block:
    view, offset = source.documents[position], source.document_first_chunk[position]
    start, end = view.chunk_starts[first], view.chunk_ends[last]
    unit = view.chunk_units[first]
    label = selection.labels.get((position, unit)) if unit is not None else None
    excerpt = selection.excerpts.get(offset + first)
    if excerpt is not None:
        start, end = excerpt
        label = f"{label} · excerpt" if label else "excerpt"
    header = passage_header(view, first, last, label=label, chars=(start, end))
    text = view.text
    following = view.chunk_starts[last + 1] if last + 1 < len(view.chunk_starts) else None
    # An excerpt does not end where its chunk does: its count is not the chunk's tile.
    after = None if following is None or excerpt is not None else text[end:following]
    return Block(
        kind="chunk",
        text=f"{header}\n{text[start:end]}",
        after=after,
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
