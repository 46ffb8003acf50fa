"""A collection at one index version as arrays, with token costs in one tokenizer.

Loaded once per (collection, index version, tokenizer) and shared by every pack: document
texts and chunk spans for rendering, the summary tree as index arrays for the allocator.

Counting every chunk tile and node is most of a load. A new version of a collection mostly
repeats the previous one, so a load can be given the previous version's state and reuses its
counts for every text it already counted. The key is the text itself, not a row id: SQLite
hands a deleted row's id to the next insert, and a rebuilt tree reuses node ids for new
summaries, while a count is a pure function of (text, tokenizer).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from windowpack.budget import layout
from windowpack.budget.allocate import Corpus, Overheads
from windowpack.budget.layout import DocumentView, NodeView
from windowpack.storage import repository
from windowpack.text.tokens import TokenCounter


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
    chunk_keys: np.ndarray
    chunk_positions: np.ndarray
    node_keys: np.ndarray
    node_positions: np.ndarray
    tokenizer: str = ""
    """The counter's name: counts are reused only from a state in the same tokenizer."""


def load_state(
    sessions: sessionmaker[Session],
    collection_id: int,
    name: str,
    version: int,
    counter: TokenCounter,
    *,
    previous: PackingState | None = None,
) -> PackingState:
    """Read a collection into arrays and count every chunk and node in `counter`.

    `previous` (usually this collection's state at an earlier version) lends the counts of
    the texts it has already counted; the result is identical to a load without it.
    """
    with sessions() as session:
        rows = repository.list_documents(session, collection_id)
        chunks = repository.chunk_spans(session, collection_id)
        node_rows = repository.tree_nodes(session, collection_id)
        documents, first_chunk, chunk_ids = [], [], {}
        chunk_count = 0
        for row in rows:
            first_chunk.append(chunk_count)
            spans = chunks.get(row.id, [])
            for chunk in spans:
                chunk_ids[chunk.id] = chunk_count
                chunk_count += 1
            documents.append(
                DocumentView(
                    external_id=row.external_id,
                    title=row.title,
                    text=row.text,
                    chunk_starts=[c.char_start for c in spans],
                    chunk_ends=[c.char_end for c in spans],
                    chunk_units=[c.unit for c in spans],
                    chunk_tokens=[],  # counted in state_from_views, all in one batch
                    units=len(row.units or []),
                    metadata=dict(row.meta),
                )
            )
        position_of = {row.id: position for position, row in enumerate(rows)}
    nodes, node_ids = _node_views(node_rows, position_of, first_chunk, documents)
    node_index = {row.id: i for i, row in enumerate(node_rows)}
    parents = [node_index.get(row.parent_id, -1) if row.parent_id else -1 for row in node_rows]
    return state_from_views(
        name=name,
        version=version,
        documents=documents,
        nodes=nodes,
        node_parents=parents,
        counter=counter,
        chunk_ids=chunk_ids,
        node_ids=node_ids,
        previous=previous,
    )


def state_from_views(
    *,
    name: str,
    version: int,
    documents: list[DocumentView],
    counter: TokenCounter,
    nodes: list[NodeView] | None = None,
    node_parents: list[int] | None = None,
    chunk_ids: dict[int, int] | None = None,
    node_ids: dict[int, int] | None = None,
    previous: PackingState | None = None,
) -> PackingState:
    """A state from documents (and summary nodes) already in memory, costed in `counter`.

    `documents` need no `chunk_tokens` yet: every chunk is counted here, in one batch.
    `chunk_ids`/`node_ids` map index ids to positions, for scoring from the indexes; text
    packed from elsewhere (another retriever's nodes) has none. Texts that `previous` (a
    state in the same tokenizer) counted are not counted again.
    """
    nodes = nodes or []
    chunk_ids, node_ids = chunk_ids or {}, node_ids or {}
    first_chunk = [0]
    for view in documents:
        first_chunk.append(first_chunk[-1] + len(view.chunk_starts))
    first_chunk.pop()
    # One batched count of every tile (chunk plus the whitespace to the next one): the
    # allocator's cost, and what a gap marker reports as left out.
    known = _known_counts(previous, counter.name)
    tile_tokens, node_tokens = _counted(
        counter, known, [_tiles(documents), [n.text for n in nodes]]
    )
    documents = [
        replace(view, chunk_tokens=tile_tokens[first : first + len(view.chunk_starts)])
        for view, first in zip(documents, first_chunk, strict=True)
    ]
    chunk_document = [p for p, view in enumerate(documents) for _ in view.chunk_starts]
    corpus = Corpus(
        chunk_document=np.asarray(chunk_document, dtype=np.int64),
        chunk_cost=np.asarray(tile_tokens, dtype=np.int64),
        chunk_score=np.zeros(len(chunk_document)),
        node_first=np.asarray([n.first_chunk for n in nodes], dtype=np.int64),
        node_last=np.asarray([n.last_chunk for n in nodes], dtype=np.int64),
        node_parent=np.asarray(node_parents or [], dtype=np.int64),
        node_document=np.asarray([n.document for n in nodes], dtype=np.int64),
        node_cost=np.asarray(node_tokens, dtype=np.int64),
        node_score=np.zeros(len(nodes)),
        chunk_unit=np.asarray(
            [-1 if u is None else u for d in documents for u in d.chunk_units], dtype=np.int64
        ),
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
        chunk_keys=np.asarray(sorted(chunk_ids), dtype=np.int64),
        chunk_positions=np.asarray([chunk_ids[k] for k in sorted(chunk_ids)], dtype=np.int64),
        node_keys=np.asarray(sorted(node_ids), dtype=np.int64),
        node_positions=np.asarray([node_ids[k] for k in sorted(node_ids)], dtype=np.int64),
        tokenizer=counter.name,
    )


def _known_counts(previous: PackingState | None, tokenizer: str) -> dict[str, int]:
    """Every tile and node text `previous` counted, with its count, if in `tokenizer`."""
    if previous is None or previous.tokenizer != tokenizer:
        return {}
    known = dict(zip(_tiles(previous.documents), previous.corpus.chunk_cost.tolist(), strict=True))
    known.update(
        zip((n.text for n in previous.nodes), previous.corpus.node_cost.tolist(), strict=True)
    )
    return known


def _counted(
    counter: TokenCounter, known: dict[str, int], groups: list[list[str]]
) -> list[list[int]]:
    """Each group's counts: texts in `known` are looked up, the rest counted in one batch."""
    missing = list(dict.fromkeys(t for group in groups for t in group if t not in known))
    counts = dict(known)
    counts.update(zip(missing, counter.count_many(missing), strict=True))
    return [[counts[text] for text in group] for group in groups]


def _tiles(documents: list[DocumentView]) -> list[str]:
    """Each chunk with the whitespace up to the next one: a passage of consecutive chunks is
    their tiles, so the allocator's sums match what the layout renders."""
    tiles = []
    for view in documents:
        starts, ends = view.chunk_starts, view.chunk_ends
        for index, start in enumerate(starts):
            end = starts[index + 1] if index + 1 < len(starts) else ends[index]
            tiles.append(view.text[start:end])
    return tiles


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
