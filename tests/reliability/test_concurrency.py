"""Readers and writers at once (issue 14): snapshot reads, read-your-writes, two writing
processes, reads racing writes.

A reader never waits for this process's writer: while a write publishes a version, packs go
on with the last whole one (before, they queued behind the publish for its whole length).
A write is seen by every pack that starts after it returns. With `snapshot_reads`, another
process's version loads in the background while the loaded one is served.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from pathlib import Path

import pytest
from crash_rounds import CONFIG, StoreAt, batch_documents, check_store

import windowpack as wp
from windowpack.config import StoreConfig

SNAPSHOT = StoreConfig(embedder="hash", chunk_tokens=64, snapshot_reads=True)
_BATCHES = 12  # written by two processes, odd and even
# Bounds that only catch a hang: what they wait for happens at once on a quiet machine, and
# within them on one loaded by other processes.
HANG_S = 120.0


def _held_publish(store: wp.Store) -> tuple[threading.Event, threading.Event]:
    """Make the store's next publish stop before it saves, until `release` is set."""
    indexes = store.indexes
    reached, release = threading.Event(), threading.Event()
    save = indexes._save

    def held_save(collection_id: int, loaded: object) -> None:
        reached.set()
        assert release.wait(HANG_S)
        save(collection_id, loaded)  # type: ignore[arg-type]

    indexes._save = held_save  # type: ignore[method-assign]
    return reached, release


@pytest.mark.parametrize("config", [CONFIG, SNAPSHOT], ids=["default", "snapshot_reads"])
def test_a_pack_does_not_wait_for_a_write_being_published(
    tmp_path: Path, config: StoreConfig
) -> None:
    with wp.open(tmp_path / "store", config=config) as store:
        col = store.collection("docs")
        col.add(batch_documents(0))
        assert col.pack("barn owls", budget=400).index_version == 1
        reached, release = _held_publish(store)
        writer = threading.Thread(target=col.add, args=(batch_documents(1),))
        writer.start()
        try:
            assert reached.wait(HANG_S)  # the write has committed version 2 and is publishing
            window = col.pack("seals on sandbanks", budget=400)
            hits = col.search("voles", k=3)
            # Answered while the publish is still held: had they waited for it, they would
            # have returned only once its wait for `release` gave up, the writer gone.
            assert writer.is_alive() and not release.is_set()
            assert window.index_version == 1 and hits  # the last whole version
        finally:
            release.set()
            writer.join()
        # Read-your-writes: the write has returned, so the next pack sees it.
        after = col.pack("seals on sandbanks", budget=400)
        assert after.index_version == 2
        assert {d.id for d in col.documents()} >= {d.id for d in batch_documents(1)}


def test_snapshot_reads_serve_the_loaded_version_while_another_writers_loads(
    tmp_path: Path,
) -> None:
    with wp.open(tmp_path / "store", config=SNAPSHOT) as reader:
        reader.collection("docs").add(batch_documents(0))
        col = reader.collection("docs")
        assert col.pack("owls", budget=300).index_version == 1
        with wp.open(tmp_path / "store", config=CONFIG) as other:  # as another process would
            other.collection("docs").add(batch_documents(1))
        assert col.pack("owls", budget=300).index_version == 1  # no wait: the loaded one
        deadline = time.monotonic() + HANG_S
        while col.pack("owls", budget=300).index_version != 2:  # loaded in the background
            assert time.monotonic() < deadline, "the new version never became current"
            time.sleep(0.05)
        assert col.search("voles", k=50)


def _write_batches(at: StoreAt, batches: list[int]) -> None:
    with at.open() as store:
        for batch in batches:
            store.collection("docs").add(batch_documents(batch))


def _two_writing_processes(at: StoreAt) -> None:
    fork = multiprocessing.get_context("fork")
    with at.open() as store:
        store.collection("docs").add(batch_documents(0))
    writers = [
        fork.Process(target=_write_batches, args=(at, list(range(first, _BATCHES, 2))))
        for first in (1, 2)
    ]
    for writer in writers:
        writer.start()
    errors = []
    # The server's setting: with the default a reader waits for each new version, and a stream
    # of other processes' writes can keep it from ever loading one (a 503 asking to retry).
    with at.open(config=SNAPSHOT) as store:
        col = store.collection("docs")
        while any(writer.is_alive() for writer in writers):  # reads race the writes
            try:
                col.pack("barn owls and seals", budget=600)
                col.search("voles", k=5)
            except Exception as error:  # any error is a failure, reported with the rest
                errors.append(repr(error))
    for writer in writers:
        writer.join()
    assert [writer.exitcode for writer in writers] == [0, 0]
    assert not errors, errors[:3]
    documents, batches = check_store(at)
    assert batches == set(range(_BATCHES)) and documents == _BATCHES * len(batch_documents(0))


def test_two_processes_write_while_reads_race_them_on_sqlite(tmp_path: Path) -> None:
    _two_writing_processes(StoreAt(folder=tmp_path / "store"))


@pytest.mark.postgres
def test_two_processes_write_while_reads_race_them_on_postgresql(
    postgres_url: str, tmp_path: Path
) -> None:
    _two_writing_processes(StoreAt(folder=tmp_path, url=postgres_url))
