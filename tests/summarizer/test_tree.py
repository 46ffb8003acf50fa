"""The summary tree through a real store: shape, spans, incrementality, faults, access."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.ingest import pipeline as ingest_module
from windowpack.storage import repository
from windowpack.storage.schema import ChunkRow, DocumentRow, TreeNodeRow
from windowpack.summarizer.tree import estimate_tree_cost, even_groups, fixed_groups
from windowpack.text.sentences import split_sentences
from windowpack.text.tokens import TokenCounter

CONFIG = StoreConfig(embedder="hash", chunk_tokens=24, fanout=3)
WORDS = [
    "glacier",
    "basalt",
    "meadow",
    "falcon",
    "harbor",
    "lantern",
    "orchard",
    "quarry",
    "river",
    "summit",
    "tundra",
]


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(3, 9))]
    return " ".join(words).capitalize() + "."


def _document(rng: random.Random, doc_id: str, sentences: int) -> wp.Document:
    paragraphs = []
    while sentences > 0:
        take = min(sentences, rng.randint(1, 4))
        paragraphs.append(" ".join(_sentence(rng) for _ in range(take)))
        sentences -= take
    return wp.Document(text="\n\n".join(paragraphs), id=doc_id, title=doc_id.upper())


def _corpus(seed: int, sizes: Sequence[int]) -> list[wp.Document]:
    rng = random.Random(seed)
    return [_document(rng, f"doc-{i}", size) for i, size in enumerate(sizes)]


def _nodes(col: wp.Collection) -> list[TreeNodeRow]:
    with col._context.sessions() as session:
        return repository.tree_nodes(session, col.collection_id)


def _chunks_by_document(col: wp.Collection) -> dict[int, list[ChunkRow]]:
    with col._context.sessions() as session:
        documents = repository.list_documents(session, col.collection_id)
        return {doc.id: repository.chunk_rows(session, doc.id) for doc in documents}


def _document_texts(col: wp.Collection) -> dict[int, str]:
    with col._context.sessions() as session:
        return {doc.id: doc.text for doc in repository.list_documents(session, col.collection_id)}


def _check_tree(col: wp.Collection) -> None:
    """Every structural property of design §3, checked on the stored tree."""
    nodes = _nodes(col)
    by_id = {node.id: node for node in nodes}
    chunks = _chunks_by_document(col)
    texts = _document_texts(col)
    for document_id, rows in chunks.items():
        doc_nodes = [node for node in nodes if node.document_id == document_id]
        if len(rows) == 1:
            assert doc_nodes == []  # a single chunk is its own root
            continue
        top = max(node.level for node in doc_nodes)
        assert [node.level for node in doc_nodes].count(top) == 1  # one root per document
        for level in range(1, top + 1):
            spans = sorted(
                (node.leaf_start, node.leaf_end) for node in doc_nodes if node.level == level
            )
            # Siblings of a level are contiguous, ordered, and cover every leaf exactly once:
            # so every leaf has exactly one path up to the root.
            assert spans[0][0] == 0 and spans[-1][1] == len(rows)
            assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
        for node in doc_nodes:
            children = [n for n in doc_nodes if n.parent_id == node.id]
            if node.level > 1:
                assert (node.leaf_start, node.leaf_end) == (
                    min(c.leaf_start for c in children),
                    max(c.leaf_end for c in children),
                )
            assert node.char_start == rows[node.leaf_start].char_start
            assert node.char_end == rows[node.leaf_end - 1].char_end
            span_text = texts[document_id][node.char_start : node.char_end]
            # Extractive summaries are made of sentences that occur verbatim in the span.
            for span in split_sentences(node.text):
                sentence = node.text[span.start : span.end]
                assert sentence in span_text, (sentence, node.id)
            if node.level == top:
                parent = by_id.get(node.parent_id) if node.parent_id else None
                assert parent is None or parent.document_id is None
    _check_collection_levels([node for node in nodes if node.document_id is None], len(chunks))


def _check_collection_levels(nodes: list[TreeNodeRow], documents: int) -> None:
    """Collection levels group document roots in order, up to exactly one collection root."""
    if documents < 2:
        assert nodes == []
        return
    levels = sorted({node.level for node in nodes})
    for level in levels:
        spans = sorted((n.leaf_start, n.leaf_end) for n in nodes if n.level == level)
        assert spans[0][0] == 0 and spans[-1][1] == documents
        assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    assert len([node for node in nodes if node.level == levels[-1]]) == 1
    assert [node.parent_id for node in nodes if node.level == levels[-1]] == [None]


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10_000),
    sizes=st.lists(st.integers(1, 40), min_size=1, max_size=7),
)
def test_tree_structure_holds_for_random_corpora(
    tmp_path_factory: pytest.TempPathFactory, seed: int, sizes: list[int]
) -> None:
    with wp.open(tmp_path_factory.mktemp("tree"), config=CONFIG) as store:
        col = store.collection("docs")
        col.add(_corpus(seed, sizes))
        _check_tree(col)
        overview = col.tree()
        assert overview.documents == len(sizes)
        assert overview.chunks == sum(len(rows) for rows in _chunks_by_document(col).values())


@given(count=st.integers(0, 500), fanout=st.integers(2, 16))
def test_even_groups_are_contiguous_and_balanced(count: int, fanout: int) -> None:
    groups = even_groups(count, fanout)
    assert sum(end - start for start, end in groups) == count
    assert all(a[1] == b[0] for a, b in itertools.pairwise(groups))
    sizes = [end - start for start, end in groups]
    assert all(1 <= size <= fanout for size in sizes)
    assert not sizes or max(sizes) - min(sizes) <= 1


def test_each_level_compresses_by_about_the_fanout(tmp_path: Path) -> None:
    config = StoreConfig(embedder="hash", chunk_tokens=40, fanout=4)
    with wp.open(tmp_path, config=config) as store:
        col = store.collection("docs")
        col.add(_corpus(3, [120, 90]))
        overview = col.tree()
    document_levels = [level for level in overview.levels if level.scope == "document"]
    assert [level.level for level in document_levels] == sorted(
        level.level for level in document_levels
    )
    assert document_levels[0].tokens <= overview.chunk_tokens / 4 * 1.2
    assert 0.1 <= overview.summary_ratio <= 0.5


def test_changing_one_document_leaves_the_other_documents_nodes_alone(tmp_path: Path) -> None:
    with wp.open(tmp_path, config=CONFIG) as store:
        col = store.collection("docs")
        documents = _corpus(11, [20, 25, 18, 30, 22])
        col.add(documents)
        before = {(n.document_id, n.level, n.position): n for n in _nodes(col)}
        changed = _document(random.Random(99), "doc-2", 18)
        report = col.add([changed])
        after = {(n.document_id, n.level, n.position): n for n in _nodes(col)}
        _check_tree(col)
    with store.sessions() as session:  # type: ignore[attr-defined]
        ids = {row.external_id: row.id for row in session.query(DocumentRow)}
    for key, node in before.items():
        if key[0] not in (None, ids["doc-2"]) and key[0] in {k[0] for k in after}:
            assert after[key].children_hash == node.children_hash
            assert after[key].id == node.id  # untouched rows, not rewritten
    assert report.summaries <= len([n for n in after.values() if n.document_id == ids["doc-2"]]) + 4


def test_re_adding_an_unchanged_corpus_summarises_nothing(tmp_path: Path) -> None:
    with wp.open(tmp_path, config=CONFIG) as store:
        col = store.collection("docs")
        documents = _corpus(5, [12, 14])
        assert col.add(documents).summaries > 0
        col.delete("doc-1")
        report = col.add(documents[1:])  # the same text again: its summaries are cached
        assert report.summaries == 0


def test_small_documents_and_empty_collections(tmp_path: Path) -> None:
    with wp.open(tmp_path, config=CONFIG) as store:
        col = store.create_collection("docs")
        empty = col.tree()
        assert (empty.documents, empty.chunks, empty.levels, empty.root_id) == (0, 0, [], None)
        col.add([wp.Document(text="One short sentence.", id="tiny")])
        single = col.tree()
        assert single.levels == [] and single.root_id is None and single.chunks == 1
        col.add([wp.Document(text="Another short sentence.", id="tiny-2")])
        two = col.tree()
        assert [(lv.scope, lv.nodes) for lv in two.levels] == [("collection", 1)]
        root = col.node(two.root_id or -1)
        assert [child.kind for child in root.children] == ["chunk", "chunk"]
        assert [child.document_id for child in root.children] == ["tiny", "tiny-2"]


def test_node_access_walks_from_the_root_to_chunks(tmp_path: Path) -> None:
    with wp.open(tmp_path, config=CONFIG) as store:
        col = store.collection("docs")
        col.add(_corpus(8, [30, 10]))
        node = col.node(col.tree().root_id or -1)
        while node.children and node.children[0].kind == "node":
            assert all(child.node_id is not None for child in node.children)
            node = col.node(node.children[0].node_id or -1)
        assert node.level == 1 and node.document_id == "doc-0"
        assert [child.ordinal for child in node.children] == list(
            range(node.leaf_start, node.leaf_end)
        )
        with pytest.raises(wp.NotFoundError, match="node 999999"):
            col.node(999_999)


class _FlakySummarizer:
    """Fails on any node whose children mention the word 'quarry'."""

    summarizer_id = "flaky-v1"

    def summarize(
        self, children: Sequence[str], *, target_tokens: int, counter: TokenCounter
    ) -> str:
        if any("quarry" in child.lower() for child in children):
            raise TimeoutError("the model took too long")
        text = children[0]
        return text if counter.count(text) <= target_tokens else text.split(".")[0][:20]


def test_a_failing_summarizer_falls_back_to_extractive_and_reports(tmp_path: Path) -> None:
    with wp.open(tmp_path, config=CONFIG, summarizer=_FlakySummarizer()) as store:
        col = store.collection("docs")
        report = col.add(_corpus(2, [25, 25]))
        assert report.summary_failures
        assert all("TimeoutError" in reason for reason in report.summary_failures.values())
        assert any("node" in label for label in report.summary_failures)
        _check_tree(col)


def test_a_crash_during_the_tree_build_keeps_the_previous_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with wp.open(tmp_path, config=CONFIG) as store:
        col = store.collection("docs")
        col.add(_corpus(4, [15, 15]))
        before = [(n.id, n.children_hash, n.text) for n in _nodes(col)]
        version = col.index_version

        def crash(*_args: object, **_kwargs: object) -> None:
            raise RuntimeError("crash while regrouping the collection")

        monkeypatch.setattr(ingest_module, "update_collection_levels", crash)
        with pytest.raises(RuntimeError, match="crash while regrouping"):
            col.add([*_corpus(9, [15]), _document(random.Random(1), "doc-new", 12)])
        monkeypatch.undo()
        assert [(n.id, n.children_hash, n.text) for n in _nodes(col)] == before
        assert col.index_version == version
        assert [info.id for info in col.documents()] == ["doc-0", "doc-1"]
        assert col.search("glacier", k=1, include_summaries=True)


def test_rebuild_with_another_summarizer_replaces_every_node(tmp_path: Path) -> None:
    with wp.open(tmp_path, config=CONFIG) as store:
        col = store.collection("docs")
        col.add(_corpus(6, [20, 16, 9]))
        shape = [(lv.scope, lv.level, lv.nodes) for lv in col.tree().levels]
        report = col.rebuild_tree(_FlakySummarizer())
        assert report.summaries > 0
        assert {node.summarizer for node in _nodes(col)} == {"flaky-v1"}
        assert [(lv.scope, lv.level, lv.nodes) for lv in col.tree().levels] == shape
        _check_tree(col)


def test_search_can_return_summaries(tmp_path: Path) -> None:
    with wp.open(tmp_path, config=CONFIG) as store:
        col = store.collection("docs")
        col.add(_corpus(7, [30, 30]))
        plain = col.search("glacier harbor", k=50)
        assert plain and all(hit.kind == "chunk" and hit.level == 0 for hit in plain)
        mixed = col.search("glacier harbor", k=200, include_summaries=True)
        summaries = [hit for hit in mixed if hit.kind == "summary"]
        assert summaries and all(hit.level >= 1 and hit.node_id for hit in summaries)
        document_summary = next(hit for hit in summaries if hit.document_id is not None)
        assert document_summary.last_ordinal is not None
        assert document_summary.last_ordinal >= document_summary.ordinal


def test_the_tree_builds_on_postgres_too(any_database_store: wp.Store) -> None:
    col = any_database_store.collection("docs")
    col.add(_corpus(12, [14, 9, 1]))
    _check_tree(col)
    col.delete("doc-1")
    _check_tree(col)
    assert col.tree().documents == 2


def test_the_cost_estimate_follows_the_tree_shape() -> None:
    one = estimate_tree_cost([[100] * 8], fanout=8, overhead_per_call=10)
    assert (one.calls, one.input_tokens, one.output_tokens) == (1, 810, 100)
    # Two documents of 9 chunks: 2 + 1 calls each, then one collection root over both roots.
    two = estimate_tree_cost([[80] * 9, [80] * 9], fanout=8)
    level_one = [max(32, -(-5 * 80 // 8)), max(32, -(-4 * 80 // 8))]  # 50, 40
    root = max(32, -(-sum(level_one) // 8))
    assert two.calls == 2 * 3 + 1
    assert two.output_tokens == 2 * (sum(level_one) + root) + max(32, -(-2 * root // 8))
    assert estimate_tree_cost([[50]], fanout=8).calls == 0


def test_appending_a_document_changes_only_the_collection_path(tmp_path: Path) -> None:
    with wp.open(tmp_path, config=CONFIG) as store:
        col = store.collection("docs")
        col.add(_corpus(21, [3] * 20))
        before = {n.children_hash for n in _nodes(col) if n.document_id is None}
        levels_before = {n.level for n in _nodes(col) if n.document_id is None}
        col.add([_document(random.Random(5), "doc-appended", 4)])
        after = [n for n in _nodes(col) if n.document_id is None]
        _check_tree(col)
    new = [node for node in after if node.children_hash not in before]
    # One new node per collection level on the path from the new document to the root.
    assert len(new) <= len(levels_before) + 1
    assert len({node.level for node in new}) == len(new)


@given(count=st.integers(0, 300), fanout=st.integers(2, 16))
def test_fixed_groups_only_the_last_run_is_short(count: int, fanout: int) -> None:
    groups = fixed_groups(count, fanout)
    assert sum(end - start for start, end in groups) == count
    assert all(end - start == fanout for start, end in groups[:-1])
    assert fixed_groups(count + 1, fanout)[: max(0, len(groups) - 1)] == groups[:-1]
