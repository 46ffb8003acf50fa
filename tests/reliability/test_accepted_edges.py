"""The other side of the rules: inputs at the edge of what is allowed are stored and read back
exactly, over HTTP as the Python client addresses them (so the rules refuse no more than
they must)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from reliability_helpers import LOCAL

import windowpack as wp
from windowpack.api import ApiSettings, create_app
from windowpack.text import storable


def _deep(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": True}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


ACCEPTED_IDS = [
    "100% done?.txt",  # a percent sign that is no escape, a question mark: the client encodes
    "/srv/notes/outside-root.md",  # a file outside the store's root keeps its absolute path
    "notes/..hidden/.config",  # dots inside segments are no dot segments
    "a...b",
    "naïve café/日本語.txt",
    "x" * storable.MAX_ID_CHARS,
    "with space inside",
]


@pytest.mark.parametrize("document_id", ACCEPTED_IDS)
def test_ids_at_the_edge_round_trip_through_the_url(
    store: wp.Store, tmp_path: Path, document_id: str
) -> None:
    metadata = {"deep": _deep(storable.MAX_METADATA_DEPTH - 1), "big": 10**40, "small": -1.5e-300}
    store.collection("docs").add(
        [wp.Document(id=document_id, title="t" * 1024, text="Kites fly high.", metadata=metadata)]
    )
    app = create_app(ApiSettings(upload_dir=str(tmp_path / "up")), store=store)
    with TestClient(app, base_url=LOCAL) as client:
        path = f"/v1/collections/docs/documents/{quote(document_id, safe='/')}"
        got = client.get(path)
        assert got.status_code == 200, got.text
        assert got.json()["id"] == document_id and got.json()["metadata"] == metadata
        pack = client.post("/v1/collections/docs/pack", json={"query": "kites", "budget": 4000})
        assert pack.status_code == 200 and "Kites fly high." in pack.json()["text"]
        assert client.delete(path).status_code == 204
    assert [info.id for info in store.collection("docs").documents()] == ["seals"]


def test_the_limits_themselves_are_allowed() -> None:
    assert storable.metadata_problem(_deep(storable.MAX_METADATA_DEPTH)) is None
    assert storable.metadata_problem(_deep(storable.MAX_METADATA_DEPTH + 1)) is not None
    at_limit = {"x": "y" * (storable.MAX_METADATA_BYTES - len('{"x": ""}'))}
    assert storable.metadata_problem(at_limit) is None
    assert storable.metadata_problem({"x": at_limit["x"] + "y"}) is not None
    assert storable.id_problem("x" * storable.MAX_ID_CHARS) is None
    assert storable.id_problem("x" * (storable.MAX_ID_CHARS + 1)) is not None
