"""Summary-tree node rows: read the tree, re-parent and delete its nodes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlalchemy import and_, delete, func, select, update
from sqlalchemy.orm import Session

from windowpack.storage.query_helpers import batches
from windowpack.storage.schema import ChunkRow, DocumentRow, TreeNodeRow


def node_ids_of_documents(session: Session, document_ids: Sequence[int]) -> list[int]:
    """The summary node ids of these documents (their own trees; in batches)."""
    found: list[int] = []
    for batch in batches(list(document_ids)):
        query = select(TreeNodeRow.id).where(TreeNodeRow.document_id.in_(batch))
        found += session.scalars(query)
    return found


def all_node_ids(session: Session, collection_id: int) -> list[int]:
    return list(
        session.scalars(select(TreeNodeRow.id).where(TreeNodeRow.collection_id == collection_id))
    )


def collection_scope_nodes(session: Session, collection_id: int) -> list[TreeNodeRow]:
    return list(
        session.scalars(
            select(TreeNodeRow)
            .where(TreeNodeRow.collection_id == collection_id, TreeNodeRow.document_id.is_(None))
            .order_by(TreeNodeRow.level, TreeNodeRow.position)
        )
    )


class CollectionNodeRow(NamedTuple):
    """What a regrouping of the collection levels reads of a collection-scope node."""

    id: int
    children_hash: str
    level: int
    position: int
    leaf_start: int
    leaf_end: int
    parent_id: int | None
    text: str
    token_count: int


def collection_node_rows(session: Session, collection_id: int) -> list[CollectionNodeRow]:
    """The collection-scope nodes, in no particular order, as plain rows: a collection has
    ~1/(fan-out - 1) as many as documents, each a short outline."""
    rows = session.execute(
        select(
            TreeNodeRow.id,
            TreeNodeRow.children_hash,
            TreeNodeRow.level,
            TreeNodeRow.position,
            TreeNodeRow.leaf_start,
            TreeNodeRow.leaf_end,
            TreeNodeRow.parent_id,
            TreeNodeRow.text,
            TreeNodeRow.token_count,
        ).where(TreeNodeRow.collection_id == collection_id, TreeNodeRow.document_id.is_(None))
    )
    return [CollectionNodeRow(*row) for row in rows]


class DocumentRootRow(NamedTuple):
    """A document's root: its highest node, or its only chunk (`node_id` and `parent_id`
    None, `level` 0, `content_hash` the chunk's text hash)."""

    document_id: int
    title: str | None
    external_id: str
    node_id: int | None
    parent_id: int | None
    text: str
    token_count: int
    content_hash: str
    level: int


def document_root_rows(session: Session, collection_id: int) -> list[DocumentRootRow]:
    """Each document's root, in collection order (a document with no chunk has none).

    One row per document, not every node of every document: a document has one node at its
    highest level, found by a grouped subquery; chunks are read only for the documents of
    one chunk, which have no node."""
    top = (
        select(TreeNodeRow.document_id, func.max(TreeNodeRow.level).label("level"))
        .where(TreeNodeRow.collection_id == collection_id, TreeNodeRow.document_id.is_not(None))
        .group_by(TreeNodeRow.document_id)
        .subquery()
    )
    rows = session.execute(
        select(
            DocumentRow.id,
            DocumentRow.title,
            DocumentRow.external_id,
            TreeNodeRow.id,
            TreeNodeRow.parent_id,
            TreeNodeRow.text,
            TreeNodeRow.token_count,
            TreeNodeRow.children_hash,
            TreeNodeRow.level,
        )
        .outerjoin(top, top.c.document_id == DocumentRow.id)
        .outerjoin(
            TreeNodeRow,
            and_(TreeNodeRow.document_id == DocumentRow.id, TreeNodeRow.level == top.c.level),
        )
        .where(DocumentRow.collection_id == collection_id)
        .order_by(DocumentRow.position)
    ).all()
    chunks = _only_chunks(session, [row[0] for row in rows if row[3] is None])
    roots = []
    for row in rows:
        if row[3] is not None:
            roots.append(DocumentRootRow(*row))
        elif row[0] in chunks:
            roots.append(DocumentRootRow(*row[:3], None, None, *chunks[row[0]], 0))
    return roots


def _only_chunks(session: Session, document_ids: list[int]) -> dict[int, tuple[str, int, str]]:
    """(text, token_count, text_hash) of the first chunk of each of these documents."""
    found: dict[int, tuple[str, int, str]] = {}
    for batch in batches(document_ids):
        for row in session.execute(
            select(
                ChunkRow.document_id, ChunkRow.text, ChunkRow.token_count, ChunkRow.text_hash
            ).where(ChunkRow.document_id.in_(batch), ChunkRow.ordinal == 0)
        ):
            found[row[0]] = (row[1], row[2], row[3])
    return found


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
    nodes first), then position. Building ORM objects for every node costs a large
    collection's state load more than reading them. Sorted here rather than joined: a
    document's position is stored after its text, so the join would walk every document
    text's overflow pages on SQLite; the positions come from an index instead."""
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


def set_parents(session: Session, parents: Sequence[tuple[int, int | None]]) -> None:
    """Give each (node id, parent id) pair's node that parent, in one executemany: one
    statement per parent makes re-parenting every document root cost ~2 ms a parent."""
    if parents:
        session.execute(
            update(TreeNodeRow),
            [{"id": node_id, "parent_id": parent_id} for node_id, parent_id in parents],
        )


def move_nodes(session: Session, places: Sequence[dict[str, Any]]) -> None:
    """Give nodes a new place, in one executemany: each dict holds a node's `id` and its
    `level`, `position`, `leaf_start`, `leaf_end` and `parent_id` (a kept node after a
    regrouping)."""
    if places:
        session.execute(update(TreeNodeRow), list(places))


def delete_nodes(session: Session, node_ids: Sequence[int]) -> None:
    for batch in batches(list(node_ids)):
        session.execute(delete(TreeNodeRow).where(TreeNodeRow.id.in_(batch)))
