"""The query-independent tier that opens a window (design §5): the collection overview.

It depends on the states packed and on the request's budget and alignment, never on the
question, so it is built once per such inputs and kept on the first state (whose version
keys it): every later pack at that budget reuses the blocks, the padded text and its exact
counts instead of cutting the tree, rendering the summaries and counting them again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from windowpack.pack import layout, rendering
from windowpack.pack.allocate import overview_cut
from windowpack.pack.layout import Block
from windowpack.pack.request import PackRequest
from windowpack.pack.state import PackingState
from windowpack.text import TokenCounter
from windowpack.types import HeaderStyle

ALIGNMENT = 256
# Tiers kept per state: one per budget (and alignment) asked for; requests mostly use a few.
_HELD = 32


@dataclass(frozen=True, kw_only=True)
class Overview:
    """The stable tier: its blocks (by the index of the state they came from), the prefix
    text (blocks joined, then the separator, padded when aligned; "" without blocks), its
    exact count, and each block's own count (the window's items)."""

    blocks: tuple[tuple[int, Block], ...]
    text: str
    tokens: int
    block_tokens: tuple[int, ...]


def overview(
    states: Sequence[PackingState],
    request: PackRequest,
    counter: TokenCounter,
    yielded: int,
) -> Overview:
    """The overview of `states` for `request`, leaving `yielded` tokens to the question's
    turns: built on first use, then taken from the first state's cache. Its size is the
    request's `overview_tokens`; by default none: an overview of the collection earns no
    recall on the development manuals (docs/evidence.md), so a window spends its budget on
    the question's evidence and holds an overview only when asked for one (or to reach a
    provider's cache minimum)."""
    share = request.overview_tokens or 0
    # A tier that must reach a provider's cache minimum is filled with summaries first, but
    # never at the cost of the turns the question needs.
    share = max(share, request.cache_minimum)
    share = min(share, request.budget - yielded) // len(states)
    # Alignment pads towards the budget, so only an aligned tier depends on the budget itself.
    aligned = (request.budget, request.cache_minimum) if request.pads else None
    others = tuple((s.name, s.version) for s in states[1:])
    key = (others, share, aligned, counter.name, request.headers)
    cache = states[0].overviews
    found = cache.get(key)
    if not isinstance(found, Overview):
        found = _built(states, share, request, counter)
        if len(cache) >= _HELD:
            cache.pop(next(iter(cache)), None)  # the oldest: dicts keep insertion order
        cache[key] = found
    return found


def _built(
    states: Sequence[PackingState], share: int, request: PackRequest, counter: TokenCounter
) -> Overview:
    blocks = tuple(
        (position, block)
        for position, state in enumerate(states)
        for block in _tier(state, share, request.headers)
    )
    if not blocks:
        return Overview(blocks=(), text="", tokens=0, block_tokens=())
    texts = [block.text for _, block in blocks]
    prefix = layout.join_blocks([block for _, block in blocks]) + layout.SEPARATOR
    if request.pads:
        prefix = _aligned(prefix, counter, request.budget, request.cache_minimum)
    counts = counter.count_many([prefix, *texts])
    return Overview(blocks=blocks, text=prefix, tokens=counts[0], block_tokens=tuple(counts[1:]))


def _tier(state: PackingState, share: int, style: HeaderStyle) -> list[Block]:
    """One collection's tier: the finest top cut of its tree that fits `share` (the cut reads
    no score, so the state's unscored corpus gives the same cut as any scored one), under a
    title (none in style "none")."""
    styled = state.styled(style)
    cut = overview_cut(styled.corpus, share, styled.overheads) if share > 0 else []
    if not cut:
        return []
    title = f"# Overview of {state.name}: {len(state.documents)} documents"
    blocks = [] if style == "none" else [Block(kind="header", text=title)]
    blocks.extend(
        rendering.summary_block(state, node, 0.0, style, listed=True, why="overview")
        for node in cut
    )
    return blocks


def _aligned(prefix: str, counter: TokenCounter, budget: int, minimum: int = 0) -> str:
    """Pad the stable tier so that it ends on a multiple of 256 tokens, and is at least
    `minimum` tokens long, if the budget allows.

    The padding goes before the tier's closing blank line, so the tier still ends at a
    boundary no tokenizer merges across.
    """
    body = prefix.removesuffix(layout.SEPARATOR)
    target = -(-max(counter.count(prefix), minimum) // ALIGNMENT) * ALIGNMENT
    if target >= budget:
        return prefix
    # " ." is about one token: start near the target and step, rather than count ~1K times.
    padding = " ." * max(0, target - counter.count(prefix) - 8)
    while counter.count(body + padding + layout.SEPARATOR) < target:
        padding += " ."
    padded = body + padding + layout.SEPARATOR
    return padded if counter.count(padded) == target else prefix
