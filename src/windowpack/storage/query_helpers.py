"""Helpers the query modules share: `IN (...)` lists in batches, rows by id."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

# Keep IN (...) lists well under SQLite's and PostgreSQL's parameter limits.
IN_BATCH = 500


def batches(items: list[str] | list[int]) -> Iterable[Sequence[str] | Sequence[int]]:
    """`items` in slices of at most `IN_BATCH`, one per `IN (...)` query."""
    for start in range(0, len(items), IN_BATCH):
        yield items[start : start + IN_BATCH]


def rows_by_id(
    session: Session, table: Any, columns: Sequence[Any], collection_id: int, ids: Sequence[int]
) -> list[Any]:
    """(id, *columns) of the collection's rows of `table` with these ids, in batches."""
    rows: list[Any] = []
    for batch in batches(list(ids)):
        rows += session.execute(
            select(table.id, *columns).where(
                table.collection_id == collection_id, table.id.in_(batch)
            )
        ).all()
    return rows
