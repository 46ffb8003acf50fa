"""Writing the summary tree to the database, and the database-backed summary cache."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from windowpack.storage import TreeNodeRow, new_row, repository
from windowpack.summarizer.tree import BuiltNode
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
    parents: list[int | None] | None = None
    for depth in reversed(range(len(levels))):
        rows = [
            node_row(node, owner, parents[node.position] if parents is not None else None)
            for node in levels[depth]
        ]
        session.add_all(rows)
        session.flush()
        rows_by_level[depth] = rows
        parents = parent_ids(levels[depth], [row.id for row in rows])
    return rows_by_level


def parent_ids(level: Sequence[BuiltNode], ids: Sequence[int]) -> list[int | None]:
    """For each position of the level below `level`, the id of the node above it (`ids` are
    the rows of `level`, in its order)."""
    return [
        node_id
        for node, node_id in zip(level, ids, strict=True)
        for _ in range(node.child_start, node.child_end)
    ]


def node_row(node: BuiltNode, owner: Mapping[str, Any], parent_id: int | None) -> TreeNodeRow:
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
