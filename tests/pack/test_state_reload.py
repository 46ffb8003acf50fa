"""A new version's state loaded with the previous one's counts equals a load from scratch."""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.pack import state as state_module
from windowpack.pack.layout import DocumentView
from windowpack.pack.loading import load_state
from windowpack.pack.state import PackingState, _tiles
from windowpack.pack.token_counts import SavedCounts, unit_keys
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
                store.packer._states.clear()  # the next pack loads from scratch
                store.packer._windows.clear()
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


# --- counts saved on disk (pack.token_counts): what a restarted process starts from ---------


def _saved(store: wp.Store, tokenizer: str = "o200k_base") -> SavedCounts:
    collection_id = store.collection("docs").collection_id
    return SavedCounts(store.indexes.collection_dir(collection_id), tokenizer)


def _load_saved(
    store: wp.Store, counter: _RecordingCounter, saved: SavedCounts | None
) -> PackingState:
    with store.sessions() as session:
        row = repository.get_collection(session, "docs")
        assert row is not None
        version = repository.index_version(session, row.id)
    return load_state(store.sessions, row.id, "docs", version, counter, saved=saved)


def _counter() -> _RecordingCounter:
    return _RecordingCounter(get_token_counter("o200k_base"))


def _texts(state: PackingState) -> set[str]:
    return set(_tiles(state.documents)) | {node.text for node in state.nodes}


@pytest.fixture
def filled(hash_store: wp.Store) -> wp.Store:
    """A store whose collection shares sentences between documents (shared tile texts)."""
    collection = hash_store.collection("docs")
    collection.add([Document(id="seals", text=_text([0, 1] * 20))])
    collection.add([Document(id="owls", text=_text([2, 1, 3] * 12))])
    return hash_store


def test_a_load_saves_its_counts_and_the_next_load_counts_nothing(filled: wp.Store) -> None:
    saved = _saved(filled)
    assert not saved.path.exists()
    first_counter = _counter()
    first = _load_saved(filled, first_counter, saved)
    assert saved.path.is_file() and saved.manifest.is_file()
    assert _texts(first) <= set(first_counter.counted)

    again_counter = _counter()
    again = _load_saved(filled, again_counter, saved)  # as a restarted process does
    assert set(again_counter.counted).isdisjoint(_texts(again))  # layout overheads aside
    _assert_same_state(again, _load_saved(filled, _counter(), None))


def test_after_a_write_only_the_new_texts_are_counted(filled: wp.Store) -> None:
    saved = _saved(filled)
    before = _load_saved(filled, _counter(), saved)
    filled.collection("docs").add([Document(id="kestrels", text=_text([3, 0] * 25) + " Tern.")])
    counter = _counter()
    after = _load_saved(filled, counter, saved)
    counted = set(counter.counted) & _texts(after)  # the layout's overheads aside
    assert counted and counted.isdisjoint(_texts(before))
    _assert_same_state(after, _load_saved(filled, _counter(), None))
    # The file now holds the new version's texts: a further load counts nothing.
    third = _counter()
    assert set(third.counted).isdisjoint(_texts(_load_saved(filled, third, saved)))


@pytest.mark.parametrize("damage", ["garbage", "truncated", "no manifest", "other counts"])
def test_a_damaged_counts_file_is_not_used_and_is_written_again(
    filled: wp.Store, damage: str
) -> None:
    saved = _saved(filled)
    good = _load_saved(filled, _counter(), saved)
    if damage == "garbage":
        saved.path.write_bytes(b"not an array at all")
    elif damage == "truncated":
        saved.path.write_bytes(saved.path.read_bytes()[:-8])
    elif damage == "no manifest":
        saved.manifest.unlink()
    else:  # a well-formed array that is not the one the manifest describes: all counts 1
        data = np.load(saved.path)
        data[len(data) // 2 :] = 1
        np.save(saved.path, data)
    counter = _counter()
    reloaded = _load_saved(filled, counter, saved)
    assert _texts(good) <= set(counter.counted)  # nothing was taken from the file
    _assert_same_state(reloaded, good)
    after = _counter()
    assert set(after.counted).isdisjoint(_texts(_load_saved(filled, after, saved)))  # rewritten


def test_counts_saved_in_another_tokenizer_are_not_used(filled: wp.Store) -> None:
    theirs = _saved(filled, "cl100k_base")
    _load_saved(filled, _RecordingCounter(get_token_counter("cl100k_base")), theirs)
    ours = _saved(filled)
    # Their file and manifest where ours would be: the manifest names their tokenizer.
    shutil.copyfile(theirs.path, ours.path)
    shutil.copyfile(theirs.manifest, ours.manifest)
    counter = _counter()
    state = _load_saved(filled, counter, ours)
    assert _texts(state) <= set(counter.counted)
    _assert_same_state(state, _load_saved(filled, _counter(), None))


def test_tile_keys_follow_the_tile_text_not_the_document(filled: wp.Store) -> None:
    state = _load_saved(filled, _counter(), None)
    keys = unit_keys(state.documents, [node.text for node in state.nodes])
    tiles = _tiles(state.documents) + [node.text for node in state.nodes]
    assert len(keys) == len(tiles)
    by_key: dict[int, str] = {}
    for key, text in zip(keys.tolist(), tiles, strict=True):
        assert by_key.setdefault(key, text) == text  # one key, one text
    # Tiles of one document are distinct keys even where their texts repeat.
    seals = state.documents[0]
    assert len(set(keys[: len(seals.chunk_starts)].tolist())) == len(seals.chunk_starts)


def test_a_restarted_store_packs_the_same_window_without_counting_the_collection(
    filled: wp.Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    question = f"{SENTENCES[2]} {SENTENCES[0]}"
    window = filled.collection("docs").pack(question, budget=300)
    assert _saved(filled).path.is_file()  # the packer saved its counts beside the index files
    cut: list[int] = []
    original = state_module._unit_texts

    def recorded(*args: Any) -> list[str]:
        texts = original(*args)
        cut.append(len(texts))
        return texts

    monkeypatch.setattr(state_module, "_unit_texts", recorded)
    with wp.open(tmp_path / "store", config=filled.config) as restarted:
        again = restarted.collection("docs").pack(question, budget=300)
    assert cut == []  # no tile or node text was cut out to be counted
    assert again.text == window.text and again.tokens == window.tokens


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
    with store.sessions() as session:
        row = repository.get_collection(session, "docs")
        assert row is not None
        version = repository.index_version(session, row.id)
    return load_state(store.sessions, row.id, "docs", version, counter, previous=previous)


def _held_state(store: wp.Store) -> PackingState:
    """The newest state held (the one before it is kept for readers still packing it)."""
    states = store.packer._states
    return states[max(states)]


def _fresh_state(store: wp.Store, version: int) -> PackingState:
    state = _load(store, get_token_counter("o200k_base"), None)
    assert state.version == version
    return state


def _assert_same_state(loaded: PackingState, fresh: PackingState) -> None:
    for field in dataclasses.fields(PackingState):
        ours, theirs = getattr(loaded, field.name), getattr(fresh, field.name)
        if field.name == "corpus":
            # Not the memo (`compare=False`): what packs derived and kept, a cache.
            for corpus_field in filter(lambda f: f.compare, dataclasses.fields(ours)):
                assert np.array_equal(
                    getattr(ours, corpus_field.name), getattr(theirs, corpus_field.name)
                ), corpus_field.name
        elif isinstance(ours, np.ndarray):
            assert np.array_equal(ours, theirs), field.name
        elif field.name == "documents":  # texts read from files or held: the same texts
            assert _with_texts(ours) == _with_texts(theirs), field.name
        else:
            assert ours == theirs, field.name
    # The partial-line counts a load takes (a loaded state may hold more: those packs met).
    assert {span: loaded.span_counts.get(span) for span in fresh.span_counts} == fresh.span_counts


def _with_texts(documents: list[DocumentView]) -> list[DocumentView]:
    return [dataclasses.replace(view, body=view.text) for view in documents]


def _assert_same_window(incremental: Window, fresh: Window) -> None:
    assert incremental.text == fresh.text and incremental.tokens == fresh.tokens
    assert incremental == fresh
