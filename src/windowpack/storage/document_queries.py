"""Document rows: look them up, list, count and delete them, and what a pack reads of them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from windowpack.storage.chunk_queries import chunk_ids_of_documents
from windowpack.storage.query_helpers import batches, rows_by_id
from windowpack.storage.schema import ChunkRow, DocumentRow, TreeNodeRow
from windowpack.storage.tree_queries import node_ids_of_documents


def documents_by_external_id(
    session: Session, collection_id: int, external_ids: Iterable[str]
) -> dict[str, DocumentRow]:
    found: dict[str, DocumentRow] = {}
    for batch in batches(list(external_ids)):
        rows = session.scalars(
            select(DocumentRow).where(
                DocumentRow.collection_id == collection_id, DocumentRow.external_id.in_(batch)
            )
        )
        found.update({row.external_id: row for row in rows})
    return found


def list_documents(
    session: Session, collection_id: int, *, offset: int = 0, limit: int | None = None
) -> list[DocumentRow]:
    query = (
        select(DocumentRow)
        .where(DocumentRow.collection_id == collection_id)
        .order_by(DocumentRow.position)
        .offset(offset)
    )
    if limit is not None:
        query = query.limit(limit)
    return list(session.scalars(query))


def count_documents(session: Session, collection_id: int) -> int:
    total = session.scalar(
        select(func.count())
        .select_from(DocumentRow)
        .where(DocumentRow.collection_id == collection_id)
    )
    return int(total or 0)


def document_metadata(
    session: Session, collection_id: int, external_ids: Sequence[str] | None = None
) -> list[tuple[int, str, dict[str, Any]]]:
    """(row id, external id, metadata) of the collection's documents, without their texts:
    all of them in collection order, or those with these external ids (in batches)."""
    columns = select(
        DocumentRow.id, DocumentRow.external_id, DocumentRow.meta, DocumentRow.position
    )
    query = columns.where(DocumentRow.collection_id == collection_id)
    if external_ids is None:
        rows = list(session.execute(query).all())
    else:
        rows = []
        for batch in batches(list(external_ids)):
            rows += session.execute(query.where(DocumentRow.external_id.in_(batch))).all()
    rows.sort(key=lambda row: row[3])
    return [(row[0], row[1], dict(row[2] or {})) for row in rows]


def delete_documents(session: Session, document_ids: Sequence[int]) -> tuple[list[int], list[int]]:
    """Delete these documents with their chunks and summary nodes, in batches; returns the
    removed chunk ids and node ids (for the indexes)."""
    chunk_ids = chunk_ids_of_documents(session, document_ids)
    node_ids = node_ids_of_documents(session, document_ids)
    for batch in batches(list(document_ids)):
        session.execute(delete(TreeNodeRow).where(TreeNodeRow.document_id.in_(batch)))
        session.execute(delete(ChunkRow).where(ChunkRow.document_id.in_(batch)))
        session.execute(delete(DocumentRow).where(DocumentRow.id.in_(batch)))
    return chunk_ids, node_ids


def documents_for_pack(session: Session, collection_id: int, *, texts: bool = True) -> list[Any]:
    """`list_documents`' order and what a packing state needs of each, as plain rows:
    (id, external_id, title, kind, text_hash, units, meta), and `text` unless `texts` is
    False (the state then reads them by id, `document_texts_by_id`, only where it lacks)."""
    columns = [
        DocumentRow.id,
        DocumentRow.external_id,
        DocumentRow.title,
        DocumentRow.kind,
        DocumentRow.text_hash,
        DocumentRow.units,
        DocumentRow.meta,
    ]
    if texts:
        columns.append(DocumentRow.text)
    return list(
        session.execute(
            select(*columns)
            .where(DocumentRow.collection_id == collection_id)
            .order_by(DocumentRow.position)
        ).all()
    )


def document_texts_by_id(
    session: Session, collection_id: int, document_ids: Sequence[int]
) -> dict[int, str]:
    """The texts of these documents of the collection, by id (a deleted one is absent)."""
    rows = rows_by_id(session, DocumentRow, (DocumentRow.text,), collection_id, document_ids)
    return {row[0]: row[1] for row in rows}


def documents_with_texts(
    session: Session, collection_id: int, text_hashes: Iterable[str]
) -> list[tuple[str, str]]:
    """(external id, text hash) of the collection's documents whose text has one of these
    hashes, in collection order."""
    rows: list[tuple[int, str, str]] = []
    for batch in batches(sorted(set(text_hashes))):
        query = select(DocumentRow.position, DocumentRow.external_id, DocumentRow.text_hash)
        where = query.where(
            DocumentRow.collection_id == collection_id, DocumentRow.text_hash.in_(batch)
        )
        rows += [(row[0], row[1], row[2]) for row in session.execute(where)]
    return [(external_id, text_hash) for _, external_id, text_hash in sorted(rows)]


def texts_and_units(
    session: Session, document_ids: Sequence[int]
) -> dict[int, tuple[str, list[list[int]]]]:
    """The text and units (`[start, end]` pairs, [] for none) of these documents, by id (a
    deleted one is absent): what a section's heading path is read from."""
    found: dict[int, tuple[str, list[list[int]]]] = {}
    for batch in batches(list(document_ids)):
        query = select(DocumentRow.id, DocumentRow.text, DocumentRow.units)
        for row in session.execute(query.where(DocumentRow.id.in_(batch))):
            found[row[0]] = (row[1], row[2] or [])
    return found


def document_ids(session: Session, collection_id: int) -> list[int]:
    """The collection's document ids in collection order."""
    query = select(DocumentRow.id).where(DocumentRow.collection_id == collection_id)
    return list(session.scalars(query.order_by(DocumentRow.position)))
