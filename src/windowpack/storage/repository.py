"""Queries and writes over the schema. Callers own the session and its transaction."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import bindparam, delete, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from windowpack.errors import CollectionDeletedError
from windowpack.storage.notifications import announce_change
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
# Dialects whose INSERT has ON CONFLICT DO NOTHING (`insert_ignoring_duplicates`).
_UPSERT_DIALECTS: dict[str, Any] = {"sqlite": sqlite.insert, "postgresql": postgresql.insert}


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
    a pack asks this once per collection, and a session's set-up was most of its ~0.5 ms."""
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
    return _for_index(session, ChunkRow, collection_id)


WithDocument = tuple[Any, str | None, str | None]
"""A chunk or node row with its document's external id and title (None when it has none)."""


def chunks_with_documents(session: Session, chunk_ids: Sequence[int]) -> dict[int, WithDocument]:
    """Chunks by id, each with its document's external id and title (for provenance)."""
    return _with_documents(session, ChunkRow, ChunkRow.document_id, chunk_ids)


def nodes_with_documents(session: Session, node_ids: Sequence[int]) -> dict[int, WithDocument]:
    """Summary nodes by id, each with its document's external id and title (None for
    collection-level nodes)."""
    return _with_documents(session, TreeNodeRow, TreeNodeRow.document_id, node_ids)


def _with_documents(
    session: Session, table: Any, document_id: Any, ids: Sequence[int]
) -> dict[int, WithDocument]:
    found: dict[int, WithDocument] = {}
    for batch in _batches(list(ids)):
        rows = session.execute(
            select(table, DocumentRow.external_id, DocumentRow.title)
            .outerjoin(DocumentRow, document_id == DocumentRow.id)
            .where(table.id.in_(batch))
        ).all()
        found.update({row[0].id: (row[0], row[1], row[2]) for row in rows})
    return found


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
    rows = [
        {"model_id": model_id, "text_hash": text_hash, "dimension": dimension, "vector": vector}
        for text_hash, vector in vectors.items()
    ]
    insert_ignoring_duplicates(session, EmbeddingRow, rows)


def insert_ignoring_duplicates(session: Session, table: Any, rows: list[dict[str, Any]]) -> None:
    """Insert `rows`, skipping any whose primary key is already there.

    A cache row may be written by another process between any check and the insert (a reader
    rebuilding an index embeds what a writer has just committed): a check-then-insert raised
    `IntegrityError` there, failing a write that had committed. `ON CONFLICT DO NOTHING`
    settles the race inside the database, on SQLite and PostgreSQL alike.
    """
    if not rows:
        return
    dialect = session.get_bind().dialect.name
    if dialect not in _UPSERT_DIALECTS:
        _insert_unless_present(session, table, rows)
        return
    statement = _UPSERT_DIALECTS[dialect](table).on_conflict_do_nothing()
    for start in range(0, len(rows), _IN_BATCH):
        session.execute(statement, rows[start : start + _IN_BATCH])


def _insert_unless_present(session: Session, table: Any, rows: list[dict[str, Any]]) -> None:
    """Other databases: one savepoint per row, a duplicate rolled back alone (slow, rare)."""
    for row in rows:
        try:
            with session.begin_nested():
                session.execute(insert(table), [row])
        except IntegrityError:
            continue


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
    """Add summary cache entries; those already cached (by any process) are skipped."""
    rows = [{"children_hash": key, "text": text} for key, text in summaries.items()]
    insert_ignoring_duplicates(session, SummaryRow, rows)


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


def tree_nodes_for_pack(session: Session, collection_id: int) -> list[Any]:
    """What a packing state needs of each node, as plain rows: (id, document_id, parent_id,
    level, leaf_start, leaf_end, text), by level, then document position (collection-level
    nodes first), then position. Building ORM objects for every node cost a large
    collection's state load more than reading them. Sorted here rather than joined: a
    document's position is stored after its text, so the join walked every document text's
    overflow pages on SQLite; the positions come from an index instead."""
    positions = {
        document_id: position
        for document_id, position in session.execute(
            select(DocumentRow.id, DocumentRow.position).where(
                DocumentRow.collection_id == collection_id
            )
        )
    }
    rows = session.execute(
        select(
            TreeNodeRow.id,
            TreeNodeRow.document_id,
            TreeNodeRow.parent_id,
            TreeNodeRow.level,
            TreeNodeRow.leaf_start,
            TreeNodeRow.leaf_end,
            TreeNodeRow.text,
            TreeNodeRow.position,
        ).where(TreeNodeRow.collection_id == collection_id)
    ).all()

    def order(row: Any) -> tuple[int, int, int]:
        document = -1 if row.document_id is None else positions[row.document_id]
        return (row.level, document, row.position)

    return sorted(rows, key=order)


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
    rows = _rows_by_id(session, DocumentRow, (DocumentRow.text,), collection_id, document_ids)
    return {row[0]: row[1] for row in rows}


def _rows_by_id(
    session: Session, table: Any, columns: Sequence[Any], collection_id: int, ids: Sequence[int]
) -> list[Any]:
    """(id, *columns) of the collection's rows of `table` with these ids, in batches."""
    rows: list[Any] = []
    for batch in _batches(list(ids)):
        rows += session.execute(
            select(table.id, *columns).where(
                table.collection_id == collection_id, table.id.in_(batch)
            )
        ).all()
    return rows


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


def top_document_nodes(session: Session, collection_id: int) -> dict[int, TreeNodeRow]:
    """Each document's highest summary node, by document id (documents of one chunk have none)."""
    top: dict[int, TreeNodeRow] = {}
    for node in session.scalars(
        select(TreeNodeRow).where(
            TreeNodeRow.collection_id == collection_id, TreeNodeRow.document_id.is_not(None)
        )
    ):
        assert node.document_id is not None
        best = top.get(node.document_id)
        if best is None or node.level > best.level:
            top[node.document_id] = node
    return top


def first_chunks(session: Session, collection_id: int) -> dict[int, ChunkRow]:
    """Each document's first chunk, by document id."""
    query = select(ChunkRow).where(ChunkRow.collection_id == collection_id, ChunkRow.ordinal == 0)
    return {row.document_id: row for row in session.scalars(query)}


def document_ids(session: Session, collection_id: int) -> list[int]:
    """The collection's document ids in collection order."""
    query = select(DocumentRow.id).where(DocumentRow.collection_id == collection_id)
    return list(session.scalars(query.order_by(DocumentRow.position)))


def document_titles(session: Session, collection_id: int) -> dict[int, str]:
    """Each document's title (its id where it has none), by document id."""
    query = select(DocumentRow.id, DocumentRow.title, DocumentRow.external_id).where(
        DocumentRow.collection_id == collection_id
    )
    return {row.id: row.title or row.external_id for row in session.execute(query)}


def set_parents(session: Session, parents: Sequence[tuple[int, int | None]]) -> None:
    """Give each (node id, parent id) pair's node that parent, in one executemany: one
    statement per parent had made re-parenting every document root cost ~2 ms a parent."""
    if parents:
        session.execute(
            update(TreeNodeRow),
            [{"id": node_id, "parent_id": parent_id} for node_id, parent_id in parents],
        )


def delete_nodes(session: Session, node_ids: Sequence[int]) -> None:
    for batch in _batches(list(node_ids)):
        session.execute(delete(TreeNodeRow).where(TreeNodeRow.id.in_(batch)))


def nodes_for_index(session: Session, collection_id: int) -> tuple[list[int], list[str], list[str]]:
    """Ids, text hashes and texts of every summary node of a collection, by id."""
    return _for_index(session, TreeNodeRow, collection_id)


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


TextAndHash = tuple[str, str]


def unit_texts_by_id(
    session: Session, collection_id: int, chunk_ids: Sequence[int], node_ids: Sequence[int]
) -> tuple[dict[int, TextAndHash], dict[int, TextAndHash]]:
    """(text, content hash) of these chunks and of these summary nodes, by id (a deleted one
    is absent)."""
    found: list[dict[int, TextAndHash]] = []
    for table, ids in ((ChunkRow, chunk_ids), (TreeNodeRow, node_ids)):
        rows = _rows_by_id(session, table, (table.text, table.text_hash), collection_id, ids)
        found.append({row[0]: (row[1], row[2]) for row in rows})
    return found[0], found[1]


def _columns(rows: Sequence[Any]) -> tuple[list[int], list[str]]:
    return [row[0] for row in rows], [row[1] for row in rows]


def _for_index(
    session: Session, table: Any, collection_id: int
) -> tuple[list[int], list[str], list[str]]:
    rows = session.execute(
        select(table.id, table.text_hash, table.text)
        .where(table.collection_id == collection_id)
        .order_by(table.id)
    ).all()
    return [row[0] for row in rows], [row[1] for row in rows], [row[2] for row in rows]


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
    document id and ordinal: a large collection's state load built ~70K row objects where
    five numbers each do."""
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
    transaction): SQLAlchemy's row objects, and turning each into a tuple, were ~2/3 of
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


def embedding_dimension(session: Session, model_id: str) -> int | None:
    """The dimension of `model_id`'s cached vectors (None when none is cached)."""
    return session.scalar(
        select(EmbeddingRow.dimension).where(EmbeddingRow.model_id == model_id).limit(1)
    )
