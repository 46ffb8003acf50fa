"""Summary-tree node rows: read the tree, re-parent and delete its nodes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from windowpack.storage.query_helpers import batches
from windowpack.storage.schema import DocumentRow, TreeNodeRow


def node_ids_of_document(session: Session, document_id: int) -> list[int]:
    return list(
        session.scalars(select(TreeNodeRow.id).where(TreeNodeRow.document_id == document_id))
    )


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


def set_parents(session: Session, parents: Sequence[tuple[int, int | None]]) -> None:
    """Give each (node id, parent id) pair's node that parent, in one executemany: one
    statement per parent makes re-parenting every document root cost ~2 ms a parent."""
    if parents:
        session.execute(
            update(TreeNodeRow),
            [{"id": node_id, "parent_id": parent_id} for node_id, parent_id in parents],
        )


def delete_nodes(session: Session, node_ids: Sequence[int]) -> None:
    for batch in batches(list(node_ids)):
        session.execute(delete(TreeNodeRow).where(TreeNodeRow.id.in_(batch)))
