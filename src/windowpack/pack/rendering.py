"""Rendering a window: the query's material in document order, and the summaries of the
overview tier.

Grouped by document in collection order: verbatim passages (consecutive chunks as one span of
the source, byte-identical), summaries marked as such with the range they stand for, and gap
markers saying how many tokens were left out. The pieces and their headers are `layout`'s,
in the window's header style: in "compact" and "none", the markers of a run of left-out
pieces (the rest of a document, the documents after it) are one marker (`merged_gaps`).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace

from windowpack.documents import parse_heading
from windowpack.pack.layout import (
    Block,
    DocumentView,
    Source,
    compact_marker,
    compact_passage_header,
    compact_summary_header,
    cut_marker,
    gap_marker,
    opens_block,
    passage_header,
    styled_document_header,
    summary_header,
)
from windowpack.pack.reasons import passage_reason
from windowpack.types import HeaderStyle, Why


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
    reasons: Mapping[int, int] | None = None
    """Why each chosen chunk is in, by global chunk index (`reasons.chunk_reasons`: flags
    that `reasons.passage_reason` reads); None: every passage says `reason`."""
    reason: Why = "whole"
    """What a passage says when there are no `reasons`: a window that depends on no question
    (the lossless one, a session's tier rendered again)."""

    def passage_reason(self, first: int, last: int) -> Why:
        """Why the chunks `first` to `last` (global indices) are in."""
        if self.reasons is None:
            return self.reason
        return passage_reason(self.reasons, first, last)

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
    *,
    reasons: Mapping[int, int] | None = None,
    reason: Why = "whole",
) -> Selection:
    """The selection of `chunks` verbatim and `nodes` as summaries, with (chunk, node) scores,
    header labels by (document position, unit), and why each chunk is in (`reasons`, or one
    `reason` for all)."""
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
        reasons=reasons,
        reason=reason,
    )


def once_each(
    source: Source,
    chunks: Sequence[int],
    shown: AbstractSet[str] = frozenset(),
    known: dict[int, str] | None = None,
) -> list[int]:
    """`chunks` (global indices, sorted) without those whose text an earlier document among
    them shows too: page furniture, a section pasted into several pages, shown once. A unit
    (a section, a turn) is compared whole, so a unit is never shown in part for it: two chats
    asking the same request differ in their replies. Repeats inside one document stay: a chat
    asks the same request again, and each instance is its own; so does one that a summary
    the window shows already (`shown`, the overview's) says word for word. Reads the texts of
    the chosen chunks only (rendering reads them); `known` keeps each chunk's text to compare
    (by global index) for the next call over the same source, as one pack's drafts make."""
    firsts = source.document_first_chunk
    owner: dict[str, int] = {}  # a chunk's (or its unit's) text -> the document showing it
    keys: dict[tuple[int, int], str] = {}  # by (document, unit): the unit's text
    known = {} if known is None else known
    kept = []
    for index in chunks:
        position = bisect.bisect_right(firsts, index) - 1
        key = known.get(index)
        if key is None:
            view, ordinal = source.documents[position], index - firsts[position]
            key = known[index] = repeat_key(view, ordinal, keys, position)
        if key not in shown and owner.setdefault(key, position) == position:
            kept.append(index)
    return kept


def repeat_key(
    view: DocumentView,
    ordinal: int,
    units: dict[tuple[int, int], str] | None = None,
    position: int = 0,
) -> str:
    """What tells a repeat of chunk `ordinal`: its text, or its whole unit's (kept in
    `units` by (`position`, unit), so that a unit's chunks find it once)."""
    unit = view.chunk_units[ordinal]
    if unit is None:
        return view.text[view.chunk_starts[ordinal] : view.chunk_ends[ordinal]]
    held = units.get((position, unit)) if units is not None else None
    if held is None:
        first = last = ordinal
        while first > 0 and view.chunk_units[first - 1] == unit:
            first -= 1
        while last + 1 < len(view.chunk_units) and view.chunk_units[last + 1] == unit:
            last += 1
        held = view.text[view.chunk_starts[first] : view.chunk_ends[last]]
        if units is not None:
            units[(position, unit)] = held
    return held


PassageMemo = dict[tuple[int, int, int, bool, HeaderStyle], Block]
"""Rendered passages by (position, first and last ordinal, whether it continues a cut unit,
style)."""


@dataclass
class DraftMemo:
    """What the drafts of one pack (one part of it) render alike, kept from one to the next:
    their selections share scores, labels and reasons, so a document chosen alike in two
    drafts is rendered once, and a chunk's text to compare for repeats is read once."""

    documents: dict[tuple[int, tuple[int, ...], tuple[int, ...], HeaderStyle], list[Block]] = field(
        default_factory=dict
    )
    """Rendered documents by (position, chosen ordinals, summary nodes shown, style)."""
    passages: PassageMemo = field(default_factory=dict)
    """A larger room adds a chunk to many documents, not to every passage."""
    repeat_keys: dict[int, str] = field(default_factory=dict)
    """`once_each`'s text to compare, by global chunk index."""


def render_documents(
    source: Source,
    selection: Selection,
    style: HeaderStyle = "full",
    memo: DraftMemo | None = None,
) -> list[Block]:
    """The query tier: chosen chunks and summaries by document, gap markers between.

    Only the documents something was chosen in are visited, so the cost follows the window,
    not the corpus. With a `memo` (one pack's), a document is rendered once for all the
    drafts that choose the same of it.
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
        blocks.extend(_gap_for_documents(source, cursor, position, style))
        node_index = spans.get(position)
        if node_index is not None:
            score = selection.node_score(node_index)
            blocks.append(summary_block(source, node_index, score, style))
            cursor = nodes[node_index].last_document
        else:
            blocks.extend(_document_blocks_memoised(source, position, selection, style, memo))
            cursor = position + 1
    blocks.extend(_gap_for_documents(source, cursor, len(source.documents), style))
    return merged_gaps(blocks, style)


def _document_blocks_memoised(
    source: Source,
    position: int,
    selection: Selection,
    style: HeaderStyle,
    memo: DraftMemo | None,
) -> list[Block]:
    if memo is None:
        return document_blocks(source, position, selection, style)
    offset = source.document_first_chunk[position]
    chosen = tuple(selection.by_document.get(position, ()))
    summaries = selection.summaries
    shown = tuple(summaries[offset + start] for start in selection.summary_starts.get(position, ()))
    key = (position, chosen, shown, style)
    blocks = memo.documents.get(key)
    if blocks is None:
        blocks = document_blocks(source, position, selection, style, memo.passages)
        memo.documents[key] = blocks
    return blocks


def merged_gaps(blocks: list[Block], style: HeaderStyle) -> list[Block]:
    """`blocks` with each run of consecutive gap markers as one (not in style "full"): what a
    reader needs is that, and how much, text is missing there."""
    if style == "full":
        return blocks
    merged: list[Block] = []
    run: list[Block] = []
    for block in [*blocks, None]:
        if block is not None and block.kind == "gap":
            run.append(block)
            continue
        if len(run) == 1:
            merged.append(run[0])
        elif run:
            tokens = sum(gap.left_out for gap in run)
            cut = (run[0].left_out, run[0].cut) if run[0].cut is not None else None
            documents = {gap.document for gap in run}
            merged.append(
                Block(
                    kind="gap",
                    text=compact_marker(tokens, cut),
                    document=run[0].document if len(documents) == 1 else None,
                    left_out=tokens,
                )
            )
        run = []
        if block is not None:
            merged.append(block)
    return merged


def _gap_for_documents(
    source: Source, first: int, end: int, style: HeaderStyle = "full"
) -> list[Block]:
    """The marker for documents `first` to `end - 1`, left out (none when the range is empty)."""
    if end <= first:
        return []
    before = source.document_tokens_before
    tokens, count = before[end] - before[first], end - first
    what = "document" if count == 1 else "documents"
    # A compact marker says how much is missing; the next document's header says where.
    text = gap_marker(tokens, what, count) if style == "full" else compact_marker(tokens)
    return [Block(kind="gap", text=text, left_out=tokens)]


def document_blocks(
    source: Source,
    position: int,
    selection: Selection,
    style: HeaderStyle = "full",
    passages: PassageMemo | None = None,
) -> list[Block]:
    """One document's header, then its passages, summaries and gaps in order (the passages
    kept in and taken from `passages`, one pack's `DraftMemo.passages`, when given)."""
    passages = {} if passages is None else passages
    view, offset = source.documents[position], source.document_first_chunk[position]
    header = styled_document_header(view, position, len(source.documents), style)
    blocks = [] if header is None else [Block(kind="header", text=header, document=position)]
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
            blocks.extend(_gaps(view, position, ordinal, upcoming - 1, cut, style))
            ordinal = upcoming
        elif next_chosen < len(chosen) and chosen[next_chosen] == ordinal:
            last, taken = ordinal, next_chosen
            # One passage per run of chunks, but a new one at each conversation turn, record
            # or section, so that every unit carries its own header.
            while (
                taken + 1 < len(chosen)
                and chosen[taken + 1] == last + 1
                and units[last + 1] == units[ordinal]
            ):
                last, taken = last + 1, taken + 1
            # After the marker of what is missing of its own unit, a compact passage needs no
            # header: the marker said "of this section".
            after_cut = bool(blocks) and blocks[-1].cut_unit == units[ordinal] is not None
            key = (position, ordinal, last, after_cut, style)
            passage = passages.get(key)
            if passage is None:
                passage = _passage(source, position, ordinal, last, selection, style, after_cut)
                passages[key] = passage
            blocks.append(passage)
            ordinal = last + 1
        else:
            node_index = selection.summaries[offset + ordinal]
            score = selection.node_score(node_index)
            blocks.append(summary_block(source, node_index, score, style))
            ordinal = max(ordinal + 1, source.nodes[node_index].last_chunk - offset)
    return _untitled(view, _summarised_whole(view, blocks)) if style == "compact" else blocks


def _untitled(view: DocumentView, blocks: list[Block]) -> list[Block]:
    """A compact document without its header when the first passage shown opens with the
    document's title as its heading: the header would say it twice in a row."""
    if not blocks or blocks[0].kind != "header" or view.title is None:
        return blocks
    first = next((block for block in blocks[1:] if block.kind != "gap"), None)
    if first is None or first.kind != "chunk":
        return blocks
    heading = parse_heading(first.text.split("\n", 1)[0])
    return blocks[1:] if heading is not None and heading.title == view.title else blocks


def _summarised_whole(view: DocumentView, blocks: list[Block]) -> list[Block]:
    """A compact document that is one summary of all of it, as one block that names it:
    `[summary of Title]`, not its header and then a summary's header."""
    if len(blocks) != 2 or blocks[0].kind != "header" or blocks[1].kind != "summary":
        return blocks
    summary = blocks[1]
    if summary.char_start != view.chunk_starts[0] or summary.char_end != view.chunk_ends[-1]:
        return blocks
    text = summary.text.split("\n", 1)[1]
    named = compact_summary_header(named=view.title or view.external_id)
    return [replace(summary, text=f"{named}\n{text}")]


def _gaps(
    view: DocumentView,
    position: int,
    first: int,
    last: int,
    cut: set[int],
    style: HeaderStyle = "full",
) -> list[Block]:
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
        cut_name = view.unit_name if in_cut else None
        cut_unit = units[start] if in_cut else None
        if style != "full":
            text = compact_marker(tokens, (tokens, view.unit_name) if in_cut else None)
        elif in_cut:
            text = cut_marker(tokens, view.unit_name)
        else:
            text = gap_marker(tokens, "tokens")
        blocks.append(
            Block(
                kind="gap",
                text=text,
                document=position,
                left_out=tokens,
                cut=cut_name,
                cut_unit=cut_unit,
            )
        )
    return blocks


def _passage(
    source: Source,
    position: int,
    first: int,
    last: int,
    selection: Selection,
    style: HeaderStyle = "full",
    continues: bool = False,
) -> Block:
    """Chunks `first` to `last` of a document, under their header in `style` (none in a
    compact window when the passage `continues` a unit the marker before it named)."""
    view, offset = source.documents[position], source.document_first_chunk[position]
    start, end = view.chunk_starts[first], view.chunk_ends[last]
    unit = view.chunk_units[first]
    label = selection.labels.get((position, unit)) if unit is not None else None
    # A labelled unit is an instance of the repeated request the question asks about.
    why = "repeat" if label else selection.passage_reason(offset + first, offset + last)
    text = view.text
    body = text[start:end]
    if style == "full":
        shown = f"{passage_header(view, first, last, label=label, chars=(start, end))}\n{body}"
    else:
        compact = style == "compact" and not (continues and label is None)
        header = compact_passage_header(view, first, label) if compact else ""
        # Without a header, the text opens the block, unless it cannot start a token there.
        shown = f"{header}\n{body}" if header else opens_block(body)
    following = view.chunk_starts[last + 1] if last + 1 < len(view.chunk_starts) else None
    after = None if following is None else text[end:following]
    return Block(
        kind="chunk",
        text=shown,
        after=after,
        document=position,
        first_chunk=offset + first,
        last_chunk=offset + last,
        char_start=start,
        char_end=end,
        score=selection.chunk_score(offset + first, offset + last),
        why=why,
    )


def summary_block(
    source: Source,
    node_index: int,
    score: float,
    style: HeaderStyle = "full",
    *,
    listed: bool = False,
    why: Why = "summary",
) -> Block:
    """A summary node with its header: the chunks (or documents) it stands for ("full"), or
    that it is a summary (other styles: a summary always says it is one, except in a
    compact overview, `listed`, whose title says it of all its summaries). `why`: `summary`,
    or `overview` for the overview tier's."""
    node = source.nodes[node_index]
    view, offset = source.documents[node.anchor], source.document_first_chunk[node.anchor]
    if listed and style == "compact":
        header = ""
    elif style != "full":
        if node.document < 0:
            header = compact_summary_header(documents=node.last_document - node.first_document)
        else:
            prefix = view.token_prefix
            tokens = prefix[node.last_chunk - offset] - prefix[node.first_chunk - offset]
            header = compact_summary_header(tokens=tokens)
    elif node.document < 0:
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
        text=f"{header}\n{node.text}" if header else opens_block(node.text),
        document=node.document if node.document >= 0 else None,
        level=node.level,
        first_chunk=node.first_chunk,
        last_chunk=node.last_chunk - 1,
        char_start=view.chunk_starts[node.first_chunk - offset] if node.document >= 0 else None,
        char_end=view.chunk_ends[node.last_chunk - offset - 1] if node.document >= 0 else None,
        score=score,
        documents=(node.first_document, node.last_document - 1) if node.document < 0 else None,
        node=node_index,
        why=why,
    )
