"""Reading a collection at one index version from the database into a `PackingState`."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from windowpack.pack.layout import DocumentView, NodeView
from windowpack.pack.state import PackingState, state_from_views
from windowpack.storage import repository
from windowpack.text.tokens import TokenCounter


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
