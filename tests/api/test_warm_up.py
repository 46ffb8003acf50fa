"""The server's warm-up at start: indexes and packing states loaded before any request."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from api_helpers import FERRY, OWLS, SEALS, local_client, settings_for
from fastapi.testclient import TestClient

import windowpack as wp
from windowpack.api import create_app
from windowpack.api.warm_up import WarmUp


def _filled(store: wp.Store) -> list[wp.Collection]:
    docs, notes = store.collection("docs"), store.collection("notes")
    docs.add([wp.Document(id="seals", text=SEALS), wp.Document(id="owls", text=OWLS)])
    notes.add([wp.Document(id="ferry", text=FERRY)])
    return [docs, notes]


def _held(store: wp.Store, collection: wp.Collection) -> tuple[int | None, bool]:
    """The index version the process serves and whether a packing state in o200k_base is
    held at the collection's current version."""
    context = store._context
    key = (collection.collection_id, collection.index_version, "o200k_base")
    return context.indexes.loaded_version(collection.collection_id), key in context.packer._states


def _ready(client: TestClient) -> dict[str, object]:
    deadline = time.monotonic() + 60
    while True:
        response = client.get("/readyz")
        if response.status_code == 200:
            body: dict[str, object] = response.json()
            return body
        assert response.status_code == 503 and response.json()["status"] == "warming"
        assert time.monotonic() < deadline, "the warm-up never ended"
        time.sleep(0.02)


@pytest.fixture
def restarted(hash_store: wp.Store, tmp_path: Path) -> Iterator[Restarted]:
    """Two filled collections, and the store opened again as a new process would: nothing
    loaded (the writes loaded the indexes in `hash_store`)."""
    collections = _filled(hash_store)
    with wp.open(tmp_path / "store", config=hash_store.config) as fresh:
        assert all(_held(fresh, c) == (None, False) for c in collections)
        yield fresh, collections


Restarted = tuple[wp.Store, list[wp.Collection]]


def test_a_started_server_loads_every_collection_before_any_request(
    restarted: Restarted, tmp_path: Path
) -> None:
    fresh, collections = restarted
    with local_client(create_app(settings_for(tmp_path), store=fresh)) as client:
        assert _ready(client) == {"status": "ready", "warmed": ["docs", "notes"]}
        for collection in collections:
            version, state = _held(fresh, collection)
            assert version == collection.index_version and state
        hits_before = fresh.window_cache_hits
        body = {"query": "harbour seals", "budget": 500}
        assert client.post("/v1/collections/docs/pack", json=body).status_code == 200
        assert fresh.window_cache_hits == hits_before, "a new question, not the warm-up's"


def test_without_warm_up_the_server_is_ready_at_once_and_loads_nothing(
    restarted: Restarted, tmp_path: Path
) -> None:
    fresh, collections = restarted
    app = create_app(settings_for(tmp_path, warm_up=False), store=fresh)
    with local_client(app) as client:
        assert client.get("/readyz").json() == {"status": "ready", "warmed": []}
        time.sleep(0.2)
        assert all(_held(fresh, c) == (None, False) for c in collections)


def test_warm_up_stops_between_collections_when_asked(hash_store: wp.Store) -> None:
    _filled(hash_store)
    stop = threading.Event()
    stop.set()
    assert hash_store.warm_up(stop=stop) == []
    assert hash_store.warm_up() == ["docs", "notes"]


class _SlowStore:
    """A store whose warm-up runs until it is asked to stop."""

    def warm_up(self, *, stop: threading.Event) -> list[str]:
        stop.wait(30)
        return []


def test_a_warm_up_stopped_by_shutdown_logs_nothing_after_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    warm = WarmUp(_SlowStore(), enabled=True)  # type: ignore[arg-type]
    with caplog.at_level(logging.INFO, logger="windowpack.api"):
        warm.start()
        warm.stop()
    assert warm.ready
    assert not [r for r in caplog.records if r.name == "windowpack.api"]
