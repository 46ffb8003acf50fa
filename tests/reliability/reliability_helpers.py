"""Helpers for the reliability suite (imported by name: test folders are not packages)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

import windowpack as wp
from live_uvicorn import served
from windowpack.api import ApiSettings, create_app

LOCAL = "http://127.0.0.1"
"""Where test clients address the app: a keyless server answers only loopback Host names."""

SEALS = "Harbour seals rest on sandbanks at low tide. " * 12
OWLS = "Barn owls hunt voles in the meadow at night. " * 12
FERRY = "The ferry to the island leaves at seven and returns at noon. " * 12
FILLED_DOCUMENTS = [
    wp.Document(id="seals", title="Seals", text=SEALS),
    wp.Document(id="notes/owls.md", title="Owls", text=OWLS, metadata={"team": "birds"}),
    wp.Document(id="ferry", title="Ferry", text=FERRY, metadata={"n": [1, 2.5, None]}),
]


@dataclass(frozen=True)
class Snapshot:
    """What a rejected request must leave exactly as it was."""

    collections: list[str]
    stats: list[wp.types.CollectionStats]
    documents: dict[str, list[Any]]


@dataclass(frozen=True)
class FilledServer:
    """An app over a store holding collection `docs` (three documents), and how it was."""

    database: str
    store: wp.Store
    client: TestClient
    before: Snapshot


def snapshot(store: wp.Store) -> Snapshot:
    """Every collection's stats (documents, chunks, tokens, index version) and documents."""
    names = store.collections()
    documents = {name: store.collection(name).documents() for name in names}
    texts = {
        name: [store.collection(name).get(info.id).text for info in infos]
        for name, infos in documents.items()
    }
    return Snapshot(
        collections=names,
        stats=store.stats(),
        documents={name: [documents[name], texts[name]] for name in names},
    )


def assert_still_serving(client: TestClient) -> None:
    """Search and pack over the filled collection still answer, with the known documents."""
    search = client.post("/v1/collections/docs/search", json={"query": "seals sandbanks", "k": 3})
    assert search.status_code == 200, search.text
    assert search.json()[0]["document_id"] == "seals"
    pack = client.post("/v1/collections/docs/pack", json={"query": "owls voles", "budget": 400})
    assert pack.status_code == 200, pack.text
    body = pack.json()
    assert 0 < body["tokens"] <= 400 and "owls" in body["text"]


def error_of(response: Any) -> tuple[str, str]:
    """(code, message) of an error answer, checking it has exactly the one error shape."""
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    return str(body["error"]["code"]), str(body["error"]["message"])


@contextmanager
def serving(store: wp.Store, tmp_path: Path, **settings: object) -> Iterator[int]:
    """A real uvicorn server over `store` on a free loopback port; yields the port."""

    def app_on(port: int) -> object:
        values: dict[str, object] = {"upload_dir": str(tmp_path / "up"), "port": port, **settings}
        return create_app(ApiSettings(**values), store=store)  # type: ignore[arg-type]

    from windowpack.api import head_deadline_protocol

    head_timeout = float(settings.get("head_timeout_s", 20.0))  # type: ignore[arg-type]
    with served(app_on, log_level="critical", http=head_deadline_protocol(head_timeout)) as port:
        yield port
