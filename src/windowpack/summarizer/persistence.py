"""Writing the summary tree to the database, and the database-backed summary cache."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from windowpack.storage import TreeNodeRow, new_row, repository
from windowpack.summarizer.outline import collection_outline
from windowpack.summarizer.tree import BuiltNode, TreeBuilder, TreeItem
from windowpack.text import content_hash


class CommittingSummaryCache:
    """Summary cache whose writes commit at once: work done survives a failed ingest."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions

    def get_many(self, children_hashes: Sequence[str]) -> dict[str, str]:
        with self._sessions() as session:
            return repository.cached_summaries(session, children_hashes)

    def put_many(self, summaries: Mapping[str, str]) -> None:
        with self._sessions.begin() as session:
            repository.store_summaries(session, dict(summaries))


class SessionSummaryCache:
    """Summary cache inside the caller's transaction (for nodes built while it is open)."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def get_many(self, children_hashes: Sequence[str]) -> dict[str, str]:
        return repository.cached_summaries(self._session, children_hashes)

    def put_many(self, summaries: Mapping[str, str]) -> None:
        repository.store_summaries(self._session, dict(summaries))
        self._session.flush()


def insert_levels(
    session: Session,
    levels: Sequence[Sequence[BuiltNode]],
    *,
    collection_id: int,
    document_id: int | None,
    summarizer_id: str,
) -> list[list[TreeNodeRow]]:
    """Insert built levels (bottom first) with parent links; returns the rows, bottom first."""
    owner = {
        "collection_id": collection_id,
        "document_id": document_id,
        "summarizer": summarizer_id,
    }
    rows_by_level: list[list[TreeNodeRow]] = [[] for _ in levels]
    parents: list[TreeNodeRow] | None = None
    for depth in reversed(range(len(levels))):
        rows = [_row(node, owner, _parent_of(node, parents)) for node in levels[depth]]
        session.add_all(rows)
        session.flush()
        rows_by_level[depth] = rows
        # For each position of the level below, the row of the node above it.
        parents = [
            rows[index]
            for index, node in enumerate(levels[depth])
            for _ in range(node.child_start, node.child_end)
        ]
    return rows_by_level


def _parent_of(node: BuiltNode, parents: list[TreeNodeRow] | None) -> int | None:
    return parents[node.position].id if parents is not None else None


def _row(node: BuiltNode, owner: dict[str, Any], parent_id: int | None) -> TreeNodeRow:
    """The row of a built node; the node's `content_hash` is the hash of its children."""
    return new_row(
        TreeNodeRow,
        node,
        **owner,
        parent_id=parent_id,
        token_count=node.tokens,
        text_hash=content_hash(node.text),
        children_hash=node.content_hash,
    )


@dataclass(frozen=True, kw_only=True)
class DocumentRoot:
    """The top of one document's subtree as a tree item: its highest node, or its only chunk
    (`node_id` None). The collection levels are built over these, in collection order."""

    document_id: int
    node_id: int | None
    item: TreeItem


def document_roots(session: Session, collection_id: int) -> list[DocumentRoot]:
    """One root per document, in collection order; the i-th covers leaf i of the level above."""
    top = repository.top_document_nodes(session, collection_id)
    single = repository.first_chunks(session, collection_id)
    roots = []
    for ordinal, document_id in enumerate(repository.document_ids(session, collection_id)):
        node, chunk = top.get(document_id), single.get(document_id)
        if node is not None:
            item = _item(node.text, node.token_count, node.children_hash, node.level, ordinal)
            roots.append(DocumentRoot(document_id=document_id, node_id=node.id, item=item))
        elif chunk is not None:
            item = _item(chunk.text, chunk.token_count, chunk.text_hash, 0, ordinal)
            roots.append(DocumentRoot(document_id=document_id, node_id=None, item=item))
    return roots


def _item(text: str, tokens: int, content_hash: str, level: int, ordinal: int) -> TreeItem:
    return TreeItem(
        text=text,
        tokens=tokens,
        content_hash=content_hash,
        level=level,
        leaf_start=ordinal,
        leaf_end=ordinal + 1,
    )


@dataclass(frozen=True, kw_only=True)
class CollectionLevels:
    """What rebuilding the collection-scope nodes changed, for the indexes."""

    removed_ids: list[int]
    added: list[TreeNodeRow]


def rebuild_collection_levels(
    session: Session, collection_id: int, builder: TreeBuilder, *, summarizer_id: str
) -> CollectionLevels:
    """Regroup all document roots, in collection order, up to one collection root.

    Nodes whose children did not change come from the summary cache; rows are rewritten.
    """
    old = repository.collection_scope_nodes(session, collection_id)
    repository.delete_nodes(session, [row.id for row in old])
    roots = document_roots(session, collection_id)
    items = [root.item for root in roots]
    titles = repository.document_titles(session, collection_id)
    outline = collection_outline(
        [(titles.get(root.document_id) or "", root.item.text) for root in roots]
    )
    levels = builder.levels_above(items, label="collection", balanced=False, outline=outline)
    rows = insert_levels(
        session, levels, collection_id=collection_id, document_id=None, summarizer_id=summarizer_id
    )
    parents: list[tuple[int, int | None]] = []
    if levels:
        for node, row in zip(levels[0], rows[0], strict=True):
            children = roots[node.child_start : node.child_end]
            parents += [(child.node_id, row.id) for child in children if child.node_id is not None]
    else:
        parents = [(root.node_id, None) for root in roots if root.node_id is not None]
    repository.set_parents(session, parents)
    return CollectionLevels(
        removed_ids=[row.id for row in old], added=[row for level in rows for row in level]
    )
