"""A keyless server answers only requests addressed to loopback, from its own origin
(issue 14, D6): a DNS-rebinding page reaches it under a foreign Host name, and a cross-origin
page can POST a form (multipart files included) without reading the answer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from reliability_helpers import FERRY, LOCAL, error_of, serving

import windowpack as wp
from windowpack.api import ApiSettings, create_app

REFUSED_HOSTS = [
    "rebind.evil.example",
    "rebind.evil.example:8000",
    "localhost.evil.example",
    "127.0.0.1.nip.io",
    "0.0.0.0:8000",
    "127.0.0.2",
    "[::ffff:127.0.0.1]",
    "192.168.1.20:8000",
    "",
]
ACCEPTED_HOSTS = [
    "localhost",
    "localhost:8000",
    "LOCALHOST:80",
    "127.0.0.1",
    "127.0.0.1:9",
    "[::1]",
    "[::1]:8000",
]
REFUSED_ORIGINS = [
    "http://evil.example",
    "https://evil.example:8000",
    "null",
    "http://127.0.0.1:9999",  # another local port is another origin (another local app)
    "http://localhost:8000",  # same machine, other host name than the one addressed
]


@pytest.fixture
def client(store: wp.Store, tmp_path: Path) -> Iterator[TestClient]:
    settings = ApiSettings(upload_dir=str(tmp_path / "uploads"))
    with TestClient(create_app(settings, store=store), base_url=LOCAL) as test_client:
        yield test_client


@pytest.mark.parametrize("host", REFUSED_HOSTS)
def test_a_foreign_host_name_is_refused(client: TestClient, store: wp.Store, host: str) -> None:
    for method, path, body in [
        ("GET", "/v1/collections/docs/documents/seals", None),
        ("POST", "/v1/collections/docs/documents", {"documents": [{"text": FERRY}]}),
    ]:
        response = client.request(method, path, json=body, headers={"Host": host})
        assert response.status_code == 403, (host, response.text)
        code, message = error_of(response)
        assert code == "forbidden" and "Host" in message
    assert len(store.collection("docs")) == 1


@pytest.mark.parametrize("host", ACCEPTED_HOSTS)
def test_loopback_host_names_with_or_without_a_port_are_served(
    client: TestClient, host: str
) -> None:
    response = client.get("/v1/collections", headers={"Host": host})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("origin", REFUSED_ORIGINS)
def test_a_cross_origin_upload_is_refused_and_nothing_is_stored(
    client: TestClient, store: wp.Store, origin: str
) -> None:
    headers = {"Host": "127.0.0.1:8000", "Origin": origin}
    files = [("files", ("planted.txt", FERRY.encode()))]
    response = client.post("/v1/collections/docs/files", files=files, headers=headers)
    assert response.status_code == 403, response.text
    assert "Origin" in error_of(response)[1]
    deleted = client.delete("/v1/collections/docs", params={"confirm": "docs"}, headers=headers)
    assert deleted.status_code == 403
    assert [info.id for info in store.collection("docs").documents()] == ["seals"]


@pytest.mark.parametrize(
    "origin", ["http://127.0.0.1:8000", "HTTP://127.0.0.1:8000", "https://127.0.0.1:8000"]
)
def test_a_same_origin_write_is_served(client: TestClient, store: wp.Store, origin: str) -> None:
    headers = {"Host": "127.0.0.1:8000", "Origin": origin}
    response = client.post(
        "/v1/collections/docs/documents", json={"documents": [{"text": FERRY}]}, headers=headers
    )
    assert response.status_code == 200, response.text
    assert len(store.collection("docs")) == 2


def test_with_keys_the_key_decides_not_the_host(store: wp.Store, tmp_path: Path) -> None:
    # Keys are what protects a server behind a proxy that rewrites Host; with one, the
    # rebinding attack has nothing to gain (the page does not know the key).
    secret = store.api_keys.create("proxy", collections=["*"], can_write=False).secret
    settings = ApiSettings(upload_dir=str(tmp_path / "uploads"))
    with TestClient(create_app(settings, store=store), base_url="http://wp.internal") as client:
        response = client.get("/v1/collections", headers={"Authorization": f"Bearer {secret}"})
        assert response.status_code == 200
        assert client.get("/v1/collections").status_code == 401


def test_the_inspector_page_and_its_same_origin_calls_still_work(client: TestClient) -> None:
    page = client.get("/ui", headers={"Host": "127.0.0.1:8000"})
    assert page.status_code == 200 and "fetch(" in page.text
    # What the page's fetch sends from http://127.0.0.1:8000/ui: its own origin.
    headers = {"Host": "127.0.0.1:8000", "Origin": "http://127.0.0.1:8000"}
    pack = client.post(
        "/v1/collections/docs/pack", json={"query": "seals", "budget": 200}, headers=headers
    )
    assert pack.status_code == 200 and "seals" in pack.json()["text"].lower()


def test_the_python_client_works_against_a_real_keyless_server(
    store: wp.Store, tmp_path: Path
) -> None:
    with serving(store, tmp_path) as port, wp.Client(f"http://127.0.0.1:{port}") as remote:
        other = remote.collection("other")
        other.add([wp.Document(id="ferry", text=FERRY)])
        assert "ferry" in other.pack("ferry island", budget=200).text.lower()
        remote.delete_collection("other")  # sends ?confirm=other
        assert remote.collections() == ["docs"]


@pytest.mark.parametrize("path", ["/ui", "/docs", "/redoc", "/openapi.json", "/healthz"])
def test_the_pages_outside_the_api_follow_the_host_rule_too(client: TestClient, path: str) -> None:
    refused = client.get(path, headers={"Host": "evil.com"})
    assert refused.status_code == 403 and "Host" in error_of(refused)[1]
    assert client.get(path, headers={"Host": "127.0.0.1:8000"}).status_code == 200
