"""From scored states to a `Window`: allocate, lay out, count exactly, trim if ever over.

One or more parts (a collection's state and its corpus scored for the question) share one
budget. The window is lossless when everything fits; otherwise a query-independent overview
tier comes first, then the allocation rendered by collection and document.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from windowpack.pack import layout, rendering
from windowpack.pack.allocate import allocate, lossless_chunks
from windowpack.pack.corpus import Corpus, Overheads, combined
from windowpack.pack.layout import Block
from windowpack.pack.overview import Overview, overview
from windowpack.pack.piece_counts import CountMemo, adds_at_blocks, piece_counts, tokens_before
from windowpack.pack.reasons import Found, chunk_reasons
from windowpack.pack.repeats import Focus
from windowpack.pack.request import PackRequest
from windowpack.pack.state import PackingState
from windowpack.pack.verbatim import pinned_cost
from windowpack.text import TokenCounter
from windowpack.types import HeaderStyle, Span, Window, WindowItem

_MAX_TRIMS = 8
_REFILL_RATIO = 1.005
"""Step of the grid of rooms `_refilled` tries: one room in 200 apart. Set so that the
unused share of a window stays near the allocator's own slack (a 1.05 grid left 4.4% of a
reference manual's compact windows unused, `tests/pack/test_headers.py`)."""
_REFILL_REACH = 1.0
"""How far above its budget a refill may ask the allocator for (a share of the budget).
Its costs are upper bounds, far above the count on tiny budgets (a 160-token window of
`tests/pack/test_reasons.py` counted 92 tokens for a room of 160); the bound only keeps the
search finite."""
_REFILL_ESTIMATES = 3
"""Probes of `_refilled` placed where a line through the nearest rooms known under and over
the budget says it falls; the rest gallop up or halve the span left. On the ~1M-token essay
store of `benchmarks/pack.py` (6 questions at 8K and at 128K) a refill cost 2-5 allocations
this way and 4-8 galloping and halving from one guess."""


@dataclass(frozen=True, kw_only=True)
class Part:
    """One collection's share of a pack: its state and its corpus scored for the question."""

    state: PackingState
    corpus: Corpus
    focus: Focus = field(default_factory=Focus)
    """Turns the question refers to (`repeats.focus`): pinned first, labelled."""
    found: Found | None = None
    """Which of the first look-up's lists found each chunk (`reasons`); None: not scored."""


_Placed = tuple[Part, Block]
"""A rendered block and the part it came from (for its provenance)."""


def pack_parts(parts: Sequence[Part], request: PackRequest, counter: TokenCounter) -> Window:
    """The window for `request` over `parts`, never over budget (empty, with a reason, when
    not even one chunk or summary fits)."""
    budget, style = request.budget, request.headers
    if not any(part.corpus.chunks for part in parts):
        names = ", ".join(repr(part.state.name) for part in parts)
        if request.where is not None:
            reason = f"nothing to pack: no document in {names} matches where {request.where.key}"
            return _empty(parts, request, reason)
        return _empty(parts, request, f"nothing to pack: no documents in {names} yet")
    whole = lossless_window(parts, request, counter)
    if whole is not None and whole.tokens <= budget:
        return whole
    parts = [styled_part(part, style) for part in parts]
    corpus = combined([p.corpus for p in parts], [len(p.state.documents) for p in parts])
    overheads = styled_overheads(parts, style)
    pins = [
        chunk_offset + pin
        for part, (chunk_offset, _) in zip(parts, _offsets_of(parts), strict=True)
        for pin in part.focus.pins
    ]
    essential = sum(part.focus.essential for part in parts)
    # The turns an ordinal question needs come before the overview: it yields what they take.
    yielded = pinned_cost(corpus, pins[:essential], overheads)
    tier = overview([part.state for part in parts], request, counter, yielded)
    room = budget - tier.tokens
    offsets = _offsets_of(parts)
    # The overview's summaries are in the window already: the question's material says
    # something else (`allocate`, `shown_nodes`).
    shown = [
        offsets[position][1] + block.node
        for position, block in tier.blocks
        if block.node is not None
    ]
    # Their texts, by part: a passage that one of them says word for word is not repeated.
    summarised: dict[int, set[str]] = {id(part): set() for part in parts}
    for position, block in tier.blocks:
        if block.node is not None:
            summarised[id(parts[position])].add(parts[position].state.nodes[block.node].text)
    # The drafts of this pack choose most documents and passages alike: what they share is
    # rendered once (by part: each part's chunks are its own).
    memos = {id(part): rendering.DraftMemo() for part in parts}
    counted: CountMemo = {}  # and the blocks they share are counted once

    def packed(room: int) -> _Draft | None:
        """The window of an allocation of `room` tokens, counted (None: not even one chunk
        or summary fits)."""
        allocation = allocate(
            corpus,
            room,
            overheads,
            pins,
            window_budget=budget,
            shown_nodes=shown,
        )
        blocks = [(parts[position], block) for position, block in tier.blocks]
        for part, (chunk_offset, node_offset) in zip(parts, offsets, strict=True):
            chunks = allocation.chunks[
                (allocation.chunks >= chunk_offset)
                & (allocation.chunks < chunk_offset + part.corpus.chunks)
            ]
            nodes = allocation.nodes[
                (allocation.nodes >= node_offset)
                & (allocation.nodes < node_offset + part.corpus.nodes)
            ]
            rendered = _rendered(
                part,
                chunks - chunk_offset,
                nodes - node_offset,
                style,
                summarised[id(part)],
                memos[id(part)],
            )
            blocks.extend(with_title(parts, part, rendered, style) if rendered else [])
        if not blocks:
            return None
        return _counted(blocks, counter, prefix_blocks=len(tier.blocks), tier=tier, memo=counted)

    over: tuple[int, int] | None = None  # the smallest room known over the budget, its tokens
    for attempt in range(_MAX_TRIMS):
        draft = packed(room)
        if draft is None:
            break
        if draft.tokens <= budget:
            return _described(parts, request, _refilled(draft, packed, room, budget, over))
        # The estimate was short (rare: headers longer than measured): ask for less, by more
        # each time, and redo; the refill then looks between this room and the one over.
        over = (room, draft.tokens)
        room -= (draft.tokens - budget) * (attempt + 2) + 16
    return _empty(
        parts, request, f"a budget of {budget} tokens is too small for any chunk or summary"
    )


def _refilled(
    draft: _Draft,
    packed: Callable[[int], _Draft | None],
    room: int,
    budget: int,
    over_room: tuple[int, int] | None = None,
) -> _Draft:
    """The draft of the largest room that still fits `budget`: `room`'s own, or one of a
    grid of rooms shared by every budget. The allocator's costs are upper bounds (a gap
    marker's, a summary header's), and what they keep back goes to the window's material;
    where they fell short instead, `over_room` is the room found over the budget (and its
    tokens), and the search stays below it. Either way, a unit the allocator cut for want
    of room gets the room the budget still has to be completed in (design §4.8).

    The grid is why a larger budget never loses a chunk a smaller one showed: a room that
    fits the smaller budget fits the larger one too, so the larger budget's room is never
    smaller (allocations grow with their room, design §4.6)."""
    top = _grid_index_at_most(budget * (1 + _REFILL_REACH))
    if over_room is not None:
        top = min(top, _grid_index_at_most(over_room[0] - 1))
    best, above = _grid_index_at_most(room), top + 1
    if draft.tokens >= budget or best >= top:
        return draft
    # By room, not by tokens: the larger room's allocation holds the smaller one's.
    chosen = draft
    # The nearest (room, tokens) known under and over the budget: a window's tokens grow
    # about linearly with its room, so a line through them says where the budget falls.
    under: tuple[float, float] = (room, draft.tokens)
    over: tuple[float, float] | None = over_room
    step = 1
    for probe in itertools.count():
        if above - best <= 1:
            break
        if probe < _REFILL_ESTIMATES:
            index = _grid_index_at_most(_room_for(budget, under, over))
        elif above > top:  # nothing seen over the budget yet: gallop up
            index, step = best + step, step * 2
        else:
            index = (best + above) // 2
        index = min(max(index, best + 1), above - 1)
        candidate = packed(_grid_room(index))
        if candidate is not None and candidate.tokens <= budget:
            best, chosen = index, candidate
            under = (_grid_room(index), candidate.tokens)
        else:
            above = index
            if candidate is not None:
                over = (_grid_room(index), candidate.tokens)
    return chosen


def _room_for(budget: int, under: tuple[float, float], over: tuple[float, float] | None) -> float:
    """The room whose window would count `budget` tokens, on the line through `under` and
    `over` (through `under` and no room, no tokens, while nothing is known over it)."""
    (room_under, tokens_under), (room_over, tokens_over) = under, over or (0.0, 0.0)
    if tokens_over == tokens_under:
        return room_under
    slope = (room_over - room_under) / (tokens_over - tokens_under)
    return room_under + (budget - tokens_under) * slope


def _grid_room(index: int) -> int:
    """The room at `index` on the refill grid (rooms `_REFILL_RATIO` apart, the same for
    every budget)."""
    return int(_REFILL_RATIO**index)


def _grid_index_at_most(room: float) -> int:
    """The index of the largest grid room that is at most `room`."""
    if room < 1:
        return 0
    index = int(math.log(room) / math.log(_REFILL_RATIO))
    while _grid_room(index + 1) <= room:
        index += 1
    while index > 0 and _grid_room(index) > room:
        index -= 1
    return index


def styled_part(part: Part, style: HeaderStyle) -> Part:
    """`part` with its corpus costed in header style `style` (its scores kept)."""
    if style == "full":
        return part
    corpus = part.state.styled(style).corpus
    return replace(part, corpus=corpus.with_scores(part.corpus.chunk_score, part.corpus.node_score))


def styled_overheads(parts: Sequence[Part], style: HeaderStyle) -> Overheads:
    """The layout's overheads in `style` for every part at once: the largest of each."""
    each = [part.state.styled(style).overheads for part in parts]
    return Overheads(
        passage=max(o.passage for o in each),
        summary=max(o.summary for o in each),
        gap=max(o.gap for o in each),
        label=max(o.label for o in each),
    )


def lossless_window(
    parts: Sequence[Part], request: PackRequest, counter: TokenCounter
) -> Window | None:
    """Every chunk verbatim, in order, when the estimate says it fits the budget (None when
    it does not). It depends on no score and no question: callers may keep it for others."""
    style = request.headers
    if lossless_estimate(parts, style) > request.budget:
        return None
    blocks = [
        block for part in parts for block in with_title(parts, part, _lossless(part, style), style)
    ]
    return _described(parts, request, _counted(blocks, counter, prefix_blocks=len(blocks)))


def lossless_estimate(parts: Sequence[Part], style: HeaderStyle = "full") -> float:
    """The allocator's estimate of the lossless window's tokens in header style `style`
    (infinite when empty): the window is lossless exactly when this and its exact count
    both fit the budget."""
    if not any(part.state.corpus.chunks for part in parts):
        return float("inf")
    # Each collection's documents and passages are its own in the combined corpus too, so
    # the combined cost is the sum of the costs each state keeps.
    return sum(part.state.styled(style).lossless_cost for part in parts)


def _offsets_of(parts: Sequence[Part]) -> list[tuple[int, int]]:
    """Where each part's chunks and nodes start in the combined corpus."""
    offsets, chunks, nodes = [], 0, 0
    for part in parts:
        offsets.append((chunks, nodes))
        chunks, nodes = chunks + part.corpus.chunks, nodes + part.corpus.nodes
    return offsets


def _rendered(
    part: Part,
    chunks: np.ndarray,
    nodes: np.ndarray,
    style: HeaderStyle,
    summarised: AbstractSet[str] = frozenset(),
    memo: rendering.DraftMemo | None = None,
) -> list[_Placed]:
    corpus = part.corpus
    known = memo.repeat_keys if memo is not None else None
    chunk_list = rendering.once_each(part.state, chunks.tolist(), summarised, known)
    chunks, node_list = np.asarray(chunk_list, dtype=np.int64), nodes.tolist()
    # The chosen items' scores only: all of them as lists cost ~20 ms a pack at 100M tokens.
    scores = (
        dict(zip(chunk_list, corpus.chunk_score[chunks].tolist(), strict=True)),
        dict(zip(node_list, corpus.node_score[nodes].tolist(), strict=True)),
    )
    reasons = chunk_reasons(corpus, part.found, chunks) if part.found is not None else None
    chosen = rendering.choose(
        part.state, chunk_list, node_list, scores, part.focus.labels, reasons=reasons
    )
    blocks = rendering.render_documents(part.state, chosen, style, memo)
    if all(block.kind == "gap" for block in blocks):
        return []  # nothing of this collection made it in
    return [(part, block) for block in blocks]


def with_title(
    parts: Sequence[Part], part: Part, blocks: list[_Placed], style: HeaderStyle = "full"
) -> list[_Placed]:
    """`blocks` under their collection's title when the window has several (not in style
    "none")."""
    if len(parts) == 1 or style == "none":
        return blocks
    title = Block(kind="header", text=f"# Collection {part.state.name}")
    return [(part, title), *blocks]


def _lossless(part: Part, style: HeaderStyle) -> list[_Placed]:
    """Every chunk verbatim, in order: the window when the whole collection fits (each text
    once: a document repeating an earlier one's text is named by its items, not shown)."""
    state = part.state
    everything = rendering.choose(
        state, rendering.once_each(state, lossless_chunks(state.corpus).tolist())
    )
    return [
        (part, block)
        for position in sorted(everything.by_document)
        for block in rendering.document_blocks(state, position, everything, style)
    ]


@dataclass(frozen=True, kw_only=True)
class _Draft:
    """A window joined and counted exactly, not yet described item by item: a refill weighs
    several and describes one (`_described`)."""

    blocks: list[_Placed]
    text: str
    tokens: int
    item_counts: list[int]
    offsets: list[int]
    prefix_tokens: int
    prefix_chars: int


def _counted(
    blocks: list[_Placed],
    counter: TokenCounter,
    *,
    prefix_blocks: int,
    tier: Overview | None = None,
    memo: CountMemo | None = None,
) -> _Draft:
    """Join and count exactly. The first `prefix_blocks` are query-independent: the overview
    `tier`, counted when it was built, or (no tier) the whole lossless window.

    The count is of the rendered text, taken in pieces cut at block boundaries: a block
    boundary is a blank line followed by `[` or `#`, where no tokenizer merges across, so the
    pieces' counts add up to the whole text's (the property tests check this against one
    count of the whole text). Counting the pieces in one batch uses both cores and gives each
    item its own count in the same pass.
    """
    texts = [block.text for _, block in blocks]
    # Every block starts a token (`layout.opens_block`); were one not to, it could merge
    # with the blank line before it, and the window would be counted whole.
    additive = adds_at_blocks(counter) and all(map(layout.starts_a_token, texts))
    if tier is None:  # lossless: the whole window is query-independent
        pieces = _pieces(texts)
        item_counts = counter.count_many(pieces)
        text, tokens = "".join(pieces), sum(item_counts)
        prefix_tokens, prefix_chars = tokens, len(text)
        offsets = _offsets(texts, 0)
    else:
        body = _pieces(texts[prefix_blocks:])
        placed = zip(blocks[prefix_blocks:], body, strict=True)
        body_pieces = [(p.state, b, piece) for (p, b), piece in placed]
        body_counts = piece_counts(counter, body_pieces, memo)
        item_counts = [*tier.block_tokens, *body_counts]
        prefix_tokens, prefix_chars = tier.tokens, len(tier.text)
        text = tier.text + "".join(body)
        tokens = prefix_tokens + sum(body_counts)
        # Alignment padding sits at the end of the prefix, after its last block.
        offsets = _offsets(texts[:prefix_blocks], 0) + _offsets(texts[prefix_blocks:], prefix_chars)
    if not additive:
        # The pieces' counts are each piece's alone: the window and its prefix are counted
        # whole, as the tokenizer reads them in the window.
        tokens = counter.count(text)
        prefix_tokens = tokens if tier is None else tokens_before(counter, text, prefix_chars)
    return _Draft(
        blocks=blocks,
        text=text,
        tokens=tokens,
        item_counts=item_counts,
        offsets=offsets,
        prefix_tokens=prefix_tokens,
        prefix_chars=prefix_chars,
    )


def _described(parts: Sequence[Part], request: PackRequest, draft: _Draft) -> Window:
    """The window of `draft`, with an item for every block but the headers."""
    shown = [
        (i, part, block) for i, (part, block) in enumerate(draft.blocks) if block.kind != "header"
    ]
    return replace(
        _empty(parts, request, None),
        text=draft.text,
        tokens=draft.tokens,
        items=tuple(
            window_item(part, block, draft.item_counts[i], draft.offsets[i])
            for i, part, block in shown
        ),
        cacheable_prefix_tokens=draft.prefix_tokens,
        cacheable_prefix_chars=draft.prefix_chars,
    )


def _pieces(texts: list[str]) -> list[str]:
    """Blocks with their separator: the rendered text is these pieces end to end."""
    return [text + layout.SEPARATOR for text in texts[:-1]] + texts[-1:]


def _offsets(texts: list[str], start: int) -> list[int]:
    """Where each block starts when `texts` are joined by the separator from char `start`."""
    offsets = []
    for text in texts:
        offsets.append(start)
        start += len(text) + len(layout.SEPARATOR)
    return offsets


def window_item(part: Part, block: Block, tokens: int, offset: int) -> WindowItem:
    has_span = block.char_start is not None and block.char_end is not None
    kind: Literal["chunk", "summary", "gap"] = (
        "chunk" if block.kind == "chunk" else "summary" if block.kind == "summary" else "gap"
    )
    # Built in one call: a window holds thousands of items at large budgets, and each
    # dataclasses.replace would cost about as much as the construction itself.
    return WindowItem(
        kind=kind,
        level=block.level,
        span=Span(start=block.char_start or 0, end=block.char_end or 0) if has_span else None,
        tokens=tokens,
        score=block.score,
        collection=part.state.name,
        text=block.text,
        offset=offset,
        document_range=block.documents,
        duplicates=_copies(part.state, block, kind),
        why="gap" if kind == "gap" else block.why,
        **_provenance(part.state, block, kind),
    )


def _copies(state: PackingState, block: Block, kind: str) -> tuple[str, ...]:
    """The ids of the documents that repeat the text of the item's document (`twins`)."""
    if kind == "gap" or block.document is None or not state.copies:
        return ()
    return state.copies.get(block.document, ())


def _provenance(state: PackingState, block: Block, kind: str) -> dict[str, Any]:
    """The item's document provenance: id, title, index, metadata, chunk ordinals (only the
    document id, None, for a block of no document)."""
    index = block.document
    if index is None:
        return {"document_id": None}
    view = state.documents[index]
    first = state.document_first_chunk[index]
    ordinal = block.first_chunk - first if block.first_chunk is not None else None
    last = block.last_chunk - first if block.last_chunk is not None else None
    return {
        "document_id": view.external_id,
        "title": view.title,
        "document_index": index,
        "ordinal": ordinal,
        "last_ordinal": last,
        "unit": view.chunk_units[ordinal] if kind == "chunk" and ordinal is not None else None,
        "metadata": view.metadata,
    }


def _empty(parts: Sequence[Part], request: PackRequest, reason: str | None) -> Window:
    return Window(
        text="",
        tokens=0,
        items=(),
        cacheable_prefix_tokens=0,
        cacheable_prefix_chars=0,
        index_version=max(part.state.version for part in parts),
        index_versions=tuple((part.state.name, part.state.version) for part in parts),
        budget=request.budget,
        tokenizer=request.tokenizer,
        query=request.query,
        reason=reason,
    )
