"""Deletes by ids and by metadata filter: one call, one transaction, one index version."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import windowpack as wp
from windowpack.filters import parse_filter
from windowpack.ingest import pipeline

QUESTION = "Which otter carried the lantern?"


def _documents(count: int) -> list[wp.Document]:
    rng = random.Random(count)
    words = ["otter", "lantern", "glacier", "meadow", "falcon", "quarry", "ember", "tundra"]
    return [
        wp.Document(
            text=" ".join(rng.choice(words) for _ in range(40)) + f" mk{i}.",
            id=f"d{i}",
            metadata={"team": ["ops", "infra", "data"][i % 3], "year": 2000 + i},
        )
        for i in range(count)
    ]


@pytest.fixture
def filled(hash_store: wp.Store) -> wp.Collection:
    """A collection of 90 small documents with a team and a year each."""
    collection = hash_store.collection("docs")
    collection.add(_documents(90))
    return collection


def test_deleting_many_documents_moves_the_index_version_by_one(filled: wp.Collection) -> None:
    before = filled.index_version
    ids = [f"d{i}" for i in range(85)]
    report = filled.delete(ids)
    assert report == wp.DeleteReport(deleted=tuple(ids), missing=(), index_version=before + 1)
    assert filled.index_version == before + 1
    assert sorted(info.id for info in filled.documents()) == ["d85", "d86", "d87", "d88", "d89"]
    found = {hit.document_id for hit in filled.search(QUESTION, k=50)}
    assert found <= {"d85", "d86", "d87", "d88", "d89"}


def test_ids_not_stored_are_reported_in_a_list_and_one_alone_is_not_found(
    filled: wp.Collection,
) -> None:
    report = filled.delete(["d1", "nope", "d2", "d1"])
    assert report.deleted == ("d1", "d2") and report.missing == ("nope",)
    version = filled.index_version
    with pytest.raises(wp.DocumentNotFoundError):
        filled.delete("nope")
    with pytest.raises(wp.DocumentNotFoundError):
        filled.delete("d1")  # deleted already
    assert filled.index_version == version
    assert filled.delete("d3") == wp.DeleteReport(deleted=("d3",), index_version=version + 1)


def test_deleting_nothing_leaves_the_version_unchanged(filled: wp.Collection) -> None:
    version = filled.index_version
    assert filled.delete(["nope"]).index_version == version
    assert filled.delete(where={"team": "nobody"}) == wp.DeleteReport(index_version=version)
    assert filled.delete([]) == wp.DeleteReport(index_version=version)
    assert filled.index_version == version and len(filled) == 90


def test_ids_and_where_together_delete_the_listed_documents_the_filter_keeps(
    filled: wp.Collection,
) -> None:
    report = filled.delete(["d0", "d1", "d3", "nope"], where={"team": "ops"})
    assert report.deleted == ("d0", "d3") and report.missing == ("nope",)
    assert filled.delete("d1", where={"team": "ops"}).deleted == ()  # kept: not ops
    assert "d1" in {info.id for info in filled.documents()}


def test_where_alone_deletes_every_document_it_keeps(filled: wp.Collection) -> None:
    report = filled.delete(where={"year": {"$gte": 2080}, "team": {"$in": ["ops", "data"]}})
    expected = [f"d{i}" for i in range(80, 90) if i % 3 in (0, 2)]
    assert list(report.deleted) == expected
    left = {info.id for info in filled.documents()}
    assert not left & set(expected) and len(left) == 90 - len(expected)


def test_a_delete_needs_ids_or_a_filter_and_checks_both(filled: wp.Collection) -> None:
    with pytest.raises(wp.InvalidArgumentError) as raised:
        filled.delete()
    assert raised.value.argument == "ids"
    with pytest.raises(wp.InvalidArgumentError) as raised:
        filled.delete(where={})  # an empty filter is no filter: it never means "all"
    assert raised.value.argument == "ids"
    with pytest.raises(wp.InvalidArgumentError) as raised:
        filled.delete(where={"year": {"$gt": []}})
    assert raised.value.argument.startswith("where.year")
    with pytest.raises(wp.InvalidArgumentError) as raised:
        filled.delete(["d1", 7])  # type: ignore[list-item]
    assert raised.value.argument == "ids"
    assert len(filled) == 90


def test_a_filter_that_keeps_every_document_deletes_only_with_all(
    any_database_store: wp.Store,
) -> None:
    collection = any_database_store.collection("docs")
    collection.add(_documents(6))
    version = collection.index_version
    with pytest.raises(wp.InvalidArgumentError) as refused:
        collection.delete(where={"year": {"$gte": 2000}})
    assert refused.value.argument == "all" and "all 6 documents" in str(refused.value)
    assert len(collection) == 6 and collection.index_version == version
    # Listed ids are explicit, and a filter keeping some documents is not guarded.
    assert collection.delete(where={"team": "ops"}).deleted == ("d0", "d3")
    report = collection.delete(where={"year": {"$gte": 2000}}, all=True)
    assert report.deleted == ("d1", "d2", "d4", "d5") and len(collection) == 0


def test_a_crash_inside_the_delete_leaves_the_store_as_it_was(
    filled: wp.Collection, monkeypatch: pytest.MonkeyPatch
) -> None:
    version = filled.index_version
    before = filled.pack(QUESTION, budget=600).text

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("power cut")

    # After the rows are deleted, inside the same transaction, before the commit.
    monkeypatch.setattr(pipeline, "update_collection_levels", crash)
    with pytest.raises(RuntimeError):
        filled.delete(where={"team": "ops"})
    monkeypatch.undo()
    assert filled.index_version == version and len(filled) == 90
    assert filled.pack(QUESTION, budget=600).text == before
    assert filled.delete(where={"team": "ops"}).index_version == version + 1
    assert len(filled) == 60


def test_the_collection_levels_are_regrouped_once_over_what_is_left(
    filled: wp.Collection,
) -> None:
    filled.delete(where={"team": {"$ne": "ops"}})
    left = {f"d{i}" for i in range(0, 90, 3)}
    window = filled.pack(QUESTION, budget=100_000)
    assert {item.document_id for item in window.items} == left
    tree = filled.tree()
    assert (tree.documents, tree.root_id is not None) == (30, True)
    # The overview's collection-level summaries speak of the documents left only.
    overview = filled.pack(QUESTION, budget=900, overview_tokens=400)
    assert overview.cacheable_prefix_tokens > 0
    assert {f"d{n}" for n in re.findall(r"\bmk(\d+)\b", overview.text)} <= left


@settings(max_examples=8, deadline=None)
@given(
    where=st.sampled_from(
        [
            {"team": "ops"},
            {"year": {"$lt": 2010}},
            {"$or": [{"team": "data"}, {"year": {"$gte": 2020}}]},
            {"$not": {"team": "infra"}},
            {"team": "nobody"},
        ]
    ),
    listed=st.lists(st.integers(0, 29), max_size=8),
    use_ids=st.booleans(),
)
def test_a_delete_removes_exactly_what_it_names_in_one_version(
    tmp_path_factory: pytest.TempPathFactory,
    where: dict[str, Any],
    listed: list[int],
    use_ids: bool,
) -> None:
    config = wp.StoreConfig(embedder="hash", chunk_tokens=64)
    with wp.open(tmp_path_factory.mktemp("deletes"), config=config) as store:
        collection = store.collection("c")
        documents = _documents(30)
        collection.add(documents)
        version = collection.index_version
        ids = [f"d{i}" for i in listed] if use_ids else None
        parsed = parse_filter(where)
        assert parsed is not None
        expected = [
            d.id for d in documents if parsed.matches(d.metadata) and (ids is None or d.id in ids)
        ]
        report = collection.delete(ids, where=where)
        assert list(report.deleted) == expected
        assert report.index_version == collection.index_version == version + bool(expected)
        left = {info.id for info in collection.documents()}
        assert left == {d.id for d in documents} - set(expected)
