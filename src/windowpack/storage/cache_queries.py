"""The embedding and summary caches, written so that concurrent writers never collide."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from windowpack.storage.query_helpers import IN_BATCH, batches
from windowpack.storage.schema import EmbeddingRow, SummaryRow

# Dialects whose INSERT has ON CONFLICT DO NOTHING (`insert_ignoring_duplicates`).
_UPSERT_DIALECTS: dict[str, Any] = {"sqlite": sqlite.insert, "postgresql": postgresql.insert}


def cached_embeddings(session: Session, model_id: str, hashes: Iterable[str]) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for batch in batches(sorted(set(hashes))):
        rows = session.execute(
            select(EmbeddingRow.text_hash, EmbeddingRow.vector).where(
                EmbeddingRow.model_id == model_id, EmbeddingRow.text_hash.in_(batch)
            )
        ).all()
        found.update({row[0]: row[1] for row in rows})
    return found


def store_embeddings(
    session: Session, model_id: str, dimension: int, vectors: dict[str, bytes]
) -> None:
    """Add cache entries; hashes already cached (e.g. by a concurrent ingest) are skipped."""
    rows = [
        {"model_id": model_id, "text_hash": text_hash, "dimension": dimension, "vector": vector}
        for text_hash, vector in vectors.items()
    ]
    insert_ignoring_duplicates(session, EmbeddingRow, rows)


def embedding_dimension(session: Session, model_id: str) -> int | None:
    """The dimension of `model_id`'s cached vectors (None when none is cached)."""
    return session.scalar(
        select(EmbeddingRow.dimension).where(EmbeddingRow.model_id == model_id).limit(1)
    )


def cached_summaries(session: Session, children_hashes: Iterable[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for batch in batches(sorted(set(children_hashes))):
        rows = session.execute(
            select(SummaryRow.children_hash, SummaryRow.text).where(
                SummaryRow.children_hash.in_(batch)
            )
        ).all()
        found.update({row[0]: row[1] for row in rows})
    return found


def store_summaries(session: Session, summaries: dict[str, str]) -> None:
    """Add summary cache entries; those already cached (by any process) are skipped."""
    rows = [{"children_hash": key, "text": text} for key, text in summaries.items()]
    insert_ignoring_duplicates(session, SummaryRow, rows)


def insert_ignoring_duplicates(session: Session, table: Any, rows: list[dict[str, Any]]) -> None:
    """Insert `rows`, skipping any whose primary key is already there.

    A cache row may be written by another process between any check and the insert (a reader
    rebuilding an index embeds what a writer has just committed): a check-then-insert would
    raise `IntegrityError` there and fail a write that has committed. `ON CONFLICT DO NOTHING`
    settles the race inside the database, on SQLite and PostgreSQL alike.
    """
    if not rows:
        return
    dialect = session.get_bind().dialect.name
    if dialect not in _UPSERT_DIALECTS:
        _insert_unless_present(session, table, rows)
        return
    statement = _UPSERT_DIALECTS[dialect](table).on_conflict_do_nothing()
    for start in range(0, len(rows), IN_BATCH):
        session.execute(statement, rows[start : start + IN_BATCH])


def _insert_unless_present(session: Session, table: Any, rows: list[dict[str, Any]]) -> None:
    """Other databases: one savepoint per row, a duplicate rolled back alone (slow, rare)."""
    for row in rows:
        try:
            with session.begin_nested():
                session.execute(insert(table), [row])
        except IntegrityError:
            continue
