"""Reading the summary tree back: its shape per level, and one node with its neighbours."""

from __future__ import annotations

from typing import Literal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from windowpack.documents import parse_heading
from windowpack.errors import NotFoundError
from windowpack.storage import ChunkRow, DocumentRow, TreeNodeRow, repository
from windowpack.summarizer.collection_levels import document_roots
from windowpack.types import TREE_LABEL_CHARS, LevelStats, TreeChild, TreeNode, TreeOverview

# Characters of a chunk's text read for its label: enough for the first words of its first line.
_LABEL_READ = 4 * TREE_LABEL_CHARS


def tree_overview(session: Session, collection_id: int) -> TreeOverview:
    chunk_count, chunk_tokens = session.execute(
        select(func.count(ChunkRow.id), func.coalesce(func.sum(ChunkRow.token_count), 0)).where(
            ChunkRow.collection_id == collection_id
        )
    ).one()
    rows = session.execute(
        select(
            TreeNodeRow.level,
            TreeNodeRow.document_id.is_(None),
            func.count(TreeNodeRow.id),
            func.sum(TreeNodeRow.token_count),
        )
        .where(TreeNodeRow.collection_id == collection_id)
        .group_by(TreeNodeRow.level, TreeNodeRow.document_id.is_(None))
    ).all()
    levels = sorted(
        (
            LevelStats(
                level=level,
                scope="collection" if collection_scope else "document",
                nodes=int(count),
                tokens=int(tokens or 0),
            )
            for level, collection_scope, count, tokens in rows
        ),
        key=lambda stats: (stats.scope == "collection", stats.level),
    )
    return TreeOverview(
        documents=repository.count_documents(session, collection_id),
        chunks=int(chunk_count),
        chunk_tokens=int(chunk_tokens),
        summary_tokens=sum(stats.tokens for stats in levels),
        levels=levels,
        root_id=_root_id(session, collection_id),
    )


def _root_id(session: Session, collection_id: int) -> int | None:
    """The collection root: the highest collection-scope node, or a lone document's root."""
    top = session.scalars(
        select(TreeNodeRow.id)
        .where(TreeNodeRow.collection_id == collection_id, TreeNodeRow.parent_id.is_(None))
        .order_by(TreeNodeRow.level.desc(), TreeNodeRow.id)
    ).first()
    return top


def tree_node(session: Session, collection_id: int, node_id: int, *, collection: str) -> TreeNode:
    row = repository.get_tree_node(session, collection_id, node_id)
    if row is None:
        raise NotFoundError(f"node {node_id} does not exist in collection {collection!r}")
    external_id = _external_id(session, row.document_id)
    children = _children(session, row, external_id)
    return TreeNode(
        id=row.id,
        level=row.level,
        document_id=external_id,
        parent_id=row.parent_id,
        leaf_start=row.leaf_start,
        leaf_end=row.leaf_end,
        char_start=row.char_start,
        char_end=row.char_end,
        text=row.text,
        tokens=row.token_count,
        summarizer=row.summarizer,
        children=children,
    )


def _children(session: Session, row: TreeNodeRow, external_id: str | None) -> list[TreeChild]:
    nodes = sorted(repository.child_nodes(session, row.id), key=lambda node: node.position)
    if row.document_id is not None and row.level == 1:
        # The first characters of each chunk only (its start in the document's text), not the
        # whole document: a label needs a line.
        opening = func.substr(DocumentRow.text, ChunkRow.char_start + 1, _LABEL_READ)
        chunks = session.execute(
            select(ChunkRow.ordinal, ChunkRow.token_count, opening)
            .join(DocumentRow, DocumentRow.id == ChunkRow.document_id)
            .where(
                ChunkRow.document_id == row.document_id,
                ChunkRow.ordinal >= row.leaf_start,
                ChunkRow.ordinal < row.leaf_end,
            )
            .order_by(ChunkRow.ordinal)
        ).all()
        return [
            TreeChild(
                kind="chunk",
                node_id=None,
                document_id=external_id,
                ordinal=ordinal,
                tokens=tokens,
                label=first_words(text),
            )
            for ordinal, tokens, text in chunks
        ]
    grouping_documents = row.document_id is None and all(n.document_id for n in nodes)
    if grouping_documents:  # the lowest collection level: children are document roots
        return _document_children(session, row)
    return [_node_child(session, node) for node in nodes]


def first_words(text: str) -> str:
    """A label for `text`: its first non-blank line (a heading as its title), its spaces
    collapsed, cut at a word boundary to at most `TREE_LABEL_CHARS` characters."""
    line = next((line for line in text.splitlines() if line.strip()), "")
    heading = parse_heading(line)
    words = heading.title if heading is not None else " ".join(line.split())
    if len(words) <= TREE_LABEL_CHARS:
        return words
    cut = words[: TREE_LABEL_CHARS - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"


def _document_children(session: Session, row: TreeNodeRow) -> list[TreeChild]:
    """Children of a level-1 collection node: the roots of documents it groups."""
    roots = document_roots(session, row.collection_id)[row.leaf_start : row.leaf_end]
    children = []
    for root in roots:
        external_id, title = _document_names(session, root.document_id)
        kind: Literal["node", "chunk"] = "node" if root.node_id is not None else "chunk"
        ordinal = None if root.node_id is not None else 0
        children.append(
            TreeChild(
                kind=kind,
                node_id=root.node_id,
                document_id=external_id,
                ordinal=ordinal,
                tokens=root.item.tokens,
                label=title or external_id,
            )
        )
    return children


def _node_child(session: Session, node: TreeNodeRow) -> TreeChild:
    return TreeChild(
        kind="node",
        node_id=node.id,
        document_id=_external_id(session, node.document_id),
        ordinal=None,
        tokens=node.token_count,
        label=first_words(node.text),
    )


def _document_names(session: Session, document_id: int) -> tuple[str, str | None]:
    """A document's id and title."""
    external_id, title = session.execute(
        select(DocumentRow.external_id, DocumentRow.title).where(DocumentRow.id == document_id)
    ).one()
    return external_id, title


def _external_id(session: Session, document_id: int | None) -> str | None:
    if document_id is None:
        return None
    return session.scalar(select(DocumentRow.external_id).where(DocumentRow.id == document_id))
