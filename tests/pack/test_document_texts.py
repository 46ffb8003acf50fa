"""Packing states read document texts from files named by their hash, not from memory."""

from __future__ import annotations

from pathlib import Path

import pytest

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.errors import StorageError
from windowpack.pack.document_texts import DocumentTexts, StoredText, TextCache
from windowpack.pack.loading import load_state
from windowpack.pack.state import PackingState
from windowpack.storage import repository
from windowpack.text.hashing import content_hash
from windowpack.text.tokens import get_token_counter
from windowpack.types import Document

HASH_CONFIG = StoreConfig(embedder="hash", chunk_tokens=64)

TEXTS = {
    "plain": "Harbour seals rest on sandbanks at low tide. " * 60,
    "wide": "Die Möwe kreist über dem Watt — 海豹在沙洲上休息。 " * 60,
    "notes": "# Seals\n\nThey haul out at low tide.\n\n## Pups\n\nBorn in June. " * 20,
}


def _filled(store: wp.Store) -> wp.Collection:
    collection = store.collection("docs")
    collection.add([Document(id=name, text=text) for name, text in TEXTS.items()])
    return collection


def _texts_folder(store: wp.Store) -> Path:
    with store.sessions() as session:
        row = repository.get_collection(session, "docs")
        assert row is not None
        return store.indexes.collection_dir(row.id) / "texts"


def _held_state(store: wp.Store) -> PackingState:
    states = store.packer._states
    return states[max(states)]


def _in_memory_state(store: wp.Store) -> PackingState:
    """The same version loaded with every text held in memory, as a state used to be."""
    held = _held_state(store)
    with store.sessions() as session:
        row = repository.get_collection(session, "docs")
        assert row is not None
    counter = get_token_counter(held.tokenizer)
    sessions = store.sessions
    return load_state(sessions, row.id, "docs", held.version, counter)


def test_a_state_holds_hashes_and_reads_the_same_texts_from_files(hash_store: wp.Store) -> None:
    collection = _filled(hash_store)
    window = collection.pack("seals at low tide", budget=100_000)
    state = _held_state(hash_store)
    assert all(isinstance(view.body, StoredText) for view in state.documents)
    folder = _texts_folder(hash_store)
    stored = {path.name: path.read_bytes() for path in folder.iterdir()}
    assert stored == {f"{content_hash(t)}.txt": t.encode("utf-8") for t in TEXTS.values()}
    memory = _in_memory_state(hash_store)
    assert [view.text for view in state.documents] == [view.text for view in memory.documents]
    assert [view.unit_titles for view in state.documents] == [
        view.unit_titles for view in memory.documents
    ]
    assert window.text.count("Harbour seals") > 0 and "Möwe" in window.text


def test_a_missing_or_damaged_file_is_read_again_from_the_database(tmp_path: Path) -> None:
    with wp.open(tmp_path / "store", config=HASH_CONFIG) as store:
        before = _filled(store).pack("seals at low tide", budget=100_000)
        folder = _texts_folder(store)
    wide = folder / f"{content_hash(TEXTS['wide'])}.txt"
    plain = folder / f"{content_hash(TEXTS['plain'])}.txt"
    wide.unlink()
    plain.write_bytes(b"Harbour seals, a damaged copy.")
    with wp.open(tmp_path / "store", config=HASH_CONFIG) as store:  # a restart: nothing held
        after = store.collection("docs").pack("seals at low tide", budget=100_000)
    assert after.text == before.text
    assert wide.read_text("utf-8") == TEXTS["wide"]
    assert plain.read_text("utf-8") == TEXTS["plain"]


def test_a_file_gone_with_its_document_changed_is_an_error_naming_it(tmp_path: Path) -> None:
    text = "Otters fish the estuary when the water is slack. " * 20
    written: dict[int, str] = {1: text}
    texts = DocumentTexts(
        tmp_path, lambda ids: {i: written[i] for i in ids if i in written}, TextCache()
    )
    texts.ensure([(1, content_hash(text))])
    path = tmp_path / "texts" / f"{content_hash(text)}.txt"
    assert path.read_text("utf-8") == text
    path.unlink()
    written[1] = "The document now says something else."
    with pytest.raises(StorageError, match=str(path)):
        texts.text(content_hash(text), 1)


def test_an_unwritable_folder_is_an_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "texts").write_text("a file where the folder should be")
    texts = DocumentTexts(tmp_path, lambda ids: dict.fromkeys(ids, "some text"), TextCache())
    with pytest.raises(StorageError, match="texts"):
        texts.ensure([(1, content_hash("some text"))])


def test_unused_files_are_swept_once_they_outnumber_those_in_use(tmp_path: Path) -> None:
    bodies = {i: f"Document {i}: kestrels hover over the verge." for i in range(200)}
    texts = DocumentTexts(tmp_path, lambda ids: {i: bodies[i] for i in ids}, TextCache())
    texts.ensure([(i, content_hash(body)) for i, body in bodies.items()])
    hashes = [content_hash(body) for body in bodies.values()]
    assert texts.sweep(hashes[:120]) == 0  # 80 unused of 200: kept for now
    assert texts.sweep(hashes[:20]) == 180
    assert sorted(p.name for p in (tmp_path / "texts").iterdir()) == sorted(
        f"{h}.txt" for h in hashes[:20]
    )


def test_the_text_cache_keeps_the_most_recent_within_its_bound() -> None:
    cache = TextCache(max_chars=25)
    cache.put("a", "x" * 10)
    cache.put("b", "y" * 10)
    assert cache.get("a") == "x" * 10  # now the most recent
    cache.put("c", "z" * 10)
    assert cache.get("b") is None and cache.get("a") is not None and cache.get("c") is not None
    assert cache.chars == 20
    cache.put("big", "w" * 100)  # larger than the bound: kept alone, until the next
    assert cache.get("big") is not None and cache.chars == 100
    assert cache.get("a") is None and cache.get("c") is None  # alone
    cache.put("big", "w" * 100)  # already held: still alone
    assert cache.get("big") is not None and cache.chars == 100
    cache.put("d", "v" * 10)  # the next: the oversized one goes
    assert cache.get("big") is None and cache.get("d") == "v" * 10 and cache.chars == 10
