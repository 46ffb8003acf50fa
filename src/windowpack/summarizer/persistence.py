"""Writing the summary tree to the database, and the database-backed summary cache."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session, sessionmaker

from windowpack.storage import repository
from windowpack.storage.schema import TreeNodeRow
from windowpack.summarizer.tree import BuiltNode, TreeBuilder, TreeItem
from windowpack.text.hashing import content_hash


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
    rows_by_level: list[list[TreeNodeRow]] = [[] for _ in levels]
    parents: list[TreeNodeRow] | None = None
    for depth in reversed(range(len(levels))):
        rows = [
            _row(node, collection_id, document_id, summarizer_id, _parent_of(node, parents))
            for node in levels[depth]
        ]
        session.add_all(rows)
        session.flush()
        rows_by_level[depth] = rows
        parents_nodes = levels[depth]
        parents = [
            rows[index]
            for index, node in enumerate(parents_nodes)
            for _ in range(node.child_start, node.child_end)
        ]
    return rows_by_level


def _parent_of(node: BuiltNode, parents: list[TreeNodeRow] | None) -> int | None:
    # `parents` lists, for each position of this level, the row of the node above it.
    return parents[node.position].id if parents is not None else None


def _row(
    node: BuiltNode,
    collection_id: int,
    document_id: int | None,
    summarizer_id: str,
    parent_id: int | None,
) -> TreeNodeRow:
    return TreeNodeRow(
        collection_id=collection_id,
        document_id=document_id,
        level=node.level,
        position=node.position,
        parent_id=parent_id,
        leaf_start=node.leaf_start,
        leaf_end=node.leaf_end,
        char_start=node.char_start,
        char_end=node.char_end,
        text=node.text,
        token_count=node.tokens,
        text_hash=content_hash(node.text),
        children_hash=node.content_hash,
        summarizer=summarizer_id,
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
    roots = repository.document_roots(session, collection_id)
    items = [
        TreeItem(
            text=root.text,
            tokens=root.tokens,
            content_hash=root.content_hash,
            level=root.level,
            leaf_start=ordinal,
            leaf_end=ordinal + 1,
        )
        for ordinal, root in enumerate(roots)
    ]
    levels = builder.levels_above(items, label="collection", balanced=False)
    rows = insert_levels(
        session, levels, collection_id=collection_id, document_id=None, summarizer_id=summarizer_id
    )
    if levels:
        for node, row in zip(levels[0], rows[0], strict=True):
            children = [root.node_id for root in roots[node.child_start : node.child_end]]
            repository.set_parent(session, [i for i in children if i is not None], row.id)
    else:
        repository.set_parent(session, [r.node_id for r in roots if r.node_id is not None], None)
    return CollectionLevels(
        removed_ids=[row.id for row in old], added=[row for level in rows for row in level]
    )
