"""Reading a collection at one index version from the database into a `PackingState`."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from windowpack.pack.layout import DocumentView, NodeView
from windowpack.pack.state import PackingState, state_from_views
from windowpack.retrieval.sections import section_paths
from windowpack.storage import repository
from windowpack.text.tokens import TokenCounter
from windowpack.types import Span, copied

# What a window calls the units of each kind of document in its passage headers.
_UNIT_NAMES = {"conversation": "turn", "records": "record", "markdown": "section"}


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
            documents.append(_document_view(row, spans))
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


def _document_view(row: Any, spans: list[Any]) -> DocumentView:
    """A document row and its chunk spans; chunk tokens are counted later, all in one batch."""
    chunks = {
        "chunk_starts": [c.char_start for c in spans],
        "chunk_ends": [c.char_end for c in spans],
        "chunk_units": [c.unit for c in spans],
    }
    units = {"units": len(row.units or []), "unit_name": _UNIT_NAMES.get(row.kind, "part")}
    sections = [Span(start=start, end=end) for start, end in row.units or []]
    titles = section_paths(row.external_id, row.text, sections) if row.kind == "markdown" else []
    return copied(
        DocumentView,
        row,
        **chunks,
        **units,
        unit_titles=titles,
        chunk_tokens=[],
        metadata=dict(row.meta),
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
        chunks = {"first_chunk": first, "last_chunk": last}
        covered = {"first_document": first_document, "last_document": last_document}
        views.append(copied(NodeView, row, document=position, **chunks, **covered))
    return views, ids
