"""Chunk rows: by document, in collection order, and their spans as plain tuples."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from windowpack.storage.query_helpers import batches
from windowpack.storage.schema import ChunkRow, DocumentRow


def chunk_ids_of_documents(session: Session, document_ids: Sequence[int]) -> list[int]:
    """The chunk ids of these documents (in batches)."""
    found: list[int] = []
    for batch in batches(list(document_ids)):
        found += session.scalars(select(ChunkRow.id).where(ChunkRow.document_id.in_(batch)))
    return found


def chunk_rows(session: Session, document_id: int) -> list[ChunkRow]:
    return list(
        session.scalars(
            select(ChunkRow).where(ChunkRow.document_id == document_id).order_by(ChunkRow.ordinal)
        )
    )


def chunk_texts_and_ids(session: Session, collection_id: int) -> tuple[list[int], list[str]]:
    """Every chunk of a collection in (document position, ordinal) order."""
    rows = session.execute(
        select(ChunkRow.id, ChunkRow.text)
        .join(DocumentRow, ChunkRow.document_id == DocumentRow.id)
        .where(ChunkRow.collection_id == collection_id)
        .order_by(DocumentRow.position, ChunkRow.ordinal)
    ).all()
    return [row[0] for row in rows], [row[1] for row in rows]


def chunk_spans(session: Session, collection_id: int) -> dict[int, list[Any]]:
    """Every chunk's (id, document_id, char_start, char_end, unit), by document id, in ordinal
    order: one query, without the texts (the documents hold them)."""
    rows = session.execute(
        select(
            ChunkRow.id, ChunkRow.document_id, ChunkRow.char_start, ChunkRow.char_end, ChunkRow.unit
        )
        .where(ChunkRow.collection_id == collection_id)
        .order_by(ChunkRow.document_id, ChunkRow.ordinal)
    ).all()
    spans: dict[int, list[Any]] = {}
    for row in rows:
        spans.setdefault(row.document_id, []).append(row)
    return spans


def chunk_span_rows(session: Session, collection_id: int) -> list[tuple[int, ...]]:
    """`chunk_spans` as plain tuples (id, document_id, char_start, char_end, unit or -1), by
    document id and ordinal: a large collection's state load would build ~70K row objects
    where five numbers each do."""
    statement = (
        select(
            ChunkRow.id,
            ChunkRow.document_id,
            ChunkRow.char_start,
            ChunkRow.char_end,
            func.coalesce(ChunkRow.unit, -1),
        )
        .where(ChunkRow.collection_id == bindparam("collection_id"))
        .order_by(ChunkRow.document_id, ChunkRow.ordinal)
    )
    return _plain_tuples(session, statement, {"collection_id": collection_id})


def _plain_tuples(session: Session, statement: Any, parameters: dict[str, Any]) -> list[Any]:
    """The statement's rows as the driver's own tuples, on the session's connection (and
    transaction): SQLAlchemy's row objects, and turning each into a tuple, cost ~2/3 of
    reading a 100M-token collection's 650K chunk spans (7 s)."""
    connection = session.connection()
    compiled = statement.compile(dialect=connection.dialect)
    values = compiled.construct_params(parameters)
    if compiled.positional:
        values = [values[name] for name in compiled.positiontup or []]
    cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(str(compiled), values)
        return list(cursor.fetchall())
    finally:
        cursor.close()
