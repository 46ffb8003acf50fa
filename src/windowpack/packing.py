"""Packing a window for one question (design §4, §5): score, allocate, lay out, count, cache.

Everything a pack needs that does not depend on the question — document texts and chunk
spans, the tree as arrays, token costs in the requested tokenizer — is loaded once per
(collection, index version, tokenizer) and shared by every request of the process; a new
version simply keys a new state. Finished windows are cached by (version, request).
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from windowpack.budget import layout
from windowpack.budget.allocate import Corpus, allocate, lossless_cost, overview_cut
from windowpack.budget.layout import Block
from windowpack.budget.state import PackingState, load_state
from windowpack.budget.tokens import TokenCounter, get_token_counter
from windowpack.errors import InvalidArgumentError, StorageError
from windowpack.retrieval.fusion import z_scores_fused
from windowpack.retrieval.indexes import NODE_ID_OFFSET, CollectionIndexes
from windowpack.retrieval.search import QueryEmbeddingCache, validate_search
from windowpack.storage import repository
from windowpack.types import Span, Window, WindowItem

MAX_BUDGET = 10_000_000
ALIGNMENT = 256
# The overview takes at most this share of the budget, and never more than the cap.
_OVERVIEW_SHARE = 8
_OVERVIEW_CAP = 4096
_MAX_TRIMS = 8
# Candidates each retriever proposes per collection, at least; the rest get the floor score.
_MIN_CANDIDATES = 512
# Packs tried before giving up on a collection that a stream of writes keeps changing.
_MAX_ATTEMPTS = 5

Source = tuple[int, str, CollectionIndexes]
"""A collection to pack from: its id, its name and its current indexes."""


@dataclass(frozen=True, kw_only=True)
class PackRequest:
    """Everything that determines a window (with the index version)."""

    query: str
    budget: int
    tokenizer: str = "o200k_base"
    overview_tokens: int | None = None
    align: bool | int = False
    """True: the stable tier ends on a multiple of 256 tokens; N: also at least N tokens."""


def validate_pack(request: PackRequest) -> None:
    validate_search(request.query, 1)
    validate_budget(request.budget)
    if request.overview_tokens is not None and request.overview_tokens < 0:
        raise InvalidArgumentError("overview_tokens", "must be zero or more")
    align = request.align
    if not isinstance(align, bool) and (not isinstance(align, int) or align < 1):
        raise InvalidArgumentError(
            "align", f"must be true, false or a positive number of tokens, got {align!r}"
        )


def _cache_minimum(request: PackRequest) -> int:
    """The stable tier's minimum length asked by `align=N`, if half the budget allows it:
    the rest stays for the question's material."""
    align = request.align
    if isinstance(align, bool) or 2 * align > request.budget:
        return 0
    return align


def validate_budget(budget: int) -> None:
    if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_BUDGET:
        raise InvalidArgumentError(
            "budget", f"must be an integer from 1 to {MAX_BUDGET:,}, got {budget!r}"
        )


def pack_state(
    state: PackingState, chunk_scores: np.ndarray, node_scores: np.ndarray, request: PackRequest
) -> Window:
    """Pack a state built in memory (`state_from_views`) with relevance the caller computed.

    The same allocation, layout and exact count as `Packer.pack`, for text that is not in a
    collection, such as another retriever's nodes. The query only labels the window here.
    """
    validate_budget(request.budget)
    counter = get_token_counter(request.tokenizer)
    part = _Part(state=state, corpus=_scored(state, (chunk_scores, node_scores)))
    return _pack([part], request, counter)


class Packer:
    """Per-store packing: shared states by (collection, version, tokenizer) and a window cache."""

    def __init__(self, sessions: sessionmaker[Session], *, cache_size: int = 256) -> None:
        self._sessions = sessions
        self._states: dict[tuple[int, int, str], PackingState] = {}
        self._windows: OrderedDict[tuple[Any, ...], Window] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._loading: dict[tuple[int, int, str], threading.Lock] = {}
        self.cache_hits = 0

    def pack(
        self,
        resolve_sources: Callable[[], Sequence[Source]],
        request: PackRequest,
        *,
        query_vectors: QueryEmbeddingCache,
        writes_paused: AbstractContextManager[object] | None = None,
    ) -> Window:
        """One window over one or more collections: (collection id, name, indexes) each.

        `resolve_sources` gives each collection's current indexes. It is called again when a
        write publishes a new version while this request reads the old one, so a window is
        always built from one version of each collection, never from a half-published one.
        `writes_paused` (the store's write lock) is held for a last attempt when writes keep
        landing during every load.
        """
        validate_pack(request)
        counter = get_token_counter(request.tokenizer)
        for _ in range(_MAX_ATTEMPTS):
            window = self._pack_at(resolve_sources(), request, counter, query_vectors)
            if window is not None:
                return window
        # Writes land faster than a state loads: load once more with writes held off (they
        # wait for this one load), so a stream of ingests cannot starve readers.
        with writes_paused or contextlib.nullcontext():
            window = self._pack_at(resolve_sources(), request, counter, query_vectors)
        if window is None:
            raise StorageError("the collection changed while writes were paused; retry")
        return window

    def _pack_at(
        self,
        sources: Sequence[Source],
        request: PackRequest,
        counter: TokenCounter,
        query_vectors: QueryEmbeddingCache,
    ) -> Window | None:
        key = (tuple((cid, indexes.version) for cid, _, indexes in sources), request)
        with self._lock:
            if key in self._windows:
                self._windows.move_to_end(key)
                self.cache_hits += 1
                return self._windows[key]
        states = []
        for collection_id, name, indexes in sources:
            state = self._state(collection_id, name, indexes.version, counter)
            if state is None:
                return None
            states.append((state, indexes))
        fused = _fused_scores(states, query_vectors, request.query, request.budget)
        parts = [
            _Part(state=state, corpus=_scored(state, _scores(state, fused))) for state, _ in states
        ]
        window = _pack(parts, request, counter)
        with self._lock:
            self._windows[key] = window
            while len(self._windows) > self._cache_size:
                self._windows.popitem(last=False)
        return window

    def _state(
        self, collection_id: int, name: str, version: int, counter: TokenCounter
    ) -> PackingState | None:
        """The shared state at `version`, or None when a write moved the database past it."""
        key = (collection_id, version, counter.name)
        state = self._states.get(key)
        if state is not None:
            return state
        with self._lock:
            gate = self._loading.setdefault(key, threading.Lock())
        # One request loads a new version's state; the others wait for it rather than each
        # reading and counting the whole collection at once.
        with gate:
            state = self._states.get(key) or self._load(key, name)
        with self._lock:
            self._loading.pop(key, None)
        return state

    def _load(self, key: tuple[int, int, str], name: str) -> PackingState | None:
        collection_id, version, tokenizer = key
        # Versions only grow, one per committed write: the same version before and after the
        # reads means every row read belongs to it.
        if self._version(collection_id) != version:
            return None
        # The latest state of this collection in this tokenizer lends its counts: only the
        # texts a write added are counted, so a new version loads in a fraction of the time.
        previous = self._latest(collection_id, tokenizer)
        try:
            state = load_state(
                self._sessions,
                collection_id,
                name,
                version,
                get_token_counter(tokenizer),
                previous=previous,
            )
        except Exception:
            # The reads are separate statements (SQLite gives them no common snapshot): a
            # write committed between two of them can leave rows that do not fit together.
            # That is a retry, not an error; with the version unchanged it is a real bug.
            if self._version(collection_id) != version:
                return None
            raise
        if self._version(collection_id) != version:
            return None
        with self._lock:
            # Older versions of this collection are no longer asked for. Those in other
            # tokenizers stay until their own next version replaces them: they lend it counts.
            for old in [k for k in self._states if k[0] == collection_id and k[1] != version]:
                if old[2] == tokenizer:
                    del self._states[old]
            self._states[key] = state
        return state

    def _latest(self, collection_id: int, tokenizer: str) -> PackingState | None:
        """The highest-version state held for this collection and tokenizer, if any."""
        with self._lock:
            held = [k for k in self._states if k[0] == collection_id and k[2] == tokenizer]
            return self._states[max(held)] if held else None

    def _version(self, collection_id: int) -> int:
        with self._sessions() as session:
            return repository.index_version(session, collection_id)


def _fused_scores(
    sources: Sequence[tuple[PackingState, CollectionIndexes]],
    query_vectors: QueryEmbeddingCache,
    query: str,
    budget: int,
) -> tuple[np.ndarray, np.ndarray]:
    """One fused ranking over every source, so that relevance is comparable between them.

    Cosine similarities from one embedder share a scale across collections, and so do BM25
    scores roughly; standardising per collection instead would promote the best of an
    irrelevant collection to the level of the best of a relevant one. Chunk and node ids are
    database keys, unique across the collections of a store.
    """
    dense, lexical = [], []
    vector = query_vectors.get(query)
    for state, indexes in sources:
        candidates = _candidates(state, budget)
        dense.append(indexes.dense.search(vector, candidates))
        lexical.append(indexes.lexical.search(query, candidates))
    return z_scores_fused([_merged(dense), _merged(lexical)])


def _candidates(state: PackingState, budget: int) -> int:
    """Enough candidates to rank about twice what the budget can hold, at least a few hundred."""
    units = state.corpus.chunks + len(state.nodes)
    mean_cost = max(1.0, float(state.corpus.chunk_cost.mean())) if state.corpus.chunks else 1.0
    return max(1, min(units, max(_MIN_CANDIDATES, int(2 * budget / mean_cost))))


def _merged(results: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    ids = np.concatenate([ids for ids, _ in results]).astype(np.int64)
    scores = np.concatenate([scores for _, scores in results]).astype(np.float32)
    return ids, scores


def _scores(
    state: PackingState, fused: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Each chunk's and node's fused relevance; units no retriever proposed get the floor."""
    ids, values = fused
    floor = (values.min() if len(values) else 0.0) - 1.0
    chunk_score = _lookup(
        state.chunk_keys, state.chunk_positions, ids, values, floor, state.corpus.chunks
    )
    node_ids = ids[ids >= NODE_ID_OFFSET] - NODE_ID_OFFSET
    node_values = values[ids >= NODE_ID_OFFSET]
    node_score = _lookup(
        state.node_keys, state.node_positions, node_ids, node_values, floor, len(state.nodes)
    )
    return chunk_score, _with_best_evidence_beneath(state, chunk_score, node_score)


def _lookup(
    keys: np.ndarray,
    positions: np.ndarray,
    ids: np.ndarray,
    values: np.ndarray,
    floor: float,
    size: int,
) -> np.ndarray:
    """Scatter (id, value) pairs into an array indexed by unit position, via sorted keys."""
    result = np.full(size, floor)
    if not len(keys) or not len(ids):
        return result
    slots = np.minimum(np.searchsorted(keys, ids), len(keys) - 1)
    found = keys[slots] == ids
    result[positions[slots[found]]] = values[found]
    return result


def _with_best_evidence_beneath(
    state: PackingState, chunk_score: np.ndarray, node_score: np.ndarray
) -> np.ndarray:
    """A summary is as relevant as the best chunk it stands for, or its own score if higher."""
    if not len(node_score):
        return node_score
    # reduceat over (first, last) pairs: the even results are the max over [first, last).
    padded = np.append(chunk_score, -np.inf)
    pairs = np.column_stack((state.corpus.node_first, state.corpus.node_last)).ravel()
    best = np.maximum.reduceat(padded, pairs)[::2]
    return np.asarray(np.maximum(node_score, best))


def _scored(state: PackingState, scores: tuple[np.ndarray, np.ndarray]) -> Corpus:
    corpus = state.corpus
    return Corpus(
        chunk_document=corpus.chunk_document,
        chunk_cost=corpus.chunk_cost,
        chunk_score=scores[0],
        node_first=corpus.node_first,
        node_last=corpus.node_last,
        node_parent=corpus.node_parent,
        node_document=corpus.node_document,
        node_cost=corpus.node_cost,
        node_score=scores[1],
        chunk_unit=corpus.chunk_unit,
    )


@dataclass(frozen=True, kw_only=True)
class _Part:
    """One collection's share of a pack: its state and its scored corpus."""

    state: PackingState
    corpus: Corpus


def _pack(parts: list[_Part], request: PackRequest, counter: TokenCounter) -> Window:
    budget = request.budget
    combined, offsets = _combined(parts)
    overheads = parts[0].state.overheads
    if not combined.chunks:
        names = ", ".join(repr(part.state.name) for part in parts)
        return _empty(parts, request, f"nothing to pack: no documents in {names} yet")
    if combined.chunks and lossless_cost(combined, overheads) <= budget:
        blocks = [block for part in parts for block in _with_title(parts, part, _lossless(part))]
        window = _window(parts, request, blocks, counter, prefix_blocks=len(blocks))
        if window.tokens <= budget:
            return window
    overview = [block for part in parts for block in _overview(part, request, len(parts))]
    prefix = layout.join_blocks([b for _, b in overview]) + layout.SEPARATOR if overview else ""
    minimum = _cache_minimum(request)
    prefix = _aligned(prefix, counter, budget, minimum) if request.align and prefix else prefix
    prefix_tokens = layout.count_exactly(counter, prefix) if prefix else 0
    room = budget - prefix_tokens
    for attempt in range(_MAX_TRIMS):
        allocation = allocate(combined, room, overheads)
        blocks = list(overview)
        for part, (chunk_offset, node_offset) in zip(parts, offsets, strict=True):
            chunks = allocation.chunks[
                (allocation.chunks >= chunk_offset)
                & (allocation.chunks < chunk_offset + part.corpus.chunks)
            ]
            nodes = allocation.nodes[
                (allocation.nodes >= node_offset)
                & (allocation.nodes < node_offset + len(part.state.nodes))
            ]
            rendered = _rendered(
                part, (chunks - chunk_offset).tolist(), (nodes - node_offset).tolist()
            )
            blocks.extend(_with_title(parts, part, rendered) if rendered else [])
        if not blocks:
            break  # not even one chunk or summary fits
        window = _window(
            parts, request, blocks, counter, prefix_blocks=len(overview), prefix=prefix
        )
        if window.tokens <= budget:
            return window
        # The estimate was short (rare: headers longer than measured): ask for less, by more
        # each time, and redo.
        room -= (window.tokens - budget) * (attempt + 2) + 16
    return _empty(
        parts, request, f"a budget of {budget} tokens is too small for any chunk or summary"
    )


def _combined(parts: list[_Part]) -> tuple[Corpus, list[tuple[int, int]]]:
    """One corpus over all parts (indices shifted), so the budget follows relevance."""
    if len(parts) == 1:
        return parts[0].corpus, [(0, 0)]
    offsets, chunk_offset, node_offset, document_offset = [], 0, 0, 0
    pieces: dict[str, list[np.ndarray]] = {}
    for part in parts:
        corpus = part.corpus
        offsets.append((chunk_offset, node_offset))
        shifted = {
            "chunk_document": corpus.chunk_document + document_offset,
            "chunk_cost": corpus.chunk_cost,
            "chunk_score": corpus.chunk_score,
            "chunk_unit": corpus.chunk_unit
            if corpus.chunk_unit is not None
            else np.full(corpus.chunks, -1),
            "node_first": corpus.node_first + chunk_offset,
            "node_last": corpus.node_last + chunk_offset,
            "node_parent": np.where(corpus.node_parent >= 0, corpus.node_parent + node_offset, -1),
            "node_document": np.where(
                corpus.node_document >= 0, corpus.node_document + document_offset, -1
            ),
            "node_cost": corpus.node_cost,
            "node_score": corpus.node_score,
        }
        for field, values in shifted.items():
            pieces.setdefault(field, []).append(np.asarray(values))
        chunk_offset += corpus.chunks
        node_offset += len(part.state.nodes)
        document_offset += len(part.state.documents)
    return Corpus(**{field: np.concatenate(values) for field, values in pieces.items()}), offsets


def _units(corpus: Corpus) -> np.ndarray:
    return corpus.chunk_unit if corpus.chunk_unit is not None else np.full(corpus.chunks, -1)


def _rendered(part: _Part, chunks: list[int], nodes: list[int]) -> list[tuple[_Part, Block]]:
    state, corpus = part.state, part.corpus
    blocks = layout.render_documents(
        state.documents,
        state.document_first_chunk,
        chunks,
        nodes,
        state.nodes,
        corpus.chunk_score.tolist(),
        corpus.node_score.tolist(),
    )
    if all(block.kind == "gap" for block in blocks):
        return []  # nothing of this collection made it in
    return [(part, block) for block in blocks]


def _with_title(
    parts: list[_Part], part: _Part, blocks: list[tuple[_Part, Block]]
) -> list[tuple[_Part, Block]]:
    if len(parts) == 1:
        return blocks
    title = Block(kind="header", text=f"# Collection {part.state.name}")
    return [(part, title), *blocks]


def _overview(part: _Part, request: PackRequest, parts: int) -> list[tuple[_Part, Block]]:
    """The query-independent tier of one collection: the finest top cut that fits its share."""
    state = part.state
    share = request.overview_tokens
    if share is None:
        share = min(request.budget // _OVERVIEW_SHARE, _OVERVIEW_CAP)
    # A tier that must reach a provider's cache minimum is filled with summaries first.
    share = max(share, _cache_minimum(request)) // parts
    cut = overview_cut(part.corpus, share, state.overheads) if share > 0 else []
    if not cut:
        return []
    title = f"# Overview of {state.name}: {len(state.documents)} documents"
    blocks = [(part, Block(kind="header", text=title))]
    for node_index in cut:
        node = state.nodes[node_index]
        offset = state.document_first_chunk[node.first_document]
        view = state.documents[node.first_document]
        block = layout.summary_block(view, node.first_document, node, offset, 0.0)
        blocks.append((part, block))
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


def _lossless(part: _Part) -> list[tuple[_Part, Block]]:
    """Every chunk verbatim, in order: the window when the whole collection fits."""
    state = part.state
    blocks: list[tuple[_Part, Block]] = []
    scores = [0.0] * state.corpus.chunks
    for position, view in enumerate(state.documents):
        offset = state.document_first_chunk[position]
        chunks = set(range(offset, offset + len(view.chunk_starts)))
        total = len(state.documents)
        rendered = layout.document_blocks(view, position, total, offset, chunks, {}, [], scores, [])
        blocks.extend((part, block) for block in rendered)
    return blocks


def _window(
    parts: list[_Part],
    request: PackRequest,
    blocks: list[tuple[_Part, Block]],
    counter: TokenCounter,
    *,
    prefix_blocks: int,
    prefix: str | None = None,
) -> Window:
    """Join, count exactly, and describe. The first `prefix_blocks` are query-independent.

    The count is of the rendered text, taken in pieces cut at block boundaries: a block
    boundary is a blank line followed by `[` or `#`, where no tokenizer merges across, so the
    pieces' counts add up to the whole text's (the property tests check this against one
    count of the whole text). Counting the pieces in one batch uses both cores and gives each
    item its own count in the same pass.
    """
    texts = [block.text for _, block in blocks]
    if prefix is None:  # lossless: the whole window is query-independent
        pieces = _pieces(texts)
        item_counts = counter.count_many(pieces)
        text, tokens = "".join(pieces), sum(item_counts)
        prefix_tokens, prefix_chars = tokens, len(text)
        offsets = _offsets(texts, 0)
    else:
        body = _pieces(texts[prefix_blocks:])
        counts = counter.count_many([prefix, *body] if prefix else body)
        prefix_tokens = counts[0] if prefix else 0
        body_counts = counts[1:] if prefix else counts
        item_counts = counter.count_many(texts[:prefix_blocks]) + body_counts
        text, tokens = prefix + "".join(body), prefix_tokens + sum(body_counts)
        prefix_chars = len(prefix)
        # Alignment padding sits at the end of the prefix, after its last block.
        offsets = _offsets(texts[:prefix_blocks], 0) + _offsets(texts[prefix_blocks:], len(prefix))
    shown = [(i, part, block) for i, (part, block) in enumerate(blocks) if block.kind != "header"]
    return Window(
        text=text,
        tokens=tokens,
        items=tuple(_item(part, block, item_counts[i], offsets[i]) for i, part, block in shown),
        cacheable_prefix_tokens=prefix_tokens,
        cacheable_prefix_chars=prefix_chars,
        index_version=max(part.state.version for part in parts),
        index_versions=tuple((part.state.name, part.state.version) for part in parts),
        budget=request.budget,
        tokenizer=request.tokenizer,
        query=request.query,
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


def _item(part: _Part, block: Block, tokens: int, offset: int) -> WindowItem:
    state = part.state
    has_span = block.char_start is not None and block.char_end is not None
    kind: Literal["chunk", "summary", "gap"] = (
        "chunk" if block.kind == "chunk" else "summary" if block.kind == "summary" else "gap"
    )
    item = WindowItem(
        kind=kind,
        document_id=None,
        level=block.level,
        span=Span(start=block.char_start or 0, end=block.char_end or 0) if has_span else None,
        tokens=tokens,
        score=block.score,
        collection=state.name,
        text=block.text,
        offset=offset,
        document_range=block.documents,
    )
    if block.document is None:
        return item
    return _with_document(item, state, block, block.document)


def _with_document(item: WindowItem, state: PackingState, block: Block, index: int) -> WindowItem:
    """Add the item's document provenance: id, title, index, metadata, chunk ordinals."""
    view = state.documents[index]
    first = state.document_first_chunk[index]
    ordinal = block.first_chunk - first if block.first_chunk is not None else None
    last = block.last_chunk - first if block.last_chunk is not None else None
    return replace(
        item,
        document_id=view.external_id,
        title=view.title,
        document_index=index,
        ordinal=ordinal,
        last_ordinal=last,
        unit=view.chunk_units[ordinal] if item.kind == "chunk" and ordinal is not None else None,
        metadata=view.metadata,
    )


def _empty(parts: list[_Part], request: PackRequest, reason: str) -> Window:
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
