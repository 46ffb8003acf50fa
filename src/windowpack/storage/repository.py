"""Queries and writes over the schema. Callers own the session and its transaction."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from windowpack.storage.schema import ChunkRow, CollectionRow, DocumentRow, EmbeddingRow

# Keep IN (...) lists well under SQLite's and PostgreSQL's parameter limits.
_IN_BATCH = 500


@dataclass(frozen=True, kw_only=True)
class ChunkRecord:
    """A chunk with its document's provenance, as search returns it."""

    id: int
    text: str
    ordinal: int
    char_start: int
    char_end: int
    unit: int | None
    document_external_id: str
    document_title: str | None


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


def bump_index_version(session: Session, collection_id: int) -> int:
    """Increment and return the collection's index version inside the caller's transaction."""
    session.execute(
        update(CollectionRow)
        .where(CollectionRow.id == collection_id)
        .values(index_version=CollectionRow.index_version + 1)
    )
    version = session.scalar(
        select(CollectionRow.index_version).where(CollectionRow.id == collection_id)
    )
    assert version is not None
    return version


def index_version(session: Session, collection_id: int) -> int:
    version = session.scalar(
        select(CollectionRow.index_version).where(CollectionRow.id == collection_id)
    )
    return int(version or 0)


def documents_by_external_id(
    session: Session, collection_id: int, external_ids: Iterable[str]
) -> dict[str, DocumentRow]:
    found: dict[str, DocumentRow] = {}
    for batch in _batches(list(external_ids)):
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


def chunk_ids_of_document(session: Session, document_id: int) -> list[int]:
    return list(session.scalars(select(ChunkRow.id).where(ChunkRow.document_id == document_id)))


def delete_document(session: Session, document: DocumentRow) -> list[int]:
    """Delete a document and its chunks; returns the removed chunk ids (for the indexes)."""
    chunk_ids = chunk_ids_of_document(session, document.id)
    session.execute(delete(ChunkRow).where(ChunkRow.document_id == document.id))
    session.execute(delete(DocumentRow).where(DocumentRow.id == document.id))
    return chunk_ids


def claim_positions(session: Session, collection_id: int, count: int) -> int:
    """Reserve `count` consecutive document positions; returns the first one."""
    first = session.scalar(
        select(CollectionRow.next_position).where(CollectionRow.id == collection_id)
    )
    assert first is not None
    session.execute(
        update(CollectionRow)
        .where(CollectionRow.id == collection_id)
        .values(next_position=CollectionRow.next_position + count)
    )
    return int(first)


def chunk_texts_and_ids(session: Session, collection_id: int) -> tuple[list[int], list[str]]:
    """Every chunk of a collection in (document position, ordinal) order."""
    rows = session.execute(
        select(ChunkRow.id, ChunkRow.text)
        .join(DocumentRow, ChunkRow.document_id == DocumentRow.id)
        .where(ChunkRow.collection_id == collection_id)
        .order_by(DocumentRow.position, ChunkRow.ordinal)
    ).all()
    return [row[0] for row in rows], [row[1] for row in rows]


def chunks_for_index(
    session: Session, collection_id: int
) -> tuple[list[int], list[str], list[str]]:
    """Ids, content hashes and texts of every chunk of a collection, by id."""
    rows = session.execute(
        select(ChunkRow.id, ChunkRow.text_hash, ChunkRow.text)
        .where(ChunkRow.collection_id == collection_id)
        .order_by(ChunkRow.id)
    ).all()
    return [row[0] for row in rows], [row[1] for row in rows], [row[2] for row in rows]


def fetch_chunk_records(session: Session, chunk_ids: Sequence[int]) -> dict[int, ChunkRecord]:
    records: dict[int, ChunkRecord] = {}
    for batch in _batches(list(chunk_ids)):
        rows = session.execute(
            select(
                ChunkRow.id,
                ChunkRow.text,
                ChunkRow.ordinal,
                ChunkRow.char_start,
                ChunkRow.char_end,
                ChunkRow.unit,
                DocumentRow.external_id,
                DocumentRow.title,
            )
            .join(DocumentRow, ChunkRow.document_id == DocumentRow.id)
            .where(ChunkRow.id.in_(batch))
        ).all()
        for row in rows:
            records[row[0]] = ChunkRecord(
                id=row[0],
                text=row[1],
                ordinal=row[2],
                char_start=row[3],
                char_end=row[4],
                unit=row[5],
                document_external_id=row[6],
                document_title=row[7],
            )
    return records


def cached_embeddings(session: Session, model_id: str, hashes: Iterable[str]) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for batch in _batches(sorted(set(hashes))):
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
    existing = cached_embeddings(session, model_id, vectors)
    session.add_all(
        EmbeddingRow(model_id=model_id, text_hash=text_hash, dimension=dimension, vector=vector)
        for text_hash, vector in vectors.items()
        if text_hash not in existing
    )


def _batches(items: list[str] | list[int]) -> Iterable[Sequence[str] | Sequence[int]]:
    for start in range(0, len(items), _IN_BATCH):
        yield items[start : start + _IN_BATCH]
