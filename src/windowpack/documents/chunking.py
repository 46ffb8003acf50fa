"""Token-aware chunking on natural boundaries.

A document is cut into regions that no chunk may cross (units, the text between units,
markdown sections). A region that does not fit in `target_tokens` is split into paragraphs
(its blocks, see `blocks`: in markdown list items too, in markdown and plain text each
definition-list entry), a paragraph into sentences, a sentence into lines and a line at
token boundaries, each level only where the one above is too big. An entry too big is split
into its term and its definition's blocks, and the term is joined to the piece after it
(`_attach_terms`), so no chunk ends with a term; a lead-in and the list, table, code block or
entries it introduces are held the same way (`blocks.with_lead_ins`). The resulting pieces
are packed greedily into chunks, whose exact token count is then checked (a concatenation
may count differently from the sum of its parts) and pieces are backed off until the chunk
fits.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from windowpack.documents.blocks import Block, markdown_blocks, text_blocks, with_lead_ins
from windowpack.documents.conversation import message_starts, transcript_turns
from windowpack.documents.sections import heading_starts
from windowpack.errors import InvalidArgumentError
from windowpack.text import TokenCounter, append_trimmed, get_token_counter, split_sentences
from windowpack.types import Document, Span


@dataclass(frozen=True, kw_only=True)
class Chunk:
    """One chunk: `document.text[start:end]`, its exact token count and its unit index."""

    start: int
    end: int
    tokens: int
    unit: int | None


# Why a chunk must (or should) not continue across a piece boundary.
_NO_BARRIER, _GROUP_BARRIER, _HARD_BARRIER = 0, 1, 2
# Split levels: what a piece too big is split into.
_REGION, _PARAGRAPH, _SENTENCE, _LINE = 0, 1, 2, 3

_BLANK_LINE = re.compile(r"\n\s*\n")
# What a Markdown definition's first line starts with (`: `), not its content.
_DEFINITION_MARK = re.compile(r"[:\s]+")
# Kinds whose sections split at blocks: markdown's (`markdown_blocks`), plain text's
# paragraphs and definition-list entries (`text_blocks`).
_BLOCK_KINDS = frozenset({"markdown", "text"})
_NEWLINE = re.compile("\n")
_HEADING_AT = re.compile(r"#{1,6}(?=\s|$)")
# Prose averages about 4 chars a token: a span with more than this many chars per token of
# the target is taken as too big without counting it (if it was not, it is merely split).
_MAX_CHARS_PER_TOKEN = 32


@dataclass(slots=True, kw_only=True)
class _Piece:
    start: int
    end: int
    unit: int | None
    level: int
    barrier_before: int = _NO_BARRIER
    barrier_after: int = _NO_BARRIER
    heading: bool = False
    code: bool = False
    tokens: int = 0
    # The block this piece is, when it may be split by its structure (a definition entry).
    block: Block | None = None
    # A definition's term: no chunk may end with it (`_attach_terms`).
    term: bool = False


def chunk_document(document: Document, counter: TokenCounter, target_tokens: int) -> list[Chunk]:
    """Cut `document` into chunks of at most `target_tokens` tokens on natural boundaries.

    Chunks are in order, never overlap, have no surrounding whitespace, and cover every
    non-whitespace character. Only a single character that alone counts more than
    `target_tokens` can make a chunk exceed it.
    """
    if target_tokens < 1:
        raise InvalidArgumentError("target_tokens", f"must be at least 1, got {target_tokens}")
    regions = _regions(document)
    pieces = _fit_pieces(document, regions, counter, target_tokens)
    pieces = _attach_terms(document, pieces, counter, target_tokens)
    return _pack(document.text, pieces, counter, target_tokens)


def _regions(document: Document) -> list[_Piece]:
    """Spans no chunk may cross: each unit, the text between units, markdown sections."""
    text, units = document.text, _sorted_units(document)
    regions: list[_Piece] = []
    position = 0
    for index, unit in units:
        regions += _sections(document, position, unit.start, None)
        regions += _sections(document, unit.start, unit.end, index)
        position = unit.end
    regions += _sections(document, position, len(text), None)
    return regions


def _sorted_units(document: Document) -> list[tuple[int, Span]]:
    units = sorted(enumerate(document.units or []), key=lambda item: item[1].start)
    previous_end = 0
    for index, unit in units:
        if not previous_end <= unit.start <= unit.end <= len(document.text):
            raise InvalidArgumentError(
                "units", f"unit {index} [{unit.start}, {unit.end}) overlaps another or the text end"
            )
        previous_end = unit.end
    return units


def natural_units(document: Document) -> list[Span] | None:
    """The units a document has by its kind when the caller gave none: a conversation's turns
    (parsed from its `role:` lines), a markdown document's sections (heading to heading, the
    text before the first heading as one more). None when the kind has none."""
    if document.units is not None:
        return document.units
    if document.kind == "conversation":
        return transcript_turns(document.text) or None
    starts = _heading_starts(document, 0, len(document.text), include_start=True)
    if not starts:
        return None  # not markdown, or markdown without headings: no sections
    return _separated(document.text, [0, *starts, len(document.text)])


def _sections(document: Document, start: int, end: int, unit: int | None) -> list[_Piece]:
    # In a chat each message is its own region: a request is never merged into the chunk
    # that starts its reply, so replies chunk alike whatever was asked (and their embeddings
    # are cached across conversations), and the request stands alone for search.
    messages = (
        message_starts(document.text, start + 1, end) if document.kind == "conversation" else []
    )
    bounds = [start, *sorted({*_heading_starts(document, start, end), *messages}), end]
    return [
        _Piece(start=s.start, end=s.end, unit=unit, level=_REGION, barrier_before=_HARD_BARRIER)
        for s in _separated(document.text, bounds)
    ]


def _heading_starts(
    document: Document, start: int, end: int, *, include_start: bool = False
) -> list[int]:
    """Where markdown headings start in `[start, end)` (at `start` itself only if asked)."""
    if document.kind != "markdown":
        return []
    return heading_starts(document.text, start, end, include_start=include_start)


def _fit_pieces(
    document: Document, regions: list[_Piece], counter: TokenCounter, target: int
) -> list[_Piece]:
    """Split pieces level by level until each fits; count each level in one batch."""
    text = document.text
    fitted: list[_Piece] = []
    pending = regions
    longest = _MAX_CHARS_PER_TOKEN * target
    while pending:
        # Spans far longer than `target` tokens can hold are split without counting them:
        # counting the whole text and each paragraph first would triple the work.
        countable = [text[p.start : p.end] for p in pending if p.end - p.start <= longest]
        counts = iter(counter.count_many(countable))
        too_big: list[_Piece] = []
        for piece in pending:
            count = next(counts) if piece.end - piece.start <= longest else target + 1
            piece.tokens = count
            children = [] if count <= target else _split(document, piece, counter, target)
            too_big += children
            if not children:  # it fits, or is one character that cannot be split
                fitted.append(piece)
        pending = too_big
    fitted.sort(key=lambda piece: piece.start)
    return fitted


def _split(document: Document, piece: _Piece, counter: TokenCounter, target: int) -> list[_Piece]:
    if piece.block is not None and piece.block.term is not None:
        return _entry_children(document, piece, piece.block)
    first_level = piece.level
    if piece.level == _REGION and document.kind in _BLOCK_KINDS:
        blocks = _blocks(document, piece.start, piece.end)
        if len(blocks) > 1:
            return _block_children(document, piece, blocks)
        if blocks and blocks[0].term is not None:
            return _entry_children(document, piece, blocks[0])
        # One block: split it as its kind says (code at lines, anything else at sentences).
        first_level = _SENTENCE if blocks and blocks[0].code else _PARAGRAPH
    for level in range(first_level, _LINE + 1):
        spans = _split_spans(document, piece, level, counter, target)
        if len(spans) > 1:
            return _children(document, piece, spans, min(level + 1, _LINE))
    return []


def _blocks(document: Document, start: int, end: int) -> list[Block]:
    """A region's blocks, each lead-in joined to what it introduces (`with_lead_ins`)."""
    if document.kind == "markdown":
        return with_lead_ins(document.text, markdown_blocks(document.text, start, end))
    return with_lead_ins(document.text, text_blocks(document.text, start, end))


def _block_children(document: Document, piece: _Piece, blocks: Sequence[Block]) -> list[_Piece]:
    """A section's blocks as pieces: a code block too big is split at its lines, a
    definition-list entry at its own blocks (`_entry_children`)."""
    children = _children(document, piece, [block.span for block in blocks], _PARAGRAPH)
    for child, block in zip(children, blocks, strict=True):
        child.block = block
        if block.code:
            child.level, child.code = _SENTENCE, True
    return children


def _entry_children(document: Document, piece: _Piece, entry: Block) -> list[_Piece]:
    """A definition-list entry too big for one chunk: its term, then its definition's blocks;
    the term is joined to the definition's first piece once all fit (`_attach_terms`)."""
    assert entry.term is not None
    blocks = [Block(span=entry.term, code=False), *entry.parts]
    children = _block_children(document, piece, blocks)
    children[0].term = True
    return children


def _attach_terms(
    document: Document, pieces: list[_Piece], counter: TokenCounter, target: int
) -> list[_Piece]:
    """Each term piece joined to the piece after it (its definition's first), so no chunk ends
    with a term. A term that nearly fills a chunk alone is split (a lead-in paragraph at its
    sentences) and its last piece joined on; one that cannot be split stays alone."""
    attached: list[_Piece] = []
    pending = pieces[::-1]  # a stack: the next piece last
    while pending:
        piece = pending.pop()
        if piece.term and pending:
            joined = _join_term(document, piece, pending, counter, target)
            if joined is not None:
                pending.append(joined)  # still a term if it took only the ":" mark
                continue
            # Each part is smaller than the term, so this ends; the last part is the term.
            parts = _fit_pieces(document, [piece], counter, max(piece.tokens - 1, 1))
            if len(parts) > 1 and parts[-1].term:
                pending.extend(parts[::-1])
                continue
        attached.append(piece)
    return attached


def _join_term(
    document: Document, term: _Piece, pending: list[_Piece], counter: TokenCounter, target: int
) -> _Piece | None:
    """`term` and the next piece (`pending[-1]`, taken off) as one piece, that piece split
    smaller first (at its natural boundaries) until the two fit in a chunk; None if they
    cannot."""
    text = document.text
    room = target - term.tokens  # what the next piece may count to fit with the term
    while room >= 1:
        if pending[-1].tokens > room:
            pending[-1:] = _fit_pieces(document, [pending[-1]], counter, room)[::-1]
        following = pending[-1]
        tokens = counter.count(text[term.start : following.end])
        if tokens <= target:
            pending.pop()
            joined = _joined(term, following, tokens)
            # A definition's bare `:` mark is not its start: the term joins on past it.
            mark_only = not _DEFINITION_MARK.sub("", text[following.start : following.end])
            joined.term = following.term or mark_only
            return joined
        room -= tokens - target  # the two count more together than apart
    return None


def _joined(term: _Piece, following: _Piece, tokens: int) -> _Piece:
    """One piece of a term and the piece after it."""
    return _Piece(
        start=term.start,
        end=following.end,
        unit=term.unit,
        level=following.level,
        barrier_before=term.barrier_before,
        barrier_after=following.barrier_after,
        heading=term.heading,
        code=following.code,
        tokens=tokens,
    )


def _split_spans(
    document: Document, piece: _Piece, level: int, counter: TokenCounter, target: int
) -> list[Span]:
    text, start, end = document.text, piece.start, piece.end
    if level == _REGION:
        return _paragraphs(document, start, end)
    if level == _PARAGRAPH:
        return split_sentences(text, start, end)
    if level == _SENTENCE:
        return _separated(
            text, [start, *(m.start() for m in _NEWLINE.finditer(text, start, end)), end]
        )
    cuts = counter.cut_points(text[start:end], target)
    spans = _separated(text, [start, *(start + cut for cut in cuts), end])
    if len(spans) < 2 and end - start > 1:
        # The tokenizer found no usable cut: halving by characters always makes progress.
        spans = _separated(text, [start, (start + end) // 2, end])
    return spans


def _paragraphs(document: Document, start: int, end: int) -> list[Span]:
    blank_lines = [m.start() for m in _BLANK_LINE.finditer(document.text, start, end)]
    return _separated(document.text, [start, *blank_lines, end])


def _starts_with_heading(document: Document, position: int) -> bool:
    return document.kind == "markdown" and bool(_HEADING_AT.match(document.text, position))


def _separated(text: str, bounds: list[int]) -> list[Span]:
    """The trimmed, non-empty spans between consecutive `bounds`."""
    spans: list[Span] = []
    for span_start, span_end in itertools.pairwise(bounds):
        append_trimmed(spans, text, span_start, span_end)
    return spans


def _children(document: Document, parent: _Piece, spans: list[Span], level: int) -> list[_Piece]:
    children = [
        _Piece(
            start=span.start, end=span.end, unit=parent.unit, level=level, heading=parent.heading
        )
        for span in spans
    ]
    children[0].barrier_before = parent.barrier_before
    children[-1].barrier_after = parent.barrier_after
    children[-1].term = parent.term  # a term too long for a chunk: its end is joined on
    if parent.level == _REGION:
        children[0].heading = _starts_with_heading(document, parent.start)
    if parent.level == _PARAGRAPH or parent.code:
        # A paragraph or code block too big for one chunk starts and ends its own run of
        # chunks, so no chunk starts inside it when its own start is a boundary at hand.
        children[0].barrier_before = max(children[0].barrier_before, _GROUP_BARRIER)
        children[-1].barrier_after = max(children[-1].barrier_after, _GROUP_BARRIER)
    return children


def _pack(text: str, pieces: list[_Piece], counter: TokenCounter, target: int) -> list[Chunk]:
    chunks: list[Chunk] = []
    first = 0
    while first < len(pieces):
        estimates = _greedy_run(text, pieces, first, target)
        run = pieces[first : first + len(estimates)]
        size, tokens = _back_off_until_fit(text, run, estimates, counter, target)
        start, end, unit = run[0].start, run[size - 1].end, run[0].unit
        chunks.append(Chunk(start=start, end=end, tokens=tokens, unit=unit))
        first += size
    return chunks


def _greedy_run(text: str, pieces: list[_Piece], first: int, target: int) -> list[int]:
    """Estimated running token totals of the longest run from `first` that seems to fit."""
    estimates = [pieces[first].tokens]
    headings_only = pieces[first].heading
    for index in range(first + 1, len(pieces)):
        piece, previous = pieces[index], pieces[index - 1]
        barrier = max(piece.barrier_before, previous.barrier_after)
        if barrier == _HARD_BARRIER or (barrier == _GROUP_BARRIER and not headings_only):
            break
        estimate = estimates[-1] + piece.tokens + _joint_estimate(text, previous, piece)
        if estimate > target:
            break
        estimates.append(estimate)
        headings_only = headings_only and piece.heading
    return estimates


def _joint_estimate(text: str, previous: _Piece, piece: _Piece) -> int:
    # A single space usually merges into the next word's token; other gaps cost about one.
    gap = piece.start - previous.end
    return 0 if gap == 0 or (gap == 1 and text[previous.end] == " ") else 1


def _back_off_until_fit(
    text: str, run: list[_Piece], estimates: list[int], counter: TokenCounter, target: int
) -> tuple[int, int]:
    """Exact-count the run and drop trailing pieces until it fits: (pieces kept, tokens)."""
    size = len(estimates)
    while size > 1:
        tokens = counter.count(text[run[0].start : run[size - 1].end])
        if tokens <= target:
            return size, tokens
        # Drop about as many estimated tokens as the run is over, at least one piece.
        overshoot = tokens - target
        keep = size - 1
        while keep > 1 and estimates[size - 1] - estimates[keep - 1] < overshoot:
            keep -= 1
        size = keep
    return 1, run[0].tokens


def chunk_all(
    documents: Sequence[Document], *, tokenizer: str, chunk_tokens: int
) -> list[list[Chunk]]:
    """Each document's chunks, as `chunk_document` cuts them."""
    counter = get_token_counter(tokenizer)
    return [chunk_document(document, counter, chunk_tokens) for document in documents]
