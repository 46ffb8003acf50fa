"""The collection levels: the nodes above the document roots, grouped in collection order.

The roots are grouped in fixed runs of the fan-out from the start (`balanced=False`), up to
one collection root; each node is the outline of the documents it spans (their titles and
first lines, see `outline.collection_outline`). A write changes a few documents, so
`update_collection_levels` builds the levels over every root as `rebuild_collection_levels`
does, but a node whose children hash is stored already is taken as it is (its row, id, text
and token count: `TreeBuilder.levels_above(known=...)`). Only the nodes whose children
changed are rendered, counted and written: after an append, the last node of each level;
after a replace (or a new title), the nodes above that document; after a delete in the
middle, the nodes from there on (the runs after it regroup). A kept node whose place
changed is moved in its row: its parent (a new node above it), its span (the same members
further on, as identical documents allow), or its level (a level's nodes share one number,
one above the highest item below, so a deeper document raises them all). The indexes get
only the nodes written and the nodes removed: a kept node keeps its index id.

What stays proportional to the collection: one narrow row per document root (its first line
is an entry of the root's outline, which lists every document) and one per collection node,
and hashing each node's children. An append into a ~10M-token collection (2,000 documents)
renders and counts ~5 nodes instead of ~290.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from windowpack.storage import TreeNodeRow, repository
from windowpack.summarizer.outline import DocumentOutline, collection_outline
from windowpack.summarizer.persistence import insert_levels, node_row, parent_ids
from windowpack.summarizer.tree import BuiltNode, KnownNode, TreeBuilder, TreeItem

_LABEL = "collection"


@dataclass(frozen=True, kw_only=True)
class DocumentRoot:
    """The top of one document's subtree as a tree item: its highest node, or its only chunk
    (`node_id` None). The collection levels are built over these, in collection order."""

    document_id: int
    node_id: int | None
    item: TreeItem


def document_roots(session: Session, collection_id: int) -> list[DocumentRoot]:
    """One root per document, in collection order; the i-th covers leaf i of the level above."""
    return [
        DocumentRoot(document_id=row.document_id, node_id=row.node_id, item=_item(row, ordinal))
        for ordinal, row in enumerate(repository.document_root_rows(session, collection_id))
    ]


def _item(row: repository.DocumentRootRow, ordinal: int) -> TreeItem:
    return TreeItem(
        text=row.text,
        tokens=row.token_count,
        content_hash=row.content_hash,
        level=row.level,
        leaf_start=ordinal,
        leaf_end=ordinal + 1,
    )


@dataclass(frozen=True, kw_only=True)
class CollectionLevels:
    """What a regrouping of the collection-scope nodes changed, for the indexes: the rows
    removed and added; `moved_ids` are kept nodes given a new place (same text and index id)."""

    removed_ids: list[int]
    added: list[TreeNodeRow]
    moved_ids: list[int] = field(default_factory=list)


def rebuild_collection_levels(
    session: Session, collection_id: int, builder: TreeBuilder, *, summarizer_id: str
) -> CollectionLevels:
    """Regroup all document roots, in collection order, up to one collection root, from
    scratch: every row is rewritten, every node rendered (summaries from the cache). What
    `update_collection_levels` must come to, at more cost."""
    old = repository.collection_scope_nodes(session, collection_id)
    repository.delete_nodes(session, [row.id for row in old])
    roots = repository.document_root_rows(session, collection_id)
    levels = builder.levels_above(
        [_item(root, ordinal) for ordinal, root in enumerate(roots)],
        label=_LABEL,
        balanced=False,
        outline=_outline(roots),
    )
    rows = insert_levels(
        session, levels, collection_id=collection_id, document_id=None, summarizer_id=summarizer_id
    )
    _reparent_roots(session, roots, [row.id for row in rows[0]] if rows else [], levels, force=True)
    return CollectionLevels(
        removed_ids=[row.id for row in old], added=[row for level in rows for row in level]
    )


def update_collection_levels(
    session: Session, collection_id: int, builder: TreeBuilder, *, summarizer_id: str
) -> CollectionLevels:
    """Regroup the document roots as `rebuild_collection_levels` would, keeping every stored
    node whose children did not change; only the others are rendered, counted and written."""
    roots = repository.document_root_rows(session, collection_id)
    stored = _StoredNodes(repository.collection_node_rows(session, collection_id))
    levels = builder.levels_above(
        [_item(root, ordinal) for ordinal, root in enumerate(roots)],
        label=_LABEL,
        balanced=False,
        outline=_outline(roots),
        known=stored.known,
    )
    kept = stored.match(levels)
    removed = stored.unmatched()
    repository.delete_nodes(session, removed)
    owner = {"collection_id": collection_id, "document_id": None, "summarizer": summarizer_id}
    written = _write(session, levels, kept, owner)
    _reparent_roots(session, roots, written.ids[0] if levels else [], levels)
    return CollectionLevels(removed_ids=removed, added=written.added, moved_ids=written.moved)


def _outline(roots: Sequence[repository.DocumentRootRow]) -> DocumentOutline | None:
    return collection_outline(
        [(root.title or root.external_id or "", root.text) for root in roots],
        ids=[root.external_id for root in roots],
        chunk_roots=[root.node_id is None for root in roots],
    )


class _StoredNodes:
    """The collection's stored nodes by children hash, matched one to one with built ones."""

    def __init__(self, rows: Sequence[repository.CollectionNodeRow]) -> None:
        self._rows = list(rows)
        self._by_hash: dict[str, list[repository.CollectionNodeRow]] = {}
        for row in self._rows:
            self._by_hash.setdefault(row.children_hash, []).append(row)
        self.known = {row.children_hash: KnownNode(row.text, row.token_count) for row in rows}
        self._used: set[int] = set()

    def match(
        self, levels: Sequence[Sequence[BuiltNode]]
    ) -> list[list[repository.CollectionNodeRow | None]]:
        """For each built node, the stored row it keeps (None: a new row): one with its hash,
        the one in the same place first (identical documents make equal hashes)."""
        return [[self._take(node) for node in level] for level in levels]

    def _take(self, node: BuiltNode) -> repository.CollectionNodeRow | None:
        free = [row for row in self._by_hash.get(node.content_hash, []) if row.id not in self._used]
        if not free:
            return None
        same_place = [row for row in free if _place_of(row) == _place_of(node)]
        row = (same_place or free)[0]
        self._used.add(row.id)
        return row

    def unmatched(self) -> list[int]:
        return [row.id for row in self._rows if row.id not in self._used]


def _place_of(node: BuiltNode | repository.CollectionNodeRow) -> tuple[int, int, int, int]:
    return (node.level, node.position, node.leaf_start, node.leaf_end)


@dataclass(frozen=True, kw_only=True)
class _Written:
    ids: list[list[int]]  # each built node's row id, by depth and position
    added: list[TreeNodeRow]
    moved: list[int]


def _write(
    session: Session,
    levels: Sequence[Sequence[BuiltNode]],
    kept: Sequence[Sequence[repository.CollectionNodeRow | None]],
    owner: Mapping[str, object],
) -> _Written:
    """Insert the new nodes and move the kept ones whose place changed, top level first (so
    that every parent has its id before its children are written)."""
    ids: list[list[int]] = [[] for _ in levels]
    added: list[TreeNodeRow] = []
    places: list[dict[str, object]] = []
    moved: list[int] = []
    parents: list[int | None] = [None] * len(levels[-1]) if levels else []
    for depth in reversed(range(len(levels))):
        pairs = list(zip(levels[depth], kept[depth], strict=True))
        new = {
            node.position: node_row(node, owner, parents[node.position])
            for node, row in pairs
            if row is None
        }
        session.add_all(new.values())
        session.flush()
        for node, row in pairs:
            parent_id = parents[node.position]
            if row is None:
                ids[depth].append(new[node.position].id)
            else:
                ids[depth].append(row.id)
                if _place_of(row) != _place_of(node) or row.parent_id != parent_id:
                    places.append(_place(row.id, node, parent_id))
                    moved.append(row.id)
        added += new.values()
        parents = parent_ids(levels[depth], ids[depth])
    repository.move_nodes(session, places)
    return _Written(ids=ids, added=added, moved=moved)


def _place(node_id: int, node: BuiltNode, parent_id: int | None) -> dict[str, object]:
    return {
        "id": node_id,
        "level": node.level,
        "position": node.position,
        "leaf_start": node.leaf_start,
        "leaf_end": node.leaf_end,
        "parent_id": parent_id,
    }


def _reparent_roots(
    session: Session,
    roots: Sequence[repository.DocumentRootRow],
    lowest_ids: Sequence[int],
    levels: Sequence[Sequence[BuiltNode]],
    *,
    force: bool = False,
) -> None:
    """Give each document root node the collection node above it (None with no levels); only
    those whose parent changed are written, unless `force`."""
    above: list[int | None] = (
        list(parent_ids(levels[0], lowest_ids)) if levels else [None] * len(roots)
    )
    repository.set_parents(
        session,
        [
            (root.node_id, parent_id)
            for root, parent_id in zip(roots, above, strict=True)
            if root.node_id is not None and (force or root.parent_id != parent_id)
        ],
    )
