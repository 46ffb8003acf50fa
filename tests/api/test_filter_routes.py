"""`where` in the search, pack and session bodies, and `POST .../documents:delete`."""

from __future__ import annotations

from api_helpers import bearer, error_code
from fastapi.testclient import TestClient

import windowpack as wp

TEAMS = ["ops", "infra", "data", "ops", "infra", "data"]


def _teams(client: TestClient) -> None:
    """Collection `t`: six notes, two per team."""
    assert client.post("/v1/collections", json={"name": "t"}).status_code == 201
    documents = [
        {
            "id": f"n{i}",
            "text": f"Note {i}: the otters of {team} guard the lantern by the glacier.",
            "metadata": {"team": team, "year": 2020 + i},
        }
        for i, team in enumerate(TEAMS)
    ]
    response = client.post("/v1/collections/t/documents", json={"documents": documents})
    assert response.status_code == 200, response.text


def test_search_pack_and_session_keep_the_documents_the_filter_matches(
    client: TestClient,
) -> None:
    _teams(client)
    where = {"team": "ops"}
    hits = client.post("/v1/collections/t/search", json={"query": "otters", "where": where})
    assert hits.status_code == 200 and {h["document_id"] for h in hits.json()} == {"n0", "n3"}
    body = {"query": "otters", "budget": 2000, "where": {"year": {"$gte": 2024}}}
    window = client.post("/v1/collections/t/pack", json=body).json()
    assert {item["document_id"] for item in window["items"]} == {"n4", "n5"}
    many = client.post("/v1/pack", json={**body, "collections": ["t"]}).json()
    assert {item["document_id"] for item in many["items"]} == {"n4", "n5"}
    session = client.post("/v1/collections/t/sessions/pack", json={**body, "budget": 4000})
    assert {item["document_id"] for item in session.json()["items"]} == {"n4", "n5"}
    none = client.post("/v1/collections/t/pack", json={**body, "where": {"team": "x"}}).json()
    assert none["items"] == [] and "matches where" in none["reason"]


def test_a_malformed_filter_is_an_error_naming_where_and_its_path(client: TestClient) -> None:
    _teams(client)
    body = {"query": "otters", "budget": 500, "where": {"year": {"$gt": "soon"}}}
    response = client.post("/v1/collections/t/pack", json=body)
    assert response.status_code in (400, 422)
    assert error_code(response) == "invalid_argument"
    assert "where.year.$gt" in response.json()["error"]["message"]
    wrong = client.post("/v1/collections/t/search", json={"query": "x", "where": ["team"]})
    assert wrong.status_code == 422 and "where" in wrong.json()["error"]["message"]


def test_delete_by_ids_and_filter_answers_the_report_in_one_version(client: TestClient) -> None:
    _teams(client)
    version = client.get("/v1/collections/t").json()["index_version"]
    response = client.post(
        "/v1/collections/t/documents:delete",
        json={"ids": ["n0", "n1", "gone"], "where": {"team": "ops"}},
    )
    assert response.status_code == 200, response.text
    assert response.json() == {"deleted": ["n0"], "missing": ["gone"], "index_version": version + 1}
    by_filter = client.post(
        "/v1/collections/t/documents:delete", json={"where": {"team": {"$in": ["data", "infra"]}}}
    ).json()
    assert by_filter["deleted"] == ["n1", "n2", "n4", "n5"]
    assert by_filter["index_version"] == version + 2
    left = client.get("/v1/collections/t/documents").json()["items"]
    assert [item["id"] for item in left] == ["n3"]
    nothing = client.post("/v1/collections/t/documents:delete", json={"ids": ["gone"]}).json()
    assert nothing == {"deleted": [], "missing": ["gone"], "index_version": version + 2}
    empty = client.post("/v1/collections/t/documents:delete", json={})
    assert empty.status_code in (400, 422) and error_code(empty) == "invalid_argument"
    missing = client.post("/v1/collections/zz/documents:delete", json={"ids": ["a"]})
    assert missing.status_code == 404 and error_code(missing) == "collection_not_found"


def test_deleting_needs_a_key_that_may_write_the_collection(
    client: TestClient, hash_store: wp.Store
) -> None:
    _teams(client)
    reader = bearer(hash_store.api_keys.create("r", collections=["t"], can_write=False).secret)
    writer = bearer(hash_store.api_keys.create("w", collections=["t"], can_write=True).secret)
    other = bearer(hash_store.api_keys.create("o", collections=["u"], can_write=True).secret)
    url, body = "/v1/collections/t/documents:delete", {"ids": ["n0"]}
    refused = client.post(url, json=body, headers=reader)
    assert refused.status_code == 403 and error_code(refused) == "forbidden"
    hidden = client.post(url, json=body, headers=other)
    assert hidden.status_code == 404
    assert client.post(url, json=body, headers=writer).json()["deleted"] == ["n0"]


def test_a_filter_delete_of_every_document_needs_all(client: TestClient) -> None:
    _teams(client)
    everything = {"where": {"year": {"$gte": 0}}}
    refused = client.post("/v1/collections/t/documents:delete", json=everything)
    assert refused.status_code == 400 and error_code(refused) == "invalid_argument"
    assert "'all'" in refused.json()["error"]["message"]
    assert len(client.get("/v1/collections/t/documents").json()["items"]) == 6
    done = client.post("/v1/collections/t/documents:delete", json={**everything, "all": True})
    assert done.status_code == 200 and len(done.json()["deleted"]) == 6
