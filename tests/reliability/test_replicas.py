"""Replicas: several processes serving one database, each with its own index folder (issue 16).

A process that holds version v of a collection and finds v+k written by another catches up by
what changed (ids and text hashes against the database's), serves v until v+k is whole, and
with a watcher (`watch_interval_s`) does so without waiting for a read: at once on a
PostgreSQL NOTIFY, else at the next poll. The last test runs two `windowpack serve` processes
on one PostgreSQL database and checks that a write through one is seen through the other
within a stated delay while no request to it fails.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.index.store import IndexStore

CONFIG = StoreConfig(embedder="hash", chunk_tokens=64)
QUERIES = ["harbour seals", "lighthouse keeper", "copper kettle", "replica word seven"]
REPLICA_HANG_S = 120.0
"""A write through one replica is visible through another long before this: a bound that only
catches a replica that never catches up (the delay itself, ~0.06 s, is a figure of
docs/scaling-out.md, measured on a quiet machine, not a bound a loaded one must meet)."""


def _text(topic: str, n: int) -> str:
    return " ".join(f"{topic} sentence {i} about the {topic} and the harbour." for i in range(n))


def _documents(count: int) -> list[wp.Document]:
    topics = ["seals", "lighthouse", "kettle", "orchard", "glacier", "violin", "canal"]
    return [wp.Document(id=f"d{i}", text=_text(topics[i % len(topics)], 30)) for i in range(count)]


def _open(target: str | Path, index_dir: Path, **options: object) -> wp.Store:
    config = dataclasses.replace(CONFIG, **options)  # type: ignore[arg-type]
    return wp.open(target, index_dir=index_dir, config=config)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the replicas' one database is: a SQLite store folder, or a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "store")
    return str(request.getfixturevalue("postgres_url"))


def _forbid_rebuilds(indexes: IndexStore) -> list[str]:
    """Make rebuilding or loading files fail in `indexes`; returns what was attempted."""
    attempts: list[str] = []

    def refuse(name: str) -> Callable[..., object]:
        def refused(*_args: object) -> object:
            attempts.append(name)
            raise AssertionError(f"{name} called: the replica should have caught up by the delta")

        return refused

    indexes._rebuild = refuse("rebuild")  # type: ignore[method-assign]
    indexes._load_checked = refuse("load")  # type: ignore[method-assign]
    return attempts


def _hits(collection: wp.Collection) -> list[list[tuple[int | None, float]]]:
    return [
        [(hit.chunk_id, round(hit.score, 4)) for hit in collection.search(q, k=20)] for q in QUERIES
    ]


def test_a_replica_catches_up_by_the_delta_and_matches_a_rebuild(
    database: str, tmp_path: Path
) -> None:
    with (
        _open(database, tmp_path / "writer-indexes") as writer,
        _open(database, tmp_path / "reader-indexes") as reader,
    ):
        written = writer.collection("docs")
        written.add(_documents(7))
        read = reader.collection("docs")
        read.search("seals")  # the reader now holds version 1
        last_ids = {hit.chunk_id for hit in written.search("canal", k=50)}
        attempts = _forbid_rebuilds(reader.indexes)
        # An upsert of the newest document (SQLite hands its chunk ids to the new chunks),
        # a delete, an addition: three versions the reader has not seen.
        written.add([wp.Document(id="d6", text=_text("replica word seven", 25))])
        written.delete("d0")
        written.add([wp.Document(id="d7", text=_text("copper kettle", 12))])

        caught_up = _hits(read)
        assert read.index_version == written.index_version == 4
        assert reader.indexes.loaded_version(read.collection_id) == 4
        assert attempts == []
        with _open(database, tmp_path / "fresh-indexes") as fresh:  # rebuilt from the database
            assert caught_up == _hits(fresh.collection("docs"))
        # The reader's keys are the database's: its next catch-up starts from the truth.
        indexes = reader.indexes
        held = indexes._loaded[read.collection_id].keys
        version, truth = indexes._keys_now(read.collection_id)
        assert held is not None and truth is not None and version == 4
        assert np.array_equal(held.ids, truth.ids) and np.array_equal(held.hashes, truth.hashes)
    if "://" not in database:  # the case ids alone would miss, made sure it happened
        assert last_ids & {hit.chunk_id for hit in caught_up_hits(database, tmp_path)}


def caught_up_hits(database: str, tmp_path: Path) -> list[wp.Hit]:
    with _open(database, tmp_path / "fresh-indexes") as fresh:
        return fresh.collection("docs").search("replica word seven", k=50)


def test_a_watcher_brings_a_replica_current_without_a_read(database: str, tmp_path: Path) -> None:
    # On PostgreSQL the interval outlasts the test: only the NOTIFY can bring it current.
    interval = 100 * REPLICA_HANG_S if "://" in database else 0.2
    with (
        _open(database, tmp_path / "writer-indexes") as writer,
        _open(database, tmp_path / "reader-indexes", watch_interval_s=interval) as reader,
    ):
        written = writer.collection("docs")
        written.add(_documents(3))
        read = reader.collection("docs")
        read.search("seals")
        indexes, watcher = reader.indexes, reader._context.watcher
        assert watcher is not None
        for round_ in range(3):
            written.add([wp.Document(id=f"new-{round_}", text=_text(f"topic{round_}", 10))])
            target = written.index_version
            deadline = time.monotonic() + REPLICA_HANG_S
            while indexes.loaded_version(read.collection_id) != target:
                assert time.monotonic() < deadline, f"version {target} not loaded in time"
                time.sleep(0.02)
        assert watcher.refreshes >= 3
        assert any(hit.document_id == "new-2" for hit in read.search("topic2", k=5))
        assert read.pack("topic2", budget=500).index_version == written.index_version
        packer = reader.packer
        writer.delete_collection("docs")  # deleted elsewhere: the replica lets it go

        # Its indexes and packing states (SQLite gives the next collection created its id).
        def held() -> bool:
            states = [key for key in packer._states if key[0] == read.collection_id]
            return indexes.loaded_version(read.collection_id) is not None or bool(states)

        deadline = time.monotonic() + REPLICA_HANG_S
        while held():
            assert time.monotonic() < deadline, "a deleted collection was kept"
            time.sleep(0.02)


def test_watch_interval_must_be_positive() -> None:
    with pytest.raises(wp.InvalidArgumentError, match="watch_interval_s"):
        StoreConfig(watch_interval_s=0)


# --- two `windowpack serve` processes on one PostgreSQL database ---------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def two_replicas(postgres_url: str, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """Two servers on loopback over one PostgreSQL database, each with its own index folder."""
    processes, urls = [], []
    env = {**os.environ, "WINDOWPACK_LOG_LEVEL": "warning"}
    try:
        for name in ("a", "b"):
            port = _free_port()
            command = [
                sys.executable, "-c", "from windowpack.cli import main; main()", "serve",
                "--store", postgres_url, "--index-dir", str(tmp_path / f"indexes-{name}"),
                "--port", str(port), "--embedder", "hash",
            ]  # fmt: skip
            log = (tmp_path / f"server-{name}.log").open("wb")
            processes.append(
                subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
            )
            urls.append(f"http://127.0.0.1:{port}")
        for url, process in zip(urls, processes, strict=True):
            _wait_until_up(url, process)
        yield urls[0], urls[1]
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=30)


def _wait_until_up(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the server exited: {process.args}"
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{url} did not come up")


class _Reader(threading.Thread):
    """Packs and searches through one replica without pause, recording every failure."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url, self.stop, self.requests, self.failures = url, threading.Event(), 0, []

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=30) as client:
            while not self.stop.is_set():
                for path, body in (
                    ("search", {"query": "harbour seals", "k": 5}),
                    ("pack", {"query": "lighthouse keeper", "budget": 1500}),
                ):
                    response = client.post(f"/v1/collections/docs/{path}", json=body)
                    self.requests += 1
                    if response.status_code != 200:
                        self.failures.append(f"{path}: {response.status_code} {response.text}")


def _search_ids(url: str, query: str) -> set[str]:
    response = httpx.post(
        f"{url}/v1/collections/docs/search", json={"query": query, "k": 10}, timeout=30
    )
    assert response.status_code == 200, response.text
    return {hit["document_id"] for hit in response.json()}


def _seen_within(url: str, query: str, present: str | None, absent: str | None) -> float:
    """Seconds until a search through `url` finds `present` (and no longer `absent`)."""
    start = time.monotonic()
    while True:
        found = _search_ids(url, query)
        if (present is None or present in found) and (absent is None or absent not in found):
            return time.monotonic() - start
        assert time.monotonic() - start < REPLICA_HANG_S, f"not seen through {url}: {found}"
        time.sleep(0.05)


def test_a_write_through_one_replica_is_served_by_the_other(
    two_replicas: tuple[str, str], tmp_path: Path
) -> None:
    a, b = two_replicas
    created = httpx.post(f"{a}/v1/collections", json={"name": "docs"}, timeout=30)
    assert created.status_code == 201, created.text
    documents = [{"id": d.id, "text": d.text} for d in _documents(5)]
    added = httpx.post(
        f"{a}/v1/collections/docs/documents", json={"documents": documents}, timeout=60
    )
    assert added.status_code == 200, added.text
    _seen_within(b, "harbour seals", "d0", None)  # b has loaded the collection
    reader = _Reader(b)
    reader.start()
    delays = []
    try:
        for round_ in range(4):
            word = f"zebrafinch{round_}"
            body = {"documents": [{"id": f"new-{round_}", "text": _text(word, 8)}]}
            response = httpx.post(f"{a}/v1/collections/docs/documents", json=body, timeout=60)
            assert response.status_code == 200, response.text
            delays.append(_seen_within(b, word, f"new-{round_}", None))
        gone = httpx.delete(f"{a}/v1/collections/docs/documents/new-0", timeout=60)
        assert gone.status_code == 204
        delays.append(_seen_within(b, "zebrafinch0", None, "new-0"))
    finally:
        reader.stop.set()
        reader.join(timeout=60)
    log = (tmp_path / "server-b.log").read_text(errors="replace")[-6000:]
    assert reader.failures == [], log
    assert reader.requests > 10, "the reader hardly ran: the switch was not exercised"
    assert len(delays) == 5 and max(delays) < REPLICA_HANG_S, delays
