"""API keys: required once they exist, scoped to collections and to read or write, revocable."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from api_helpers import bearer, error_code, local_client, settings_for
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import windowpack as wp
from windowpack.api import ApiSettings, create_app
from windowpack.cli import app as cli_app
from windowpack.errors import InvalidArgumentError


@pytest.fixture
def tenants(hash_store: wp.Store, tmp_path: Path) -> Iterator[TestClient]:
    """Collections `a` and `b` with one document each, made before any key exists."""
    with local_client(create_app(settings_for(tmp_path), store=hash_store)) as client:
        for name, text in (("a", "Alpha secrets about seals."), ("b", "Bravo secrets about owls.")):
            client.post("/v1/collections", json={"name": name})
            client.post(
                f"/v1/collections/{name}/documents",
                json={"documents": [{"id": "d", "text": text}]},
            )
        yield client


def _key(store: wp.Store, collections: list[str], *, write: bool = False) -> dict[str, str]:
    return bearer(store.api_keys.create("test", collections=collections, can_write=write).secret)


def test_keys_are_required_once_one_exists(tenants: TestClient, hash_store: wp.Store) -> None:
    assert tenants.get("/v1/collections").status_code == 200
    _key(hash_store, ["a"])
    missing = tenants.get("/v1/collections")
    assert missing.status_code == 401 and error_code(missing) == "unauthorized"
    wrong = tenants.get("/v1/collections", headers=bearer("wpk_000000000000_" + "x" * 43))
    assert wrong.status_code == 401
    assert tenants.get("/healthz").json()["keys_required"] is True


def test_a_key_for_a_cannot_read_or_learn_of_b(tenants: TestClient, hash_store: wp.Store) -> None:
    key_a = _key(hash_store, ["a"], write=True)
    assert tenants.get("/v1/collections", headers=key_a).json() == {"collections": ["a"]}
    assert tenants.post(
        "/v1/collections/a/search", json={"query": "secrets"}, headers=key_a
    ).is_success
    absent = tenants.get("/v1/collections/zzz", headers=key_a)
    requests = [
        ("GET", "/v1/collections/b", None),
        ("GET", "/v1/collections/b/documents", None),
        ("GET", "/v1/collections/b/documents/d", None),
        ("GET", "/v1/collections/b/tree", None),
        ("POST", "/v1/collections/b/search", {"query": "secrets"}),
        ("POST", "/v1/collections/b/pack", {"query": "secrets", "budget": 100}),
        ("POST", "/v1/pack", {"query": "secrets", "budget": 100, "collections": ["a", "b"]}),
        ("POST", "/v1/collections/b/documents", {"documents": [{"text": "x"}]}),
        ("DELETE", "/v1/collections/b", None),
    ]
    for method, url, body in requests:
        response = tenants.request(method, url, json=body, headers=key_a)
        # Exactly what an absent collection gives, with B's name only because the client sent it;
        # the collections it names as existing are only those the key may see.
        assert response.status_code == 404, (method, url)
        message = "collection 'b' does not exist; collections here: 'a'"
        assert response.json() == {"error": {"code": "collection_not_found", "message": message}}
    assert (
        absent.json()["error"]["message"]
        == "collection 'zzz' does not exist; collections here: 'a'"
    )
    create_b = tenants.post("/v1/collections", json={"name": "b"}, headers=key_a)
    create_c = tenants.post("/v1/collections", json={"name": "c"}, headers=key_a)
    assert create_b.status_code == create_c.status_code == 403  # the same for existing and not
    metrics = tenants.get("/metrics", headers=key_a)
    assert metrics.status_code == 403  # metrics name every collection
    assert tenants.get("/metrics", headers=_key(hash_store, ["*"])).status_code == 200


def test_jobs_of_b_are_invisible_to_a(tenants: TestClient, hash_store: wp.Store) -> None:
    key_a, key_b = _key(hash_store, ["a"]), _key(hash_store, ["b"], write=True)
    job = tenants.post(
        "/v1/collections/b/documents",
        json={"documents": [{"text": "More on owls."}]},
        params={"background": True},
        headers=key_b,
    ).json()
    assert tenants.get(f"/v1/jobs/{job['id']}", headers=key_b).status_code == 200
    hidden = tenants.get(f"/v1/jobs/{job['id']}", headers=key_a)
    assert hidden.status_code == 404 and error_code(hidden) == "job_not_found"


def test_a_read_key_cannot_write(tenants: TestClient, hash_store: wp.Store) -> None:
    reader = _key(hash_store, ["a"])
    assert tenants.get("/v1/collections/a/documents/d", headers=reader).is_success
    for method, url, body in [
        ("POST", "/v1/collections/a/documents", {"documents": [{"text": "x"}]}),
        ("PUT", "/v1/collections/a/documents/d", {"text": "changed"}),
        ("DELETE", "/v1/collections/a/documents/d", None),
        ("DELETE", "/v1/collections/a", None),
    ]:
        response = tenants.request(method, url, json=body, headers=reader)
        assert response.status_code == 403 and error_code(response) == "forbidden", url
    assert (
        tenants.get("/v1/collections/a/documents/d", headers=reader)
        .json()["text"]
        .startswith("Alpha")
    )


def test_keys_from_the_cli_work_until_revoked(tenants: TestClient, hash_store: wp.Store) -> None:
    runner = CliRunner()
    store_folder = str(Path(hash_store.url.removeprefix("sqlite:///")).parent)
    created = runner.invoke(cli_app, ["keys", "create", "ci", "-c", "a", "--store", store_folder])
    assert created.exit_code == 0, created.output
    secret = created.stdout.strip().splitlines()[-1]
    assert secret.startswith("wpk_")
    assert tenants.get("/v1/collections/a", headers=bearer(secret)).status_code == 200
    listed = runner.invoke(cli_app, ["keys", "list", "--store", store_folder]).stdout
    key_id = listed.split()[0]
    assert "active" in listed and "read-only" in listed and secret not in listed
    revoked = runner.invoke(cli_app, ["keys", "revoke", key_id, "--store", store_folder])
    assert revoked.exit_code == 0
    after = tenants.get("/v1/collections/a", headers=bearer(secret))
    assert after.status_code == 401 and error_code(after) == "unauthorized"
    assert "revoked" in runner.invoke(cli_app, ["keys", "list", "--store", store_folder]).stdout


def test_keys_are_stored_hashed(hash_store: wp.Store) -> None:
    secret = hash_store.api_keys.create("x", collections=["a"], can_write=False).secret
    database = Path(hash_store.url.removeprefix("sqlite:///"))
    hash_store.close()
    raw = b"".join(path.read_bytes() for path in database.parent.glob("windowpack.db*"))
    assert secret.encode() not in raw and secret.split("_", 2)[2].encode() not in raw


def test_binding_beyond_loopback_needs_keys(hash_store: wp.Store) -> None:
    with pytest.raises(InvalidArgumentError, match=r"refusing to listen on 0\.0\.0\.0"):
        create_app(ApiSettings(host="0.0.0.0"), store=hash_store)
    create_app(ApiSettings(host="127.0.0.1"), store=hash_store)  # loopback: fine without keys
    hash_store.api_keys.create("ops", collections=["*"], can_write=True)
    app = create_app(ApiSettings(host="0.0.0.0"), store=hash_store)
    key_id = hash_store.api_keys.list()[0].key_id
    hash_store.api_keys.revoke(key_id)
    # Started beyond loopback: still closed when every key is revoked.
    assert local_client(app).get("/v1/collections").status_code == 401


def test_serve_refuses_another_host_without_keys(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        cli_app,
        ["serve", "--host", "0.0.0.0", "--store", str(tmp_path / "s"), "--embedder", "hash"],
    )
    assert result.exit_code != 0 and isinstance(result.exception, InvalidArgumentError)
    # Through the real entry point: one line on stderr, exit status 2.
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            "from windowpack.cli import main; main()",
            "serve",
            "--host",
            "0.0.0.0",
            "--store",
            str(tmp_path / "s"),
            "--embedder",
            "hash",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 2
    assert completed.stderr.strip().startswith("error: invalid argument 'host'")
    assert len(completed.stderr.strip().splitlines()) == 1
