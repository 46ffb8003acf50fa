"""Keys fail closed (issue 14, D5): once a store has had a key, revoking every key does not
open it to anonymous callers again, until an operator says so explicitly."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from reliability_helpers import LOCAL, SEALS, error_of

import windowpack as wp
from windowpack.api import ApiSettings, create_app

ANONYMOUS_CALLS = [
    ("GET", "/v1/collections", None, None),
    ("GET", "/v1/collections/docs/documents/seals", None, None),
    ("POST", "/v1/collections/docs/search", {"query": "seals"}, None),
    ("POST", "/v1/collections/docs/documents", {"documents": [{"text": "Anonymous words."}]}, None),
    ("DELETE", "/v1/collections/docs/documents/seals", None, None),
    ("DELETE", "/v1/collections/docs", None, {"confirm": "docs"}),
    ("GET", "/metrics", None, None),
]


def _client(store: wp.Store, tmp_path: Path, **settings: object) -> TestClient:
    values: dict[str, object] = {"upload_dir": str(tmp_path / "uploads"), **settings}
    return TestClient(create_app(ApiSettings(**values), store=store), base_url=LOCAL)  # type: ignore[arg-type]


def _revoke_all(store: wp.Store) -> str:
    created = store.api_keys.create("ci", collections=["*"], can_write=True)
    store.api_keys.revoke(created.key.key_id)
    return created.secret


@pytest.mark.parametrize(("method", "path", "body", "params"), ANONYMOUS_CALLS)
def test_after_every_key_is_revoked_anonymous_calls_stay_refused(
    store: wp.Store, tmp_path: Path, method: str, path: str, body: object, params: object
) -> None:
    _revoke_all(store)
    with _client(store, tmp_path) as client:
        response = client.request(method, path, json=body, params=params)  # type: ignore[arg-type]
        assert response.status_code == 401, response.text
        assert error_of(response)[0] == "unauthorized"
    assert store.collection("docs").get("seals").text == SEALS
    assert len(store.collection("docs")) == 1


def test_health_says_keys_are_required_after_revocation(store: wp.Store, tmp_path: Path) -> None:
    with _client(store, tmp_path) as client:
        assert client.get("/healthz").json()["keys_required"] is False
        secret = _revoke_all(store)
        assert client.get("/healthz").json()["keys_required"] is True
        revoked = client.get("/v1/collections", headers={"Authorization": f"Bearer {secret}"})
        assert revoked.status_code == 401 and "revoked" in error_of(revoked)[1]


def test_a_new_key_works_after_the_old_ones_were_revoked(store: wp.Store, tmp_path: Path) -> None:
    _revoke_all(store)
    fresh = store.api_keys.create("new", collections=["docs"], can_write=False)
    with _client(store, tmp_path) as client:
        ok = client.get("/v1/collections", headers={"X-API-Key": fresh.secret})
        assert ok.status_code == 200 and ok.json() == {"collections": ["docs"]}


def test_an_operator_can_turn_anonymous_access_back_on_explicitly(
    store: wp.Store, tmp_path: Path
) -> None:
    _revoke_all(store)
    with _client(store, tmp_path, allow_anonymous_after_revocation=True) as client:
        assert client.get("/healthz").json()["keys_required"] is False
        assert client.get("/v1/collections").json() == {"collections": ["docs"]}
        # ... but only while no key is active: a new one closes the server again.
        store.api_keys.create("again", collections=["*"], can_write=True)
        assert client.get("/v1/collections").status_code == 401


def test_the_setting_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ApiSettings().allow_anonymous_after_revocation is False
    monkeypatch.setenv("WINDOWPACK_ALLOW_ANONYMOUS_AFTER_REVOCATION", "true")
    assert ApiSettings().allow_anonymous_after_revocation is True


def test_require_keys_holds_even_with_the_setting(store: wp.Store, tmp_path: Path) -> None:
    _revoke_all(store)
    settings = {"allow_anonymous_after_revocation": True, "require_keys": True}
    with _client(store, tmp_path, **settings) as client:
        assert client.get("/v1/collections").status_code == 401


def test_a_store_that_never_had_a_key_is_open_on_loopback(store: wp.Store, tmp_path: Path) -> None:
    with _client(store, tmp_path) as client:
        assert client.get("/v1/collections").json() == {"collections": ["docs"]}
