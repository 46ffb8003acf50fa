"""Queries and writes over the schema. Callers own the session and its transaction."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from windowpack.storage.schema import (
    ChunkRow,
    CollectionRow,
    DocumentRow,
    EmbeddingRow,
    SummaryRow,
    TreeNodeRow,
)

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


def cached_summaries(session: Session, children_hashes: Iterable[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for batch in _batches(sorted(set(children_hashes))):
        rows = session.execute(
            select(SummaryRow.children_hash, SummaryRow.text).where(
                SummaryRow.children_hash.in_(batch)
            )
        ).all()
        found.update({row[0]: row[1] for row in rows})
    return found


def store_summaries(session: Session, summaries: dict[str, str]) -> None:
    existing = cached_summaries(session, summaries)
    session.add_all(
        SummaryRow(children_hash=children_hash, text=text)
        for children_hash, text in summaries.items()
        if children_hash not in existing
    )


def node_ids_of_document(session: Session, document_id: int) -> list[int]:
    return list(
        session.scalars(select(TreeNodeRow.id).where(TreeNodeRow.document_id == document_id))
    )


def collection_scope_nodes(session: Session, collection_id: int) -> list[TreeNodeRow]:
    return list(
        session.scalars(
            select(TreeNodeRow)
            .where(TreeNodeRow.collection_id == collection_id, TreeNodeRow.document_id.is_(None))
            .order_by(TreeNodeRow.level, TreeNodeRow.position)
        )
    )


def tree_nodes(session: Session, collection_id: int) -> list[TreeNodeRow]:
    """Every summary node of a collection, by level then document order then position."""
    return list(
        session.scalars(
            select(TreeNodeRow)
            .outerjoin(DocumentRow, TreeNodeRow.document_id == DocumentRow.id)
            .where(TreeNodeRow.collection_id == collection_id)
            .order_by(TreeNodeRow.level, DocumentRow.position, TreeNodeRow.position)
        )
    )


def get_tree_node(session: Session, collection_id: int, node_id: int) -> TreeNodeRow | None:
    return session.scalars(
        select(TreeNodeRow).where(
            TreeNodeRow.collection_id == collection_id, TreeNodeRow.id == node_id
        )
    ).one_or_none()


def child_nodes(session: Session, node_id: int) -> list[TreeNodeRow]:
    return list(
        session.scalars(
            select(TreeNodeRow).where(TreeNodeRow.parent_id == node_id).order_by(TreeNodeRow.id)
        )
    )


@dataclass(frozen=True, kw_only=True)
class DocumentRoot:
    """The top of one document's subtree: its highest node, or its only chunk."""

    document_id: int
    node_id: int | None
    text: str
    tokens: int
    content_hash: str
    level: int


def document_roots(session: Session, collection_id: int) -> list[DocumentRoot]:
    """One root per document, in collection order."""
    documents = session.execute(
        select(DocumentRow.id)
        .where(DocumentRow.collection_id == collection_id)
        .order_by(DocumentRow.position)
    ).all()
    top_nodes: dict[int, TreeNodeRow] = {}
    for node in session.scalars(
        select(TreeNodeRow).where(
            TreeNodeRow.collection_id == collection_id, TreeNodeRow.document_id.is_not(None)
        )
    ):
        assert node.document_id is not None
        best = top_nodes.get(node.document_id)
        if best is None or node.level > best.level:
            top_nodes[node.document_id] = node
    single_chunks = {
        row.document_id: row
        for row in session.scalars(
            select(ChunkRow).where(ChunkRow.collection_id == collection_id, ChunkRow.ordinal == 0)
        )
    }
    roots = []
    for (document_id,) in documents:
        top = top_nodes.get(document_id)
        if top is not None:
            roots.append(
                DocumentRoot(
                    document_id=document_id,
                    node_id=top.id,
                    text=top.text,
                    tokens=top.token_count,
                    content_hash=top.children_hash,
                    level=top.level,
                )
            )
        elif document_id in single_chunks:
            chunk = single_chunks[document_id]
            roots.append(
                DocumentRoot(
                    document_id=document_id,
                    node_id=None,
                    text=chunk.text,
                    tokens=chunk.token_count,
                    content_hash=chunk.text_hash,
                    level=0,
                )
            )
    return roots


def set_parent(session: Session, node_ids: Sequence[int], parent_id: int | None) -> None:
    for batch in _batches(list(node_ids)):
        session.execute(
            update(TreeNodeRow).where(TreeNodeRow.id.in_(batch)).values(parent_id=parent_id)
        )


def delete_nodes(session: Session, node_ids: Sequence[int]) -> None:
    for batch in _batches(list(node_ids)):
        session.execute(delete(TreeNodeRow).where(TreeNodeRow.id.in_(batch)))


def nodes_for_index(session: Session, collection_id: int) -> tuple[list[int], list[str], list[str]]:
    """Ids, text hashes and texts of every summary node of a collection, by id."""
    rows = session.execute(
        select(TreeNodeRow.id, TreeNodeRow.text_hash, TreeNodeRow.text)
        .where(TreeNodeRow.collection_id == collection_id)
        .order_by(TreeNodeRow.id)
    ).all()
    return [row[0] for row in rows], [row[1] for row in rows], [row[2] for row in rows]


@dataclass(frozen=True, kw_only=True)
class NodeRecord:
    """A summary node with its document's provenance, as search returns it."""

    id: int
    text: str
    level: int
    char_start: int | None
    char_end: int | None
    leaf_start: int
    leaf_end: int
    document_external_id: str | None
    document_title: str | None


def fetch_node_records(session: Session, node_ids: Sequence[int]) -> dict[int, NodeRecord]:
    records: dict[int, NodeRecord] = {}
    for batch in _batches(list(node_ids)):
        rows = session.execute(
            select(TreeNodeRow, DocumentRow.external_id, DocumentRow.title)
            .outerjoin(DocumentRow, TreeNodeRow.document_id == DocumentRow.id)
            .where(TreeNodeRow.id.in_(batch))
        ).all()
        for node, external_id, title in rows:
            records[node.id] = NodeRecord(
                id=node.id,
                text=node.text,
                level=node.level,
                char_start=node.char_start,
                char_end=node.char_end,
                leaf_start=node.leaf_start,
                leaf_end=node.leaf_end,
                document_external_id=external_id,
                document_title=title,
            )
    return records


def chunk_rows(session: Session, document_id: int) -> list[ChunkRow]:
    return list(
        session.scalars(
            select(ChunkRow).where(ChunkRow.document_id == document_id).order_by(ChunkRow.ordinal)
        )
    )


def all_node_ids(session: Session, collection_id: int) -> list[int]:
    return list(
        session.scalars(select(TreeNodeRow.id).where(TreeNodeRow.collection_id == collection_id))
    )


@dataclass(frozen=True, kw_only=True)
class ChunkSpan:
    """A chunk's position and span, without its text (the document holds it)."""

    id: int
    document_id: int
    char_start: int
    char_end: int
    unit: int | None


def chunk_spans(session: Session, collection_id: int) -> dict[int, list[ChunkSpan]]:
    """Every chunk of a collection, by document id, in ordinal order: one query."""
    rows = session.execute(
        select(
            ChunkRow.id, ChunkRow.document_id, ChunkRow.char_start, ChunkRow.char_end, ChunkRow.unit
        )
        .where(ChunkRow.collection_id == collection_id)
        .order_by(ChunkRow.document_id, ChunkRow.ordinal)
    ).all()
    spans: dict[int, list[ChunkSpan]] = {}
    for row in rows:
        spans.setdefault(row[1], []).append(
            ChunkSpan(
                id=row[0], document_id=row[1], char_start=row[2], char_end=row[3], unit=row[4]
            )
        )
    return spans
