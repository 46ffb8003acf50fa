"""Packs while an ingest runs: every window is built from exactly one published version."""

from __future__ import annotations

import threading

from fastapi.testclient import TestClient

from windowpack.types import Document


def test_packs_during_ingests_each_see_one_consistent_version(filled_client: TestClient) -> None:
    store = filled_client.app.state.api.store  # type: ignore[attr-defined]
    collection = store.collection("docs", create=False)
    body = {"query": "ferry seals owls", "budget": 1_000_000}  # lossless: the whole collection
    baseline = filled_client.post("/v1/collections/docs/pack", json=body).json()
    windows: list[dict[str, object]] = [baseline]
    done = threading.Event()

    def ingest() -> None:
        for round_ in range(6):
            text = f"Ingest round {round_}: the lighthouse keeper logs the weather. " * 20
            collection.add([Document(id=f"round-{round_}", text=text)])
        done.set()

    writer = threading.Thread(target=ingest)
    writer.start()
    while not done.is_set():
        response = filled_client.post("/v1/collections/docs/pack", json=body)
        assert response.status_code == 200, response.text
        windows.append(response.json())
    writer.join()
    windows.append(filled_client.post("/v1/collections/docs/pack", json=body).json())

    by_version: dict[int, str] = {}
    for window in windows:
        version, text = int(window["index_version"]), str(window["text"])  # type: ignore[call-overload]
        # A window of version v holds exactly the documents of v: rounds 0..v-2, nothing newer.
        rounds = [r for r in range(6) if f"Ingest round {r}:" in text]
        assert rounds == list(range(version - 1)), (version, rounds)
        assert by_version.setdefault(version, text) == text  # and always the same bytes
    assert min(by_version) == 1 and max(by_version) == 7
    assert len(windows) > 3
