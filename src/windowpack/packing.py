"""Packing a window for one question (design §4, §5): score, allocate, lay out, count, cache.

Everything a pack needs that does not depend on the question — document texts and chunk
spans, the tree as arrays, token costs in the requested tokenizer — is loaded once per
(collection, index version, tokenizer) and shared by every request of the process; a new
version simply keys a new state. Finished windows are cached by (version, request).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from windowpack.budget import layout
from windowpack.budget.allocate import Corpus, Overheads, allocate, overview_cut
from windowpack.budget.layout import Block, DocumentView, NodeView
from windowpack.budget.tokens import TokenCounter, get_token_counter
from windowpack.errors import InvalidArgumentError
from windowpack.retrieval.fusion import z_score_fusion
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


@dataclass(frozen=True, kw_only=True)
class PackRequest:
    """Everything that determines a window (with the index version)."""

    query: str
    budget: int
    tokenizer: str = "o200k_base"
    overview_tokens: int | None = None
    align: bool = False


@dataclass(frozen=True, kw_only=True)
class PackingState:
    """A collection at one index version, as arrays, with costs in one tokenizer."""

    name: str
    version: int
    documents: list[DocumentView]
    document_first_chunk: list[int]
    chunk_ids: dict[int, int]
    node_ids: dict[int, int]
    nodes: list[NodeView]
    corpus: Corpus
    overheads: Overheads


def validate_pack(request: PackRequest) -> None:
    validate_search(request.query, 1)
    budget = request.budget
    if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_BUDGET:
        raise InvalidArgumentError(
            "budget", f"must be an integer from 1 to {MAX_BUDGET:,}, got {budget!r}"
        )
    if request.overview_tokens is not None and request.overview_tokens < 0:
        raise InvalidArgumentError("overview_tokens", "must be zero or more")


class Packer:
    """Per-store packing: shared states by (collection, version, tokenizer) and a window cache."""

    def __init__(self, sessions: sessionmaker[Session], *, cache_size: int = 256) -> None:
        self._sessions = sessions
        self._states: dict[tuple[int, int, str], PackingState] = {}
        self._windows: OrderedDict[tuple[Any, ...], Window] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self.cache_hits = 0

    def pack(
        self,
        collection_id: int,
        name: str,
        request: PackRequest,
        *,
        indexes: CollectionIndexes,
        query_vectors: QueryEmbeddingCache,
    ) -> Window:
        validate_pack(request)
        counter = get_token_counter(request.tokenizer)
        key = (collection_id, indexes.version, request)
        with self._lock:
            if key in self._windows:
                self._windows.move_to_end(key)
                self.cache_hits += 1
                return self._windows[key]
        state = self._state(collection_id, name, indexes.version, counter)
        scored = _scored(state, _scores(state, indexes, query_vectors, request.query))
        window = _pack(state, scored, request, counter)
        with self._lock:
            self._windows[key] = window
            while len(self._windows) > self._cache_size:
                self._windows.popitem(last=False)
        return window

    def _state(
        self, collection_id: int, name: str, version: int, counter: TokenCounter
    ) -> PackingState:
        key = (collection_id, version, counter.name)
        state = self._states.get(key)
        if state is None:
            state = load_state(self._sessions, collection_id, name, version, counter)
            with self._lock:
                # Older versions of this collection are no longer asked for.
                for old in [k for k in self._states if k[0] == collection_id and k[1] != version]:
                    del self._states[old]
                self._states[key] = state
        return state


def load_state(
    sessions: sessionmaker[Session],
    collection_id: int,
    name: str,
    version: int,
    counter: TokenCounter,
) -> PackingState:
    """Read a collection into arrays and count every chunk and node in `counter`."""
    with sessions() as session:
        rows = repository.list_documents(session, collection_id)
        chunks = {row.id: repository.chunk_rows(session, row.id) for row in rows}
        node_rows = repository.tree_nodes(session, collection_id)
        documents, first_chunk, chunk_ids = [], [], {}
        chunk_document: list[int] = []
        for position, row in enumerate(rows):
            first_chunk.append(len(chunk_document))
            for chunk in chunks[row.id]:
                chunk_ids[chunk.id] = len(chunk_document)
                chunk_document.append(position)
            texts = [chunk.text for chunk in chunks[row.id]]
            documents.append(
                DocumentView(
                    external_id=row.external_id,
                    title=row.title,
                    text=row.text,
                    chunk_starts=[c.char_start for c in chunks[row.id]],
                    chunk_ends=[c.char_end for c in chunks[row.id]],
                    chunk_units=[c.unit for c in chunks[row.id]],
                    chunk_tokens=counter.count_many(texts),
                    units=len(row.units or []),
                )
            )
        position_of = {row.id: position for position, row in enumerate(rows)}
    nodes, node_ids = _node_views(node_rows, position_of, first_chunk, documents)
    node_index = {row.id: i for i, row in enumerate(node_rows)}
    corpus = Corpus(
        chunk_document=np.asarray(chunk_document, dtype=np.int64),
        chunk_cost=np.asarray([t for d in documents for t in d.chunk_tokens], dtype=np.int64),
        chunk_score=np.zeros(len(chunk_document)),
        node_first=np.asarray([n.first_chunk for n in nodes], dtype=np.int64),
        node_last=np.asarray([n.last_chunk for n in nodes], dtype=np.int64),
        node_parent=np.asarray(
            [node_index.get(row.parent_id, -1) if row.parent_id else -1 for row in node_rows],
            dtype=np.int64,
        ),
        node_document=np.asarray([n.document for n in nodes], dtype=np.int64),
        node_cost=np.asarray(counter.count_many([n.text for n in nodes]), dtype=np.int64),
        node_score=np.zeros(len(nodes)),
    )
    return PackingState(
        name=name,
        version=version,
        documents=documents,
        document_first_chunk=first_chunk,
        chunk_ids=chunk_ids,
        node_ids=node_ids,
        nodes=nodes,
        corpus=corpus,
        overheads=layout.overheads(counter),
    )


def _node_views(
    rows: list[Any],
    position_of: dict[int, int],
    first_chunk: list[int],
    documents: list[DocumentView],
) -> tuple[list[NodeView], dict[int, int]]:
    views, ids = [], {}
    ends = [
        start + len(doc.chunk_starts) for start, doc in zip(first_chunk, documents, strict=True)
    ]
    for index, row in enumerate(rows):
        ids[row.id] = index
        if row.document_id is not None:
            position = position_of[row.document_id]
            first, last = (
                first_chunk[position] + row.leaf_start,
                first_chunk[position] + row.leaf_end,
            )
            first_document, last_document = position, position + 1
        else:
            first_document, last_document = row.leaf_start, row.leaf_end
            first, last = first_chunk[first_document], ends[last_document - 1]
            position = -1
        views.append(
            NodeView(
                text=row.text,
                level=row.level,
                document=position,
                first_chunk=first,
                last_chunk=last,
                first_document=first_document,
                last_document=last_document,
            )
        )
    return views, ids


def _scores(
    state: PackingState,
    indexes: CollectionIndexes,
    query_vectors: QueryEmbeddingCache,
    query: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Fused relevance of every chunk and node; units neither retriever proposed get the floor."""
    units = state.corpus.chunks + len(state.nodes)
    candidates = max(1, min(units, 4096))
    dense = indexes.dense.search(query_vectors.get(query), candidates)
    lexical = indexes.lexical.search(query, candidates)
    fused = z_score_fusion([dense, lexical])
    floor = min((score for _, score in fused), default=0.0) - 1.0
    chunk_score = np.full(state.corpus.chunks, floor)
    node_score = np.full(len(state.nodes), floor)
    for index_id, score in fused:
        if index_id >= NODE_ID_OFFSET:
            node = state.node_ids.get(index_id - NODE_ID_OFFSET)
            if node is not None:
                node_score[node] = score
        elif (chunk := state.chunk_ids.get(index_id)) is not None:
            chunk_score[chunk] = score
    return chunk_score, _with_best_evidence_beneath(state, chunk_score, node_score)


def _with_best_evidence_beneath(
    state: PackingState, chunk_score: np.ndarray, node_score: np.ndarray
) -> np.ndarray:
    """A summary is as relevant as the best chunk it stands for, or its own score if higher."""
    firsts, lasts = state.corpus.node_first.tolist(), state.corpus.node_last.tolist()
    best = np.array([chunk_score[a:b].max() for a, b in zip(firsts, lasts, strict=True)])
    return np.maximum(node_score, best) if len(best) else node_score


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
    )


def _pack(
    state: PackingState, corpus: Corpus, request: PackRequest, counter: TokenCounter
) -> Window:
    budget = request.budget
    allocation = allocate(corpus, budget, state.overheads)
    if allocation.lossless:
        blocks = _lossless_blocks(state)
        text = layout.join_blocks(blocks)
        tokens = layout.count_exactly(counter, text)
        if tokens <= budget:
            return _window(
                state, request, blocks, text, tokens, prefix_blocks=len(blocks), counter=counter
            )
    overview = _overview(state, corpus, request, counter)
    prefix = layout.join_blocks(overview) + layout.SEPARATOR if overview else ""
    prefix = _aligned(prefix, counter, budget) if request.align and prefix else prefix
    prefix_tokens = layout.count_exactly(counter, prefix) if prefix else 0
    room = budget - prefix_tokens
    for _ in range(_MAX_TRIMS):
        allocation = allocate(corpus, room, state.overheads)
        blocks = layout.render_documents(
            state.documents,
            state.document_first_chunk,
            allocation.chunks.tolist(),
            allocation.nodes.tolist(),
            state.nodes,
            corpus.chunk_score.tolist(),
            corpus.node_score.tolist(),
        )
        text = prefix + layout.join_blocks(blocks)
        tokens = layout.count_exactly(counter, text)
        if tokens <= budget:
            return _window(state, request, overview + blocks, text, tokens, len(overview), counter,
                           prefix_tokens=prefix_tokens)  # fmt: skip
        room -= tokens - budget + 8  # the estimate was short: ask for less and redo
    return _empty(state, request, "the budget is too small for any part of this collection")


def _overview(
    state: PackingState, corpus: Corpus, request: PackRequest, counter: TokenCounter
) -> list[Block]:
    share = request.overview_tokens
    if share is None:
        share = min(request.budget // _OVERVIEW_SHARE, _OVERVIEW_CAP)
    cut = overview_cut(corpus, share, state.overheads) if share > 0 else []
    if not cut:
        return []
    title = Block(
        kind="header", text=f"# Overview of {state.name}: {len(state.documents)} documents"
    )
    blocks = [title]
    for node_index in cut:
        node = state.nodes[node_index]
        offset = state.document_first_chunk[node.first_document]
        view = state.documents[node.first_document]
        blocks.append(layout.summary_block(view, node.first_document, node, offset, 0.0))
    return blocks


def _aligned(prefix: str, counter: TokenCounter, budget: int) -> str:
    """Pad the stable tier so that it ends on a multiple of 256 tokens, if the budget allows."""
    tokens = counter.count(prefix)
    target = -(-tokens // ALIGNMENT) * ALIGNMENT
    if target >= budget:
        return prefix
    padding = ""
    while counter.count(prefix + padding) < target:
        padding += " ."
    if counter.count(prefix + padding) != target:
        return prefix
    return prefix + padding


def _lossless_blocks(state: PackingState) -> list[Block]:
    blocks: list[Block] = []
    scores = [0.0] * state.corpus.chunks
    for position, view in enumerate(state.documents):
        offset = state.document_first_chunk[position]
        chunks = set(range(offset, offset + len(view.chunk_starts)))
        total = len(state.documents)
        blocks.extend(
            layout.document_blocks(view, position, total, offset, chunks, {}, [], scores, [])
        )
    return blocks


def _window(
    state: PackingState,
    request: PackRequest,
    blocks: list[Block],
    text: str,
    tokens: int,
    prefix_blocks: int,
    counter: TokenCounter,
    *,
    prefix_tokens: int | None = None,
) -> Window:
    if prefix_tokens is None:
        prefix_tokens = tokens if prefix_blocks == len(blocks) else 0
    if prefix_tokens == tokens:
        prefix_chars = len(text)
    elif prefix_blocks:
        prefix_chars = len(layout.join_blocks(blocks[:prefix_blocks]) + layout.SEPARATOR)
    else:
        prefix_chars = 0
    return Window(
        text=text,
        tokens=tokens,
        items=tuple(_item(state, block, counter) for block in blocks if block.kind != "header"),
        cacheable_prefix_tokens=prefix_tokens,
        cacheable_prefix_chars=prefix_chars,
        index_version=state.version,
        budget=request.budget,
        tokenizer=request.tokenizer,
        query=request.query,
    )


def _item(state: PackingState, block: Block, counter: TokenCounter) -> WindowItem:
    document = state.documents[block.document].external_id if block.document is not None else None
    has_span = block.char_start is not None and block.char_end is not None
    kind: Literal["chunk", "summary", "gap"] = (
        "chunk" if block.kind == "chunk" else "summary" if block.kind == "summary" else "gap"
    )
    return WindowItem(
        kind=kind,
        document_id=document,
        level=block.level,
        span=Span(start=block.char_start or 0, end=block.char_end or 0) if has_span else None,
        tokens=counter.count(block.text),
        score=block.score,
    )


def _empty(state: PackingState, request: PackRequest, reason: str) -> Window:
    return Window(
        text="",
        tokens=0,
        items=(),
        cacheable_prefix_tokens=0,
        cacheable_prefix_chars=0,
        index_version=state.version,
        budget=request.budget,
        tokenizer=request.tokenizer,
        query=request.query,
        reason=reason,
    )
