"""Units, chunks and summary nodes alike: what the indexes hold (ids, hashes, texts) and
what a hit shows of its document."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from windowpack.storage.query_helpers import batches, rows_by_id
from windowpack.storage.schema import ChunkRow, DocumentRow, TreeNodeRow


def chunks_for_index(
    session: Session, collection_id: int
) -> tuple[list[int], list[str], list[str]]:
    """Ids, content hashes and texts of every chunk of a collection, by id."""
    return _for_index(session, ChunkRow, collection_id)


def nodes_for_index(session: Session, collection_id: int) -> tuple[list[int], list[str], list[str]]:
    """Ids, text hashes and texts of every summary node of a collection, by id."""
    return _for_index(session, TreeNodeRow, collection_id)


def _for_index(
    session: Session, table: Any, collection_id: int
) -> tuple[list[int], list[str], list[str]]:
    rows = session.execute(
        select(table.id, table.text_hash, table.text)
        .where(table.collection_id == collection_id)
        .order_by(table.id)
    ).all()
    return [row[0] for row in rows], [row[1] for row in rows], [row[2] for row in rows]


def unit_hashes(
    session: Session, collection_id: int
) -> tuple[tuple[list[int], list[str]], tuple[list[int], list[str]]]:
    """(ids, content hashes) of every chunk, then of every summary node: what an index of
    the collection holds, without the texts."""
    return tuple(  # type: ignore[return-value]
        _columns(
            session.execute(
                select(table.id, table.text_hash).where(table.collection_id == collection_id)
            ).all()
        )
        for table in (ChunkRow, TreeNodeRow)
    )


def _columns(rows: Sequence[Any]) -> tuple[list[int], list[str]]:
    return [row[0] for row in rows], [row[1] for row in rows]


TextAndHash = tuple[str, str]


def unit_texts_by_id(
    session: Session, collection_id: int, chunk_ids: Sequence[int], node_ids: Sequence[int]
) -> tuple[dict[int, TextAndHash], dict[int, TextAndHash]]:
    """(text, content hash) of these chunks and of these summary nodes, by id (a deleted one
    is absent)."""
    found: list[dict[int, TextAndHash]] = []
    for table, ids in ((ChunkRow, chunk_ids), (TreeNodeRow, node_ids)):
        rows = rows_by_id(session, table, (table.text, table.text_hash), collection_id, ids)
        found.append({row[0]: (row[1], row[2]) for row in rows})
    return found[0], found[1]


def unit_count(session: Session, collection_id: int) -> int:
    """Chunks plus summary nodes of a collection: what its indexes must hold."""
    total = 0
    for table in (ChunkRow, TreeNodeRow):
        total += (
            session.scalar(
                select(func.count()).select_from(table).where(table.collection_id == collection_id)
            )
            or 0
        )
    return total


WithDocument = tuple[Any, str | None, str | None, str | None]
"""A chunk or node row with its document's external id, title and kind (None when it has
none: a collection-level node)."""


def chunks_with_documents(session: Session, chunk_ids: Sequence[int]) -> dict[int, WithDocument]:
    """Chunks by id, each with its document's external id, title and kind (for provenance)."""
    return _with_documents(session, ChunkRow, ChunkRow.document_id, chunk_ids)


def nodes_with_documents(session: Session, node_ids: Sequence[int]) -> dict[int, WithDocument]:
    """Summary nodes by id, each with its document's external id, title and kind (None for
    collection-level nodes)."""
    return _with_documents(session, TreeNodeRow, TreeNodeRow.document_id, node_ids)


def _with_documents(
    session: Session, table: Any, document_id: Any, ids: Sequence[int]
) -> dict[int, WithDocument]:
    found: dict[int, WithDocument] = {}
    for batch in batches(list(ids)):
        rows = session.execute(
            select(table, DocumentRow.external_id, DocumentRow.title, DocumentRow.kind)
            .outerjoin(DocumentRow, document_id == DocumentRow.id)
            .where(table.id.in_(batch))
        ).all()
        found.update({row[0].id: (row[0], row[1], row[2], row[3]) for row in rows})
    return found
