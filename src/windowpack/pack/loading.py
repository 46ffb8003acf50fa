"""Reading a collection at one index version from the database into a `PackingState`."""

from __future__ import annotations

import itertools
from array import array
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy.orm import Session, sessionmaker

from windowpack.documents import heading_trail, parse_heading, section_paths
from windowpack.pack.document_texts import DocumentTexts, StoredText
from windowpack.pack.layout import DocumentView, NodeView
from windowpack.pack.state import PackingState, state_from_views
from windowpack.pack.token_counts import SavedCounts
from windowpack.storage import repository
from windowpack.text import TokenCounter
from windowpack.types import Span, unit_name


def load_state(
    sessions: sessionmaker[Session],
    collection_id: int,
    name: str,
    version: int,
    counter: TokenCounter,
    *,
    previous: PackingState | None = None,
    saved: SavedCounts | None = None,
    texts: DocumentTexts | None = None,
) -> PackingState:
    """Read a collection into arrays and count every chunk and node in `counter`.

    `previous` (usually this collection's state at an earlier version) lends the counts of
    the texts it has already counted, and `saved` (the counts a load saved on disk, which a
    restarted process has) those of the texts it holds; the result is identical to a load
    without them. With `texts` the state holds no document text: each is read from its file
    there when used (the files a collection lacks are written first); without, texts are
    held in memory.
    """
    with sessions() as session:
        rows = repository.documents_for_pack(session, collection_id, texts=texts is None)
        spans = _span_table(repository.chunk_span_rows(session, collection_id))
        node_rows = repository.tree_nodes_for_pack(session, collection_id)
    # The chunks of each document: a run of the table (sorted by document id, then ordinal).
    document_ids = np.asarray([row.id for row in rows], dtype=np.int64)
    runs_start = np.searchsorted(spans[:, 1], document_ids, side="left")
    runs_end = np.searchsorted(spans[:, 1], document_ids, side="right")
    sizes = runs_end - runs_start
    first_chunk = (np.cumsum(sizes) - sizes).tolist()
    order = np.concatenate(
        [np.arange(start, end) for start, end in zip(runs_start, runs_end, strict=True)]
        or [np.zeros(0, dtype=np.int64)]
    )
    chunk_ids = dict(zip(spans[order, 0].tolist(), range(len(order)), strict=True))
    if texts is not None:
        texts.ensure([(row.id, row.text_hash) for row in rows])
    documents = [
        _document_view(row, spans[start:end], _body(row, texts))
        for row, start, end in zip(rows, runs_start.tolist(), runs_end.tolist(), strict=True)
    ]
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
        saved=saved,
    )


def _span_table(rows: list[tuple[int, ...]]) -> npt.NDArray[np.int64]:
    """The chunk span rows as an (n, 5) array: (id, document_id, char_start, char_end, unit)."""
    # fromiter over the flattened rows: asarray of ~70K row objects took most of a second.
    flat = itertools.chain.from_iterable(rows)
    return np.fromiter(flat, dtype=np.int64, count=5 * len(rows)).reshape(-1, 5)


def _body(row: Any, texts: DocumentTexts | None) -> str | StoredText:
    return row.text if texts is None else StoredText(texts, row.text_hash, row.id)


def _document_view(row: Any, spans: npt.NDArray[np.int64], body: str | StoredText) -> DocumentView:
    """A document row and its chunk spans; chunk tokens are counted later, all in one batch."""
    sections = [Span(start=start, end=end) for start, end in row.units or []]
    text = (body if isinstance(body, str) else body.read()) if row.kind == "markdown" else ""
    titles = section_paths(row.external_id, text, sections) if row.kind == "markdown" else []
    trails = heading_trail(text, sections) if row.kind == "markdown" else []
    headed = [_starts_with_heading(text, section) for section in sections] if trails else []
    # Packed arrays, not lists: a list holds a 32-byte int object for each of a 100M-token
    # collection's 650K chunk starts and ends (array('q'): 8 bytes, Python ints on reading).
    return DocumentView(
        external_id=row.external_id,
        title=row.title,
        body=body,
        chunk_starts=_packed(spans[:, 2]),
        chunk_ends=_packed(spans[:, 3]),
        chunk_units=[None if unit < 0 else unit for unit in spans[:, 4].tolist()],
        chunk_tokens=[],
        units=len(row.units or []),
        unit_name=unit_name(row.kind),
        unit_titles=titles,
        unit_trails=trails,
        unit_headed=headed,
        metadata=dict(row.meta),
        text_hash=row.text_hash,
    )


def _starts_with_heading(text: str, section: Span) -> bool:
    """Whether a section's first line is a heading (the last of its trail is its own)."""
    line_end = text.find("\n", section.start, section.end)
    return (
        parse_heading(text[section.start : section.end if line_end < 0 else line_end]) is not None
    )


def _packed(values: npt.NDArray[np.int64]) -> array[int]:
    return array("q", np.ascontiguousarray(values, dtype=np.int64).tobytes())


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
        # Built directly: `copied` reflects over the fields of each of ~100K nodes at 100M.
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
