"""Collection rows: create and list them, their index versions, document positions, totals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from windowpack.errors import CollectionDeletedError
from windowpack.storage.notifications import announce_change
from windowpack.storage.schema import ChunkRow, CollectionRow, DocumentRow


def get_collection(session: Session, name: str) -> CollectionRow | None:
    return session.scalars(select(CollectionRow).where(CollectionRow.name == name)).one_or_none()


def list_collections(session: Session) -> list[CollectionRow]:
    return list(session.scalars(select(CollectionRow).order_by(CollectionRow.name)))


def create_collection(
    session: Session, *, name: str, tokenizer: str, embedder: str, chunk_tokens: int
) -> CollectionRow:
    row = CollectionRow(
        name=name,
        tokenizer=tokenizer,
        embedder=embedder,
        chunk_tokens=chunk_tokens,
        index_version=0,
        next_position=0,
    )
    session.add(row)
    session.flush()
    return row


def bump_index_version(session: Session, collection_id: int, name: str) -> int:
    """Increment and return the collection's index version inside the caller's transaction.

    Every write ends here: `CollectionDeletedError` (and the caller's rollback) when the
    collection was deleted since the writer opened it, or when SQLite gave its id to a
    collection of another name since."""
    this = (CollectionRow.id == collection_id) & (CollectionRow.name == name)
    session.execute(
        update(CollectionRow).where(this).values(index_version=CollectionRow.index_version + 1)
    )
    version = session.scalar(select(CollectionRow.index_version).where(this))
    if version is None:
        raise CollectionDeletedError(name, collection_id=collection_id)
    announce_change(session, collection_id)  # replicas hear of it on commit
    return version


def index_versions(session: Session, collection_ids: Sequence[int]) -> dict[int, int]:
    """The index version of each of these collections that still exists, by id."""
    rows = session.execute(
        select(CollectionRow.id, CollectionRow.index_version).where(
            CollectionRow.id.in_(list(collection_ids))
        )
    ).all()
    return {row[0]: int(row[1]) for row in rows}


# Built once: building the select anew at each call cost more than running it (~0.5 ms).
_INDEX_VERSION_OF = select(CollectionRow.index_version, CollectionRow.name).where(
    CollectionRow.id == bindparam("collection_id")
)


def index_version_now(
    sessions: sessionmaker[Session], collection_id: int, name: str | None = None
) -> int:
    """`index_version` read on a plain connection of the sessions' engine, with no session:
    a pack asks this once per collection, and a session's set-up is most of its ~0.5 ms."""
    with sessions.kw["bind"].connect() as connection:
        row = connection.execute(_INDEX_VERSION_OF, {"collection_id": collection_id}).first()
    return _version_of(row, collection_id, name)


def index_version(session: Session, collection_id: int, name: str | None = None) -> int:
    """The collection's index version. `CollectionDeletedError` when its row is gone (a
    handle or request outlived it: version 0 would read as an empty collection), or, with
    `name`, when the row is another collection's (SQLite gives a deleted collection's id to
    the next one created)."""
    row = session.execute(_INDEX_VERSION_OF, {"collection_id": collection_id}).first()
    return _version_of(row, collection_id, name)


def _version_of(row: Any, collection_id: int, name: str | None) -> int:
    if row is None or (name is not None and row.name != name):
        raise CollectionDeletedError(name, collection_id=collection_id)
    return int(row.index_version)


def claim_positions(session: Session, collection_id: int, count: int, name: str) -> int:
    """Reserve `count` consecutive document positions; returns the first one.

    The update comes first: it locks the row, so that two writers (processes, on PostgreSQL)
    never read the same next position.
    """
    session.execute(
        update(CollectionRow)
        .where(CollectionRow.id == collection_id)
        .values(next_position=CollectionRow.next_position + count)
    )
    after = session.scalar(
        select(CollectionRow.next_position).where(CollectionRow.id == collection_id)
    )
    if after is None:  # deleted since the handle was opened: nothing was written
        raise CollectionDeletedError(name, collection_id=collection_id)
    return int(after) - count


def collection_totals(session: Session, collection_id: int) -> tuple[int, int, int]:
    """(documents, chunks, tokens of the documents) of one collection."""
    documents, tokens = session.execute(
        select(func.count(), func.coalesce(func.sum(DocumentRow.token_count), 0)).where(
            DocumentRow.collection_id == collection_id
        )
    ).one()
    chunks = session.scalar(
        select(func.count()).select_from(ChunkRow).where(ChunkRow.collection_id == collection_id)
    )
    return int(documents), int(chunks or 0), int(tokens)
