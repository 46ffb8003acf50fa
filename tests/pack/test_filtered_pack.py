"""Metadata filters inside search and pack: the properties of any window, over the documents
a filter keeps, and nothing of the others (their chunks, their summaries, the overview).

Every sentence of document i carries the marker word `mk<i>`, so a window that shows any
text of a document (a chunk, a summary of it, a collection-level summary built from it) is
seen to by its marker.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from random_corpora import SETTINGS, words

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.filters import parse_filter
from windowpack.storage import repository
from windowpack.text.tokens import get_token_counter

CONFIG = StoreConfig(embedder="hash", chunk_tokens=32, fanout=3)
TEAMS = ["ops", "infra", "data"]
QUESTION = "Where did the otter hide the lantern near the glacier?"
MARKER = re.compile(r"\bmk(\d+)\b")


def _metadata(rng: random.Random, index: int) -> dict[str, Any]:
    metadata: dict[str, Any] = {"year": 2015 + index % 10, "tags": rng.sample(["a", "b", "c"], 2)}
    if index % 7:  # some documents have no team at all
        metadata["team"] = TEAMS[index % 3]
    if index % 4 == 0:
        metadata["date"] = f"2024-0{1 + index % 9}-15"
    return metadata


def _corpus(seed: int, documents: int) -> list[wp.Document]:
    rng = random.Random(seed)
    result = []
    for index in range(documents):
        paragraphs = [
            " ".join(f"{words(rng, 3, 9)[:-1]} mk{index}." for _ in range(rng.randint(1, 3)))
            for _ in range(rng.randint(1, 6))
        ]
        result.append(
            wp.Document(
                text="\n\n".join(paragraphs),
                id=f"d{index}",
                title=f"Doc {index}",
                metadata=_metadata(rng, index),
            )
        )
    return result


FILTERS: list[dict[str, Any]] = [
    {"team": "ops"},
    {"team": {"$in": ["infra", "data"]}},
    {"year": {"$gte": 2020}},
    {"year": {"$lt": 2017}},
    {"$not": {"team": "ops"}},
    {"$or": [{"team": "data"}, {"year": 2015}]},
    {"tags": {"$contains": "a"}},
    {"date": {"$gte": "2024-03-01", "$lte": "2024-06-30"}},
    {"team": {"$exists": False}},
    {"team": "nobody"},
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[wp.Store]:
    """A few random corpora with metadata, built once; hypothesis draws among them."""
    with wp.open(tmp_path_factory.mktemp("filtered"), config=CONFIG) as opened:
        for seed, size in enumerate([1, 5, 12, 30]):
            opened.collection(f"c{seed}").add(_corpus(seed, size))
        yield opened


def _kept(collection: wp.Collection, where: dict[str, Any]) -> list[str]:
    parsed = parse_filter(where)
    assert parsed is not None
    return [info.id for info in collection.documents() if parsed.matches(info.metadata)]


def _chunk_texts(collection: wp.Collection, document_id: str) -> list[str]:
    document = collection.get(document_id)
    with collection._context.sessions() as session:
        rows = repository.documents_by_external_id(session, collection.collection_id, [document_id])
        chunks = repository.chunk_rows(session, rows[document_id].id)
    return [document.text[c.char_start : c.char_end] for c in chunks]


def _markers(text: str) -> set[str]:
    return {f"d{number}" for number in MARKER.findall(text)}


@SETTINGS
@given(
    seed=st.integers(0, 3),
    where=st.sampled_from(FILTERS),
    budget=st.integers(1, 3000),
    tokenizer=st.sampled_from(["o200k_base", "cl100k_base"]),
    headers=st.sampled_from(["compact", "full", "none"]),
)
def test_a_filtered_window_is_budgeted_and_shows_only_the_documents_the_filter_keeps(
    store: wp.Store, seed: int, where: dict[str, Any], budget: int, tokenizer: str, headers: Any
) -> None:
    collection = store.collection(f"c{seed}")
    kept = set(_kept(collection, where))
    window = collection.pack(
        QUESTION, budget=budget, tokenizer=tokenizer, headers=headers, where=where
    )
    assert get_token_counter(tokenizer).count(window.text) == window.tokens <= budget
    # No chunk, summary or overview of a document the filter drops, and every item is of
    # a kept document (a gap marker names none).
    assert _markers(window.text) <= kept
    assert {item.document_id for item in window.items if item.kind != "gap"} <= kept
    assert all(item.kind == "gap" or item.metadata is not None for item in window.items)
    if not window.text:
        assert window.reason
    if not kept:
        assert window.reason and "matches where" in window.reason
    again = collection.pack(
        QUESTION, budget=budget, tokenizer=tokenizer, headers=headers, where=dict(where)
    )
    assert again.text == window.text  # deterministic (and the cache keys by the filter)


@SETTINGS
@given(seed=st.integers(0, 3), where=st.sampled_from(FILTERS[:-1]))
def test_a_filtered_window_is_lossless_when_the_kept_documents_fit(
    store: wp.Store, seed: int, where: dict[str, Any]
) -> None:
    collection = store.collection(f"c{seed}")
    kept = _kept(collection, where)
    if not kept:
        return
    store.packer.window_cache.clear()
    window = collection.pack(QUESTION, budget=200_000, where=where)
    assert [item.kind for item in window.items] == ["chunk"] * len(window.items)
    assert [item.document_id for item in window.items] == sorted(
        (item.document_id for item in window.items), key=kept.index
    )
    position = 0
    for document_id in kept:  # every chunk of every kept document, verbatim, in order
        for text in _chunk_texts(collection, document_id):
            found = window.text.find(text, position)
            assert found >= 0, text[:60]
            position = found + len(text)
    assert _markers(window.text) == set(kept)


@SETTINGS
@given(
    seed=st.integers(0, 3),
    where=st.sampled_from(FILTERS),
    k=st.integers(1, 60),
    summaries=st.booleans(),
)
def test_every_hit_of_a_filtered_search_is_of_a_kept_document_and_k_are_found(
    store: wp.Store, seed: int, where: dict[str, Any], k: int, summaries: bool
) -> None:
    collection = store.collection(f"c{seed}")
    kept = set(_kept(collection, where))
    hits = collection.search(QUESTION, k=k, where=where, include_summaries=summaries)
    assert {hit.document_id for hit in hits} <= kept
    assert all(hit.document_id is not None for hit in hits)  # no collection-level node
    chunks = sum(len(_chunk_texts(collection, document_id)) for document_id in kept)
    if summaries:  # summaries of kept documents compete too
        assert min(k, chunks) <= len(hits) <= k
    else:
        assert len(hits) == min(k, chunks)


def test_a_store_pack_filters_every_collection_named(store: wp.Store) -> None:
    where = {"team": "infra"}
    window = store.pack(QUESTION, collections=["c2", "c3"], budget=1500, where=where)
    kept = {
        (name, document_id)
        for name in ("c2", "c3")
        for document_id in _kept(store.collection(name), where)
    }
    shown = {(item.collection, item.document_id) for item in window.items if item.kind != "gap"}
    assert shown and shown <= kept
    assert window.tokens <= 1500


def test_a_malformed_filter_names_where_and_the_path_inside_it(store: wp.Store) -> None:
    collection = store.collection("c3")
    with pytest.raises(wp.InvalidArgumentError) as raised:
        collection.pack(QUESTION, budget=500, where={"year": {"$gt": "soon"}})
    assert raised.value.argument == "where.year.$gt"
    with pytest.raises(wp.InvalidArgumentError) as raised:
        collection.search(QUESTION, where={"$and": [{"team": {"$oops": 1}}]})
    assert raised.value.argument == "where.$and[0].team.$oops"
    with pytest.raises(wp.InvalidArgumentError) as raised:
        collection.session(budget=500, where=["team"])  # type: ignore[arg-type]
    assert raised.value.argument == "where"


def test_a_parsed_filter_and_its_mapping_give_the_same_window(store: wp.Store) -> None:
    collection = store.collection("c3")
    parsed = parse_filter({"team": "data"})
    assert parsed is not None
    one = collection.pack(QUESTION, budget=700, where=parsed)
    hits = store.packer.cache_hits
    two = collection.pack(QUESTION, budget=700, where={"team": "data"})
    assert one.text == two.text and store.packer.cache_hits == hits + 1
    other = collection.pack(QUESTION, budget=700, where={"team": "ops"})
    assert other.text != one.text  # the cache keys by the filter


def test_a_filtered_session_stays_within_the_filter_and_extends(store: wp.Store) -> None:
    collection = store.collection("c3")
    where = {"year": {"$gte": 2020}}
    kept = set(_kept(collection, where))
    session = collection.session(budget=4000, where=where)
    for question in (QUESTION, "otter meadow", "falcon ember quarry"):
        window = session.pack(question)
        assert _markers(window.text) <= kept
    assert session.extends
    resumed = collection.session(budget=4000, where={"team": "ops"}, token=session.token)
    window = resumed.pack("saffron harbor")
    assert not resumed.extends and resumed.reason
    assert _markers(window.text) <= set(_kept(collection, {"team": "ops"}))


def test_filtered_states_are_held_within_their_bound(
    store: wp.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store.packer._filtered, "max_bytes", 1)
    collection = store.collection("c3")
    for year in range(2015, 2025):
        collection.pack(QUESTION, budget=600, where={"year": year})
    assert len(store.packer._filtered) == 1  # only the one in use outlives the bound


# --- applied inside retrieval, not after the top k --------------------------------------

NEEDLE = "The lantern is hidden under the third glacier stone, said the otter."


# Words neither the question nor the strong documents use.
_UNRELATED = ("copper", "violin", "orchard", "pebble", "walnut", "mirror", "candle", "ribbon")


def _strong_and_weak(documents: int) -> list[wp.Document]:
    """Documents that match the question strongly, and one (the last) that matches weakly:
    one sentence among unrelated ones (words no other document or the question uses: filler
    of the strong documents' words would be found by the feedback hop, whose terms are
    theirs)."""
    rng = random.Random(5)
    strong = "The otter hid the lantern near the glacier. Otter, lantern, glacier, hide."
    result = [
        wp.Document(
            text="\n\n".join(f"{strong} {words(rng, 3, 6)}" for _ in range(4)),
            id=f"strong{i}",
            metadata={"kept": False},
        )
        for i in range(documents - 1)
    ]
    weak = [
        " ".join(rng.choice(_UNRELATED) for _ in range(rng.randint(6, 10))).capitalize() + "."
        for _ in range(6)
    ]
    weak.insert(3, NEEDLE)
    result.append(wp.Document(text="\n\n".join(weak), id="weak", metadata={"kept": True}))
    return result


@pytest.mark.parametrize("ann_threshold", [10**9, 40], ids=["flat", "hnsw"])
def test_a_filter_keeping_one_percent_fills_the_window_from_that_one_percent(
    tmp_path: Any, ann_threshold: int
) -> None:
    config = StoreConfig(embedder="hash", chunk_tokens=32, fanout=3, ann_threshold=ann_threshold)
    with wp.open(tmp_path / "store", config=config) as opened:
        collection = opened.collection("c")
        collection.add(_strong_and_weak(100))
        weak_chunks = _chunk_texts(collection, "weak")
        # Unfiltered, the kept document is nowhere near the top: dropping hits after the
        # top k would leave nothing.
        top = collection.search(QUESTION, k=50)
        assert "weak" not in {hit.document_id for hit in top}
        hits = collection.search(QUESTION, k=len(weak_chunks), where={"kept": True})
        assert len(hits) == len(weak_chunks)
        assert {hit.document_id for hit in hits} == {"weak"}
        assert any(NEEDLE in hit.text for hit in hits[:2])
        budget = 60  # a few of its chunks, not all of it
        window = collection.pack(QUESTION, budget=budget, where={"kept": True})
        assert NEEDLE in window.text and window.tokens <= budget
        assert {item.document_id for item in window.items if item.kind != "gap"} == {"weak"}


def test_a_filter_follows_the_writes_of_each_new_version(tmp_path: Any) -> None:
    with wp.open(tmp_path / "store", config=CONFIG) as opened:
        collection = opened.collection("c")
        collection.add(_corpus(9, 12))
        where = {"team": "ops"}
        before = set(_kept(collection, where))
        assert _markers(collection.pack(QUESTION, budget=50_000, where=where).text) == before
        assert {hit.document_id for hit in collection.search(QUESTION, k=50, where=where)} <= before
        moved = next(iter(sorted(before)))
        document = collection.get(moved)
        changed = {**document.metadata, "team": "infra"}
        collection.add([wp.Document(text=document.text, id=moved, metadata=changed)])
        collection.add([wp.Document(text="Otter lantern glacier mk99.", id="d99", metadata=where)])
        after = (before - {moved}) | {"d99"}
        assert set(_kept(collection, where)) == after
        window = collection.pack(QUESTION, budget=50_000, where=where)
        assert _markers(window.text) == after
        hits = collection.search(QUESTION, k=50, where=where)
        assert {hit.document_id for hit in hits} == after


@pytest.mark.model
def test_with_the_real_model_a_filter_finds_its_documents_fact_and_nothing_else(
    tmp_path: Any,
) -> None:
    from windowpack.demo import PLANTED, demo_documents

    with wp.open(tmp_path / "demo") as opened:
        collection = opened.collection("demo")
        collection.add(demo_documents())
        fact = PLANTED[1]  # Cinder Bay's beacon
        where = {"station": {"$in": ["Cinder Bay", "Frostmere"]}}
        hits = collection.search(fact.question, k=5, where=where)
        assert hits[0].document_id == fact.document_id and fact.sentence in hits[0].text
        assert {hit.document_id for hit in hits} <= {fact.document_id, "reports/frostmere.txt"}
        window = collection.pack(fact.question, budget=400, where=where)
        assert fact.sentence in window.text and window.tokens <= 400
        elsewhere = collection.search(fact.question, k=5, where={"station": "Aurora"})
        assert {hit.document_id for hit in elsewhere} == {"reports/aurora.txt"}
