"""Session windows: follow-up questions whose windows extend the previous one byte for byte.

A session packs its first question as a window of `first_tokens` (half the budget by
default) that ends with a blank line, and each follow-up as that window plus a tier of the
chunks the new question needs that are not in it yet, at most `follow_up_tokens` (a
twentieth of the budget by default): ten questions fit one budget. An engine's prefix cache
(vLLM's APC, SGLang's RadixAttention, llama.cpp's slot) then reuses everything up to the new
tier, and a provider's cache does too at the breakpoints `Window.cache_plan` places at the
tiers' ends. When the budget has no room for another tier, or the collection changed, the
question is packed afresh and the session says why; the overview is the one an independent
pack at the full budget opens with, so even then a prefix cache reuses it.

What a session has shown is kept as a `SessionState`: the first question and, for each
follow-up, the chunks its tier added, at the collections' versions. Nothing else is needed to
render the previous window again byte for byte, so the state travels over REST as a signed
token (`service.session_tokens`) and any replica can pack the next question. Rendering a
state again stops, refused, as soon as it would pass the budget: a state this code made
never does, so its cost is bounded by the budget, not by the state.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from windowpack.errors import InvalidArgumentError
from windowpack.pack import rendering
from windowpack.pack.corpus import combined
from windowpack.pack.layout import SEPARATOR, Block
from windowpack.pack.piece_counts import adds_at_blocks, piece_counts, tokens_before
from windowpack.pack.request import PackRequest
from windowpack.pack.state import PackingState
from windowpack.pack.verbatim import verbatim_phase
from windowpack.pack.window import (
    Part,
    lossless_estimate,
    styled_overheads,
    styled_part,
    window_item,
    with_title,
)
from windowpack.prompt_cache import Tier
from windowpack.text import TokenCounter
from windowpack.types import HeaderStyle, Window, WindowItem

FIRST_SHARE = 2
"""The first window of a session takes 1/FIRST_SHARE of the budget by default."""
SESSION_OVERVIEW_SHARE = 8
"""A session's opening overview takes an eighth of its budget (at most
`SESSION_OVERVIEW_CAP` tokens): the prefix a provider's cache serves every follow-up."""
SESSION_OVERVIEW_CAP = 4096
FOLLOW_UP_SHARE = 20
"""Each follow-up adds at most 1/FOLLOW_UP_SHARE of the budget by default."""
_MAX_TRIMS = 8


@dataclass(frozen=True, kw_only=True)
class SessionPlan:
    """How a session spends its budget: `request` (the full budget, tokenizer, provider and
    evidence settings; its query is unused), the first window's tokens, each follow-up's."""

    request: PackRequest
    first_tokens: int
    follow_up_tokens: int

    @classmethod
    def of(
        cls,
        request: PackRequest,
        *,
        first_tokens: int | None = None,
        follow_up_tokens: int | None = None,
    ) -> SessionPlan:
        """The plan for `request`, with the default shares where a size is not given."""
        budget = request.budget
        first = budget // FIRST_SHARE if first_tokens is None else first_tokens
        follow = max(1, budget // FOLLOW_UP_SHARE) if follow_up_tokens is None else follow_up_tokens
        for name, value in (("first_tokens", first), ("follow_up_tokens", follow)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= budget:
                raise InvalidArgumentError(
                    name, f"must be an integer from 1 to the budget ({budget:,}), got {value!r}"
                )
        return cls(request=request, first_tokens=first, follow_up_tokens=follow)

    @property
    def key(self) -> tuple[object, ...]:
        """What a state must have been packed with to be extended under this plan."""
        r = self.request
        key = (r.budget, r.tokenizer, r.provider, r.overview_tokens, r.align, self.first_tokens,
               self.follow_up_tokens, r.headers)  # fmt: skip
        # A filtered session's windows hold other documents: its filter is part of the plan
        # (an unfiltered plan's key is what it was before filters, so its tokens still hold).
        return key if r.where is None else (*key, r.where.key)

    def first_request(self, query: str, budget: int) -> PackRequest:
        """The first window's request: `budget` tokens, with the overview an independent pack
        at the full budget opens with, so that a prefix cache reuses it across re-packs."""
        request = self.request
        overview = request.overview_tokens
        if overview is None:
            # A session's windows share their opening tier: the prefix a provider's cache
            # serves every follow-up, so a session keeps an eighth of its budget for it.
            overview = max(
                min(request.budget // SESSION_OVERVIEW_SHARE, SESSION_OVERVIEW_CAP),
                request.cache_minimum,
            )
        return replace(request, query=query, budget=budget, overview_tokens=overview)


@dataclass(frozen=True, kw_only=True)
class SessionState:
    """What a session has shown: enough to render its last window again byte for byte.

    `versions` are the collections' (name, version) it was packed at, `plan` the plan's key,
    `first_query` the question the first window was packed for, and `added` each follow-up's
    tier: by collection, in `versions` order, the chunk positions it added.
    """

    versions: tuple[tuple[str, int], ...]
    plan: tuple[object, ...]
    first_query: str
    added: tuple[tuple[tuple[int, ...], ...], ...] = ()


@dataclass(frozen=True, kw_only=True)
class SessionWindow:
    """One question's window in a session: `extends` when it starts with the previous
    window's text byte for byte; else `reason` says why it was packed afresh (None for the
    session's first question)."""

    window: Window
    state: SessionState
    extends: bool
    reason: str | None = None


@dataclass(frozen=True, kw_only=True)
class SessionSources:
    """What a session pack reads, at one version of each collection: the states, a packer of
    ordinary windows (the first window; None when a write moved a version meanwhile), the
    parts scored for a question, and the cache that keeps a session's windows by state
    (`recall`, `keep`), so that the next question does not render the last one again."""

    states: Sequence[PackingState]
    pack: Callable[[PackRequest], Window | None]
    scored: Callable[[PackRequest], Sequence[Part]]
    recall: Callable[[object], Window | None]
    keep: Callable[[object, Window], None]
    counter: TokenCounter

    @property
    def versions(self) -> tuple[tuple[str, int], ...]:
        """(name, version) of each collection read."""
        return tuple((state.name, state.version) for state in self.states)


def session_window(
    sources: SessionSources, plan: SessionPlan, query: str, state: SessionState | None
) -> SessionWindow | None:
    """The window for `query` after `state` (None: the session's first question), or None
    when a write moved a collection's version while it was read (the caller retries)."""
    reason = _why_not_extended(sources, plan, state)
    if reason is None and state is not None:
        previous = _rebuilt(sources, plan, state)
        if previous is None:
            return None
        room = plan.request.budget - previous.tokens
        if room < plan.follow_up_tokens:
            reason = (
                f"the window holds {previous.tokens:,} of {plan.request.budget:,} tokens, too "
                f"few left for a follow-up's {plan.follow_up_tokens:,}: packed afresh"
            )
        else:
            extended = _extended(sources, plan, query, state, previous)
            if extended is not None:
                return extended
            reason = (
                f"the question's best passage does not fit the {room:,} tokens left of "
                f"{plan.request.budget:,}: packed afresh"
            )
    first = _first(sources, plan, query)
    if first is None:
        return None
    fresh = SessionState(versions=sources.versions, plan=plan.key, first_query=query)
    sources.keep(fresh, first)
    return SessionWindow(window=first, state=fresh, extends=False, reason=reason)


def _why_not_extended(
    sources: SessionSources, plan: SessionPlan, state: SessionState | None
) -> str | None:
    if state is None:
        return None
    if [name for name, _ in state.versions] != [name for name, _ in sources.versions]:
        return "the session was packed over other collections: packed afresh"
    if state.plan != plan.key:
        return "the session's budget or settings changed: packed afresh"
    changed = [
        f"{name!r} (version {old} to {new})"
        for (name, old), (_, new) in zip(state.versions, sources.versions, strict=True)
        if old != new
    ]
    if changed:
        return f"{', '.join(changed)} changed since the last question: packed afresh"
    return None


def _first(sources: SessionSources, plan: SessionPlan, query: str) -> Window | None:
    """The session's first window: every chunk when the collection fits the budget, else
    `first_tokens`, ending with a blank line so that a follow-up can be appended exactly."""
    parts = [Part(state=state, corpus=state.corpus) for state in sources.states]
    budget = plan.request.budget
    fits = lossless_estimate(parts, plan.request.headers) <= budget
    target = budget if fits else plan.first_tokens
    for _ in range(_MAX_TRIMS):
        window = sources.pack(plan.first_request(query, target))
        if window is None:
            return None
        based = _as_base(window, sources.counter)
        if based.tokens <= budget:
            return replace(based, budget=budget)
        target -= based.tokens - budget
    raise AssertionError("a session's first window did not fit its budget")  # pragma: no cover


def _as_base(window: Window, counter: TokenCounter) -> Window:
    """`window` ending with the separator, as the first tier of a session."""
    if not window.items:
        return window
    last = window.items[-1]
    tail = window.text[last.offset :]
    before, after = counter.count_many([tail, tail + SEPARATOR])
    items = (*window.items[:-1], replace(last, tokens=last.tokens - before + after))
    text = window.text + SEPARATOR
    if adds_at_blocks(counter):
        tokens = ended = window.tokens - before + after
    else:
        tokens, ended = counter.count(text), tokens_before(counter, text, len(text))
    return replace(
        window,
        text=text,
        tokens=tokens,
        items=items,
        session_tiers=(Tier(end=len(text), tokens=ended),),
    )


def _rebuilt(sources: SessionSources, plan: SessionPlan, state: SessionState) -> Window | None:
    """The last window of `state`: kept since it was packed, or rendered again."""
    window = sources.recall(state)
    if window is not None:
        return window
    window = _first(sources, plan, state.first_query)
    budget = plan.request.budget
    for tier in state.added:
        if window is None:
            return None
        chosen = [np.asarray(chunks, dtype=np.int64) for chunks in tier]
        _check_chunks(sources.states, chosen)
        # Each chunk's own tokens, less one for a merge at its edge: a tier whose chunks
        # alone pass the room left was never packed here, and is refused before rendering.
        least = sum(
            int(state.corpus.chunk_cost[chunks].sum()) - len(chunks)
            for state, chunks in zip(sources.states, chosen, strict=True)
        )
        if least > budget - window.tokens:
            raise _over_budget(budget)
        window = _appended(sources, window, chosen, window.query, plan.request.headers)
        if window.tokens > budget:
            raise _over_budget(budget)
    if window is not None:
        sources.keep(state, window)
    return window


def _extended(
    sources: SessionSources,
    plan: SessionPlan,
    query: str,
    state: SessionState,
    previous: Window,
) -> SessionWindow | None:
    """`previous` and a tier of what `query` needs that it does not show yet (None when not
    even the question's best passage fits the room left)."""
    request = replace(plan.request, query=query)
    style = request.headers
    parts = [styled_part(part, style) for part in sources.scored(request)]
    shown = _shown(sources.states, previous)
    left = plan.request.budget - previous.tokens
    room = min(plan.follow_up_tokens, left)
    for _ in range(_MAX_TRIMS):
        chosen = _follow_up_chunks(parts, shown, room, left, plan.request.budget, style)
        if any(len(chunks) for chunks in chosen):
            chosen = _not_shown(sources.states, chosen, previous.text)
            if not any(len(chunks) for chunks in chosen):
                break  # what it needs is shown already, as another document's text
        if not any(len(chunks) for chunks in chosen):
            if sum(len(chunks) for chunks in shown) < sum(p.corpus.chunks for p in parts):
                return None
            break  # every chunk is shown already: nothing to add
        window = _appended(sources, previous, chosen, query, style, parts)
        if window.tokens <= plan.request.budget:
            added = tuple(tuple(int(c) for c in chunks.tolist()) for chunks in chosen)
            grown = replace(state, added=(*state.added, added))
            sources.keep(grown, window)
            return SessionWindow(window=window, state=grown, extends=True)
        left -= window.tokens - plan.request.budget + 8
        room = min(room, left)
    window = replace(previous, query=query)
    return SessionWindow(window=window, state=state, extends=True)


def _follow_up_chunks(
    parts: Sequence[Part],
    shown: Sequence[np.ndarray],
    room: int,
    left: int,
    budget: int,
    style: HeaderStyle,
) -> list[np.ndarray]:
    """By part, the chunks (sorted) the verbatim phase takes for the question within `room`
    tokens, leaving out those already shown; when not even the first unit fits `room`, the
    room doubles, up to the `left` tokens the window has, so that the question's best passage
    goes in (a follow-up's share can be smaller than one chunk and its headers)."""
    corpus = combined([p.corpus for p in parts], [len(p.state.documents) for p in parts])
    starts = np.cumsum([0, *(p.corpus.chunks for p in parts)])
    mask = np.zeros(corpus.chunks, dtype=bool)
    for start, chunks in zip(starts, shown, strict=False):
        mask[start + chunks] = True
    pins = [int(start) + pin for part, start in zip(parts, starts, strict=False)
            for pin in part.focus.pins]  # fmt: skip
    picked = np.zeros(0, dtype=np.int64)
    while room > 0:
        chosen, _ = verbatim_phase(
            corpus, room, styled_overheads(parts, style), pins, share_of=budget, shown=mask
        )
        picked = np.flatnonzero(chosen)
        if len(picked) or room >= left:
            break
        room = min(2 * room, left)
    return [
        picked[(picked >= start) & (picked < end)] - start
        for start, end in itertools.pairwise(starts)
    ]


def _not_shown(
    states: Sequence[PackingState], chosen: Sequence[np.ndarray], text: str
) -> list[np.ndarray]:
    """`chosen` (by collection) without the chunks whose text (or unit's) the window `text`
    shows already: a repeat of another document's, which the window left out
    (`rendering.once_each`)."""
    kept = []
    for state, chunks in zip(states, chosen, strict=True):
        firsts = state.document_first_chunk
        keep = []
        for index in chunks.tolist():
            position = bisect.bisect_right(firsts, index) - 1
            view = state.documents[position]
            keep.append(rendering.repeat_key(view, index - firsts[position]) not in text)
        kept.append(chunks[np.asarray(keep, dtype=bool)] if len(chunks) else chunks)
    return kept


def _shown(states: Sequence[PackingState], window: Window) -> list[np.ndarray]:
    """By collection, the chunk positions `window` shows verbatim (whole or in part)."""
    position = {state.name: i for i, state in enumerate(states)}
    shown: list[list[int]] = [[] for _ in states]
    for item in window.items:
        if item.kind != "chunk" or item.document_index is None or item.ordinal is None:
            continue
        index = position[item.collection or states[0].name]
        first = states[index].document_first_chunk[item.document_index]
        last = item.last_ordinal if item.last_ordinal is not None else item.ordinal
        shown[index].extend(range(first + item.ordinal, first + last + 1))
    return [np.asarray(sorted(set(chunks)), dtype=np.int64) for chunks in shown]


def _appended(
    sources: SessionSources,
    previous: Window,
    chosen: Sequence[np.ndarray],
    query: str,
    style: HeaderStyle,
    parts: Sequence[Part] | None = None,
) -> Window:
    """`previous` with a tier of the `chosen` chunks (by collection) appended."""
    if parts is None:
        parts = [Part(state=state, corpus=state.corpus) for state in sources.states]
    placed: list[tuple[Part, Block]] = []
    for part, chunks in zip(parts, chosen, strict=True):
        if not len(chunks):
            continue
        # No labels, no reasons: a tier must render the same when the state is rebuilt, with
        # no question.
        selection = rendering.choose(part.state, chunks.tolist(), reason="follow_up")
        blocks = [
            (part, block)
            for position in sorted(selection.by_document)
            for block in rendering.document_blocks(part.state, position, selection, style)
            if block.kind != "gap"
        ]
        placed.extend(with_title(parts, part, blocks, style))
    if not placed:
        return replace(previous, query=query)
    pieces = [block.text + SEPARATOR for _, block in placed]
    counts = piece_counts(
        sources.counter,
        [(part.state, block, piece) for (part, block), piece in zip(placed, pieces, strict=True)],
    )
    offset = len(previous.text)
    items: list[WindowItem] = []
    for (part, block), piece, count in zip(placed, pieces, counts, strict=True):
        if block.kind != "header":
            items.append(window_item(part, block, count, offset))
        offset += len(piece)
    text = previous.text + "".join(pieces)
    if adds_at_blocks(sources.counter):
        tokens = ended = previous.tokens + sum(counts)
    else:
        counter = sources.counter
        tokens, ended = counter.count(text), tokens_before(counter, text, len(text))
    return replace(
        previous,
        text=text,
        tokens=tokens,
        items=(*previous.items, *items),
        query=query,
        session_tiers=(*previous.session_tiers, Tier(end=len(text), tokens=ended)),
    )


def _over_budget(budget: int) -> InvalidArgumentError:
    return InvalidArgumentError(
        "session", f"its follow-ups pass the budget of {budget:,} tokens: not a state packed here"
    )


def _check_chunks(states: Sequence[PackingState], chosen: Sequence[np.ndarray]) -> None:
    """A state token names chunks of these versions only: anything else is not ours."""
    if len(chosen) != len(states) or any(
        len(chunks) and (chunks.min() < 0 or chunks.max() >= state.corpus.chunks)
        for state, chunks in zip(states, chosen, strict=False)
    ):
        raise InvalidArgumentError("session", "names chunks these collections do not have")
