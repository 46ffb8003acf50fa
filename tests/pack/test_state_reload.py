"""A new version's state loaded with the previous one's counts equals a load from scratch."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.pack.loading import load_state
from windowpack.pack.state import PackingState, _tiles
from windowpack.storage import repository
from windowpack.text.tokens import TokenCounter, get_token_counter
from windowpack.types import Document, Window

# Few distinct sentences, so that documents share chunk texts and a text's count is reused
# across documents, and an upsert can keep some of a document's chunks.
SENTENCES = [
    "Harbour seals rest on sandbanks at low tide.",
    "Barn owls hunt voles over rough grassland at dusk.",
    "Otters fish the estuary when the water is slack.",
    "Kestrels hover over the verge, facing into the wind.",
]
CONFIG = StoreConfig(embedder="hash", chunk_tokens=64)
IDS = ["a", "b", "c", "d"]

_edit = st.one_of(
    st.tuples(
        st.just("add"),
        st.sampled_from(IDS),
        st.lists(st.integers(0, len(SENTENCES) - 1), min_size=1, max_size=40),
    ),
    st.tuples(st.just("delete"), st.sampled_from(IDS), st.just([])),
)


@settings(max_examples=12, deadline=None)
@given(edits=st.lists(_edit, min_size=1, max_size=5))
def test_incremental_states_and_windows_equal_fresh_loads(
    edits: list[tuple[str, str, list[int]]],
) -> None:
    with (
        tempfile.TemporaryDirectory() as folder,
        wp.open(Path(folder) / "store", config=CONFIG) as store,
    ):
        collection = store.collection("docs")
        collection.add([Document(id="base", text=_text([0, 1, 2, 3] * 20))])
        collection.pack("seals", budget=100_000)  # the packer now holds version 1's state
        for action, document_id, sentences in edits:
            if action == "add":
                collection.add([Document(id=document_id, text=_text(sentences))])
            elif document_id in {info.id for info in collection.documents()}:
                collection.delete(document_id)
            for budget in (300, 100_000):  # a trimmed window and a lossless one
                incremental = collection.pack("owls and seals", budget=budget)
                held = _held_state(store)
                fresh_state = _fresh_state(store, held.version)
                _assert_same_state(held, fresh_state)
                store._context.packer._states.clear()  # the next pack loads from scratch
                store._context.packer._windows.clear()
                _assert_same_window(incremental, collection.pack("owls and seals", budget=budget))


def test_a_reload_counts_only_the_new_texts(hash_store: wp.Store) -> None:
    collection = hash_store.collection("docs")
    collection.add([Document(id="seals", text=_text([0] * 30))])
    counter = _RecordingCounter(get_token_counter("o200k_base"))
    before = _load(hash_store, counter, None)
    collection.add([Document(id="owls", text=_text([1, 2] * 15))])
    counter.counted.clear()
    after = _load(hash_store, counter, before)
    counted = set(counter.counted)
    known = set(_tiles(before.documents)) | {node.text for node in before.nodes}
    new = set(_tiles([after.documents[1]])) - known
    # Nothing version 1 counted is counted again; every new chunk of the added document is.
    assert new and new <= counted and counted.isdisjoint(known)
    _assert_same_state(after, _fresh_state(hash_store, after.version))


def test_counts_from_another_tokenizer_are_not_reused(hash_store: wp.Store) -> None:
    collection = hash_store.collection("docs")
    collection.add([Document(id="seals", text=_text([0, 3] * 30))])
    other = _load(hash_store, get_token_counter("cl100k_base"), None)
    reloaded = _load(hash_store, get_token_counter("o200k_base"), other)
    _assert_same_state(reloaded, _fresh_state(hash_store, reloaded.version))


class _RecordingCounter:
    """A counter that remembers every text it was asked to count."""

    def __init__(self, inner: TokenCounter) -> None:
        self._inner = inner
        self.counted: list[str] = []

    @property
    def name(self) -> str:
        return self._inner.name

    def count(self, text: str) -> int:
        self.counted.append(text)
        return self._inner.count(text)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        self.counted.extend(texts)
        return self._inner.count_many(texts)

    def cut_points(self, text: str, max_tokens: int) -> list[int]:
        return self._inner.cut_points(text, max_tokens)


def _text(sentences: list[int]) -> str:
    # A line break after every third sentence: the lines a state counts are reused too.
    return "".join(
        SENTENCES[i] + ("\n" if n % 3 == 2 else " ") for n, i in enumerate(sentences)
    ).rstrip()


def _load(store: wp.Store, counter: TokenCounter, previous: PackingState | None) -> PackingState:
    with store._context.sessions() as session:
        row = repository.get_collection(session, "docs")
        assert row is not None
        version = repository.index_version(session, row.id)
    return load_state(store._context.sessions, row.id, "docs", version, counter, previous=previous)


def _held_state(store: wp.Store) -> PackingState:
    """The newest state held (the one before it is kept for readers still packing it)."""
    states = store._context.packer._states
    return states[max(states)]


def _fresh_state(store: wp.Store, version: int) -> PackingState:
    state = _load(store, get_token_counter("o200k_base"), None)
    assert state.version == version
    return state


def _assert_same_state(loaded: PackingState, fresh: PackingState) -> None:
    for field in dataclasses.fields(PackingState):
        ours, theirs = getattr(loaded, field.name), getattr(fresh, field.name)
        if field.name == "corpus":
            for corpus_field in dataclasses.fields(ours):
                assert np.array_equal(
                    getattr(ours, corpus_field.name), getattr(theirs, corpus_field.name)
                ), corpus_field.name
        elif isinstance(ours, np.ndarray):
            assert np.array_equal(ours, theirs), field.name
        else:
            assert ours == theirs, field.name
    # The partial-line counts a load takes (a loaded state may hold more: those packs met).
    assert {span: loaded.span_counts.get(span) for span in fresh.span_counts} == fresh.span_counts


def _assert_same_window(incremental: Window, fresh: Window) -> None:
    assert incremental.text == fresh.text and incremental.tokens == fresh.tokens
    assert incremental == fresh
