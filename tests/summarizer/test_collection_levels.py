"""The collection levels update locally: after any write they are what a rebuild from scratch
makes, and only the nodes whose children changed were written.

Each write's `update_collection_levels` (the pipeline's call) is compared with
`rebuild_collection_levels` run in a transaction rolled back afterwards, on the same database:
same levels, texts, hashes, counts, spans and parents; its removed and added rows are exactly
the nodes that changed (a kept node keeps its row and index id), and the indexes hold what
the database holds.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.index import node_index_id
from windowpack.ingest import pipeline
from windowpack.storage import ChunkRow, DocumentRow, TreeNodeRow, repository
from windowpack.summarizer import (
    CollectionLevels,
    SessionSummaryCache,
    TreeBuilder,
    rebuild_collection_levels,
    update_collection_levels,
)
from windowpack.text import TokenCounter

WORDS = ["glacier", "basalt", "meadow", "falcon", "harbor", "lantern", "orchard", "quarry"]


def _text(rng: random.Random, sentences: int) -> str:
    paragraphs = []
    while sentences > 0:
        take = min(sentences, rng.randint(1, 4))
        paragraphs.append(
            " ".join(
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))).capitalize() + "."
                for _ in range(take)
            )
        )
        sentences -= take
    return "\n\n".join(paragraphs)


def _document(rng: random.Random, doc_id: str, sentences: int) -> wp.Document:
    """A plain document, or now and then a markdown one (its root is a table of contents)."""
    if rng.random() < 0.25:
        sections = [f"## {rng.choice(WORDS)} {n}\n\n{_text(rng, 3)}" for n in range(3)]
        text = f"# {doc_id}\n\n" + "\n\n".join(sections)
        return wp.Document(text=text, id=doc_id, title=doc_id.upper(), kind="markdown")
    return wp.Document(text=_text(rng, sentences), id=doc_id, title=doc_id.upper())


# One operation of a random history: (what, a number that picks the document, a size).
Operation = tuple[str, int, int]
OPERATIONS = ("add", "add", "add many", "replace", "delete", "delete", "duplicate", "retitle")


@dataclass(frozen=True)
class Snapshot:
    """The collection-scope nodes by id, and each document root's parent (as a place)."""

    nodes: dict[int, TreeNodeRow]
    shape: list[tuple[Any, ...]]
    root_parents: list[tuple[int, tuple[int, ...] | None]]


def _place(node: TreeNodeRow) -> tuple[int, ...]:
    return (node.level, node.position, node.leaf_start, node.leaf_end)


def _snapshot(session: Any, collection_id: int) -> Snapshot:
    nodes = {node.id: node for node in repository.collection_scope_nodes(session, collection_id)}

    def parent(node_id: int | None) -> tuple[int, ...] | None:
        return None if node_id is None else _place(nodes[node_id])  # never a dangling parent

    shape = sorted(
        (
            _place(node),
            node.text,
            node.text_hash,
            node.children_hash,
            node.token_count,
            node.char_start,
            node.char_end,
            node.summarizer,
            parent(node.parent_id),
        )
        for node in nodes.values()
    )
    roots = [
        (root.document_id, parent(root.parent_id))
        for root in repository.document_root_rows(session, collection_id)
        if root.node_id is not None
    ]
    return Snapshot(nodes=nodes, shape=shape, root_parents=roots)


def _from_scratch(col: wp.Collection) -> Snapshot:
    """What `rebuild_collection_levels` makes of the stored documents, rolled back."""
    target = col._ingest_target()
    with col._context.sessions() as session:
        rebuild_collection_levels(
            session,
            col.collection_id,
            target.tree_builder(SessionSummaryCache(session)),
            summarizer_id=target.summarizer.summarizer_id,
        )
        snapshot = _snapshot(session, col.collection_id)
        session.rollback()
    return snapshot


def _stored(col: wp.Collection) -> Snapshot:
    with col._context.sessions() as session:
        return _snapshot(session, col.collection_id)


@pytest.fixture
def updates(monkeypatch: pytest.MonkeyPatch) -> list[CollectionLevels]:
    """What each write's `update_collection_levels` returned, in order."""
    seen: list[CollectionLevels] = []

    def recording(*args: Any, **kwargs: Any) -> CollectionLevels:
        result = update_collection_levels(*args, **kwargs)
        seen.append(result)
        return result

    monkeypatch.setattr(pipeline, "update_collection_levels", recording)
    return seen


def _apply(
    col: wp.Collection, rng: random.Random, operation: Operation, serial: int, *, exists: bool
) -> bool:
    """Run one operation; False when there is nothing to do it to (nothing was written)."""
    what, pick, size = operation
    stored = [info.id for info in col.documents()] if exists else []
    if what == "add":
        col.add([_document(rng, f"doc-{serial}", size)])
    elif what == "add many":
        col.add([_document(rng, f"doc-{serial}-{n}", size + n) for n in range(1 + pick % 9)])
    elif not stored:
        return False
    elif what == "replace":
        col.add([_document(rng, stored[pick % len(stored)], size)])
    elif what == "delete":
        col.delete(stored[pick % len(stored)])
    else:
        original = col.get(stored[pick % len(stored)])
        # A copy under a new id has the same root hash; a new title changes only the outline.
        new_id = f"doc-{serial}" if what == "duplicate" else original.id
        title = original.title if what == "duplicate" else f"Retitled {serial}"
        col.add([wp.Document(text=original.text, id=new_id, title=title, kind=original.kind)])
    return True


def _check_write(before: Snapshot, after: Snapshot, update: CollectionLevels) -> None:
    """The update's delta is exactly what changed, and nothing it could keep was written."""
    removed, added = set(update.removed_ids), {row.id for row in update.added}
    assert removed <= set(before.nodes) and added <= set(after.nodes)
    kept = set(before.nodes) - removed
    # SQLite may hand a removed row's id to an added one: the id then names a new node.
    assert set(after.nodes) == kept | added and not kept & added
    for node_id in kept:
        old, new = before.nodes[node_id], after.nodes[node_id]
        assert (old.text, old.children_hash, old.token_count) == (
            new.text,
            new.children_hash,
            new.token_count,
        )
    old_hashes = Counter(node.children_hash for node in before.nodes.values())
    new_hashes = Counter(node.children_hash for node in after.nodes.values())
    written = Counter(row.children_hash for row in update.added)
    for children_hash, count in new_hashes.items():
        assert written[children_hash] == count - min(count, old_hashes[children_hash])


def _check_indexes(col: wp.Collection) -> None:
    """The published dense index holds exactly the stored chunks and nodes."""
    indexes = col._context.indexes.current(col.collection_id)
    with col._context.sessions() as session:
        (chunk_ids, _), (node_ids, _) = repository.unit_hashes(session, col.collection_id)
    expected = set(chunk_ids) | {node_index_id(node_id) for node_id in node_ids}
    assert indexes.dense.size == len(expected)
    query = np.ones((1, indexes.dense.dimension), dtype=np.float32)
    ids, _ = indexes.dense.search(query, len(expected))
    assert set(np.asarray(ids).ravel().tolist()) == expected


def _run_history(
    store: wp.Store, operations: Sequence[Operation], seed: int, updates: list[CollectionLevels]
) -> None:
    """Each operation in turn, each write checked against a rebuild from scratch."""
    rng = random.Random(seed)
    first = len(updates)  # hypothesis runs its examples with one fixture
    col = store.collection("docs")
    for serial, operation in enumerate(operations):
        done = len(updates)
        before = _stored(col) if done > first else Snapshot({}, [], [])
        if not _apply(col, rng, operation, serial, exists=done > first):
            continue
        assert len(updates) == done + 1, operation  # one regrouping per write
        after = _stored(col)
        expected = _from_scratch(col)
        assert after.shape == expected.shape, operation
        assert after.root_parents == expected.root_parents, operation
        _check_write(before, after, updates[-1])
    if len(updates) > first:  # something was written
        _check_indexes(col)


def _long_history(seed: int) -> list[Operation]:
    """Enough documents for four levels at fan-out 3, then writes anywhere in them."""
    rng = random.Random(seed)
    history: list[Operation] = [("add many", 8, 2)] * 4
    return history + [
        (rng.choice(OPERATIONS), rng.randrange(1_000), rng.randint(1, 10)) for _ in range(25)
    ]


FANOUT_3 = StoreConfig(embedder="hash", chunk_tokens=24, fanout=3)


operations = st.lists(
    st.tuples(st.sampled_from(OPERATIONS), st.integers(0, 1_000), st.integers(1, 14)),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(history=operations, seed=st.integers(0, 10_000), fanout=st.sampled_from([2, 3]))
def test_random_writes_keep_the_levels_a_rebuild_makes(
    tmp_path_factory: pytest.TempPathFactory,
    updates: list[CollectionLevels],
    history: list[Operation],
    seed: int,
    fanout: int,
) -> None:
    config = StoreConfig(embedder="hash", chunk_tokens=24, fanout=fanout)
    with wp.open(tmp_path_factory.mktemp("levels"), config=config) as store:
        _run_history(store, history, seed, updates)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_long_history_keeps_the_levels_a_rebuild_makes(
    tmp_path: Path, updates: list[CollectionLevels], seed: int
) -> None:
    with wp.open(tmp_path, config=FANOUT_3) as store:
        _run_history(store, _long_history(seed), seed, updates)


def test_a_long_history_on_postgres_keeps_the_levels_a_rebuild_makes(
    postgres_url: str, tmp_path: Path, updates: list[CollectionLevels]
) -> None:
    """The same on PostgreSQL, which hands out no deleted row's id again."""
    with wp.open(postgres_url, index_dir=tmp_path / "indexes", config=FANOUT_3) as store:
        _run_history(store, _long_history(3), 3, updates)


class CountingCounter:
    """A token counter that counts the texts it is asked to count."""

    def __init__(self, counter: TokenCounter) -> None:
        self._counter = counter
        self.texts = 0

    @property
    def name(self) -> str:
        return self._counter.name

    def count(self, text: str) -> int:
        self.texts += 1
        return self._counter.count(text)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        self.texts += len(texts)
        return self._counter.count_many(texts)

    def cut_points(self, text: str, max_tokens: int) -> list[int]:
        return self._counter.cut_points(text, max_tokens)


@dataclass(frozen=True)
class Cost:
    """What one regrouping did: its delta, the texts it counted, the nodes it rendered."""

    levels: CollectionLevels
    texts_counted: int
    renders: int


def _counting(
    col: wp.Collection, regroup: Callable[..., CollectionLevels], costs: list[Cost]
) -> Callable[..., CollectionLevels]:
    """`regroup` (the pipeline's call) with a builder whose counter counts, its cost noted."""
    target = col._ingest_target()

    def counted(
        session: Any, collection_id: int, _builder: TreeBuilder, **kwargs: Any
    ) -> CollectionLevels:
        counter = CountingCounter(target.counter)
        builder = TreeBuilder(
            target.summarizer,
            counter,
            SessionSummaryCache(session),
            fallback=target.fallback_summarizer,
            fanout=target.fanout,
        )
        levels = regroup(session, collection_id, builder, **kwargs)
        costs.append(Cost(levels, counter.texts, builder.stats.outlined))
        return levels

    return counted


def _append_cost(
    documents: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    regroup: Callable[..., CollectionLevels],
) -> tuple[Cost, int]:
    """The cost of appending one document to `documents` (with `regroup` in the pipeline),
    and how many levels the collection then has."""
    rng = random.Random(documents)
    costs: list[Cost] = []
    with wp.open(tmp_path / f"store-{documents}", config=FANOUT_3) as store:
        col = store.collection("docs")
        col.add([_document(rng, f"doc-{n}", 4) for n in range(documents)])
        with monkeypatch.context() as patch:
            patch.setattr(pipeline, "update_collection_levels", _counting(col, regroup, costs))
            col.add([_document(rng, "doc-appended", 4)])
        with col._context.sessions() as session:
            levels = len(
                {row.level for row in repository.collection_node_rows(session, col.collection_id)}
            )
    return costs[-1], levels


@pytest.mark.parametrize("documents", [40, 400])
def test_an_append_renders_and_writes_one_node_per_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, documents: int
) -> None:
    cost, levels = _append_cost(documents, tmp_path, monkeypatch, update_collection_levels)
    # The last node of each level, and a new root when the levels grow by one.
    assert len(cost.levels.added) <= levels
    assert len(cost.levels.removed_ids) <= levels
    assert cost.renders <= levels
    # Each render tries a few details, then thins its entries (a few steps more).
    assert cost.texts_counted <= 25 * levels
    rebuilt, _ = _append_cost(
        documents, tmp_path / "rebuilt", monkeypatch, rebuild_collection_levels
    )
    # A rebuild renders and counts every node: ~documents / (fan-out - 1).
    assert rebuilt.renders >= documents // 2
    assert len(rebuilt.levels.added) >= documents // 2


def test_the_roots_are_read_one_row_per_document(tmp_path: Path) -> None:
    """`document_root_rows` gives each document's highest node (or its only chunk), in
    collection order: what reading every node and every first chunk finds."""
    rng = random.Random(7)
    with wp.open(tmp_path, config=FANOUT_3) as store:
        col = store.collection("docs")
        col.add([_document(rng, f"doc-{n}", rng.choice([1, 2, 6, 30])) for n in range(12)])
        col.delete("doc-3")
        col.add([_document(rng, "doc-5", 1)])  # replaced by a document of one chunk
        with col._context.sessions() as session:
            rows = repository.document_root_rows(session, col.collection_id)
            top = _top_document_nodes(session, col.collection_id)
            first = {
                chunk.document_id: chunk
                for chunk in session.scalars(
                    select(ChunkRow).where(
                        ChunkRow.collection_id == col.collection_id, ChunkRow.ordinal == 0
                    )
                )
            }
            titles = {
                document.id: document.title or document.external_id
                for document in session.scalars(
                    select(DocumentRow).where(DocumentRow.collection_id == col.collection_id)
                )
            }
            order = repository.document_ids(session, col.collection_id)
    assert [row.document_id for row in rows] == order
    assert any(row.node_id is None for row in rows) and any(row.node_id for row in rows)
    for row in rows:
        assert (row.title or row.external_id) == titles[row.document_id]
        node, chunk = top.get(row.document_id), first[row.document_id]
        if node is None:
            assert (row.node_id, row.text, row.content_hash, row.level) == (
                None,
                chunk.text,
                chunk.text_hash,
                0,
            )
        else:
            assert (row.node_id, row.parent_id, row.text, row.content_hash, row.level) == (
                node.id,
                node.parent_id,
                node.text,
                node.children_hash,
                node.level,
            )


def _top_document_nodes(session: Any, collection_id: int) -> dict[int, TreeNodeRow]:
    """Each document's highest node, found the plain way: reading every document-scope node."""
    top: dict[int, TreeNodeRow] = {}
    for node in session.scalars(
        select(TreeNodeRow).where(
            TreeNodeRow.collection_id == collection_id, TreeNodeRow.document_id.is_not(None)
        )
    ):
        best = top.get(node.document_id)
        if best is None or node.level > best.level:
            top[node.document_id] = node
    return top
