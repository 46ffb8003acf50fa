"""Collections, documents, search, pack and tree through the real app, in-process."""

from __future__ import annotations

from pathlib import Path

import pytest
from api_helpers import SEALS, error_code, local_client, settings_for
from fastapi.testclient import TestClient

import windowpack as wp
from windowpack.api import create_app
from windowpack.text.tokens import get_token_counter
from windowpack.types import WHY


def test_collection_lifecycle(client: TestClient) -> None:
    created = client.post("/v1/collections", json={"name": "notes", "chunk_tokens": 32})
    assert created.status_code == 201
    assert created.json() == {
        "name": "notes",
        "tokenizer": "o200k_base",
        "chunk_tokens": 32,
        "documents": 0,
        "chunks": 0,
        "tokens": 0,
        "index_version": 0,
    }
    again = client.post("/v1/collections", json={"name": "notes"})
    assert again.status_code == 409 and error_code(again) == "conflict"
    assert client.get("/v1/collections").json() == {"collections": ["notes"]}
    assert client.delete("/v1/collections/notes", params={"confirm": "notes"}).status_code == 204
    missing = client.get("/v1/collections/notes")
    assert missing.status_code == 404 and error_code(missing) == "collection_not_found"


def test_stats_follow_the_documents(filled_client: TestClient) -> None:
    stats = filled_client.get("/v1/collections/docs").json()
    assert stats["documents"] == 3 and stats["chunks"] >= 3 and stats["index_version"] == 1
    assert stats["tokens"] == sum(
        item["tokens"]
        for item in filled_client.get("/v1/collections/docs/documents").json()["items"]
    )


def test_documents_page_in_collection_order(filled_client: TestClient) -> None:
    first = filled_client.get("/v1/collections/docs/documents", params={"limit": 2}).json()
    assert [item["id"] for item in first["items"]] == ["seals", "owls"]
    assert first["total"] == 3 and first["next_offset"] == 2
    rest = filled_client.get(
        "/v1/collections/docs/documents", params={"offset": first["next_offset"], "limit": 2}
    ).json()
    assert [item["id"] for item in rest["items"]] == ["ferry"] and rest["next_offset"] is None


def test_get_upsert_and_delete_a_document(filled_client: TestClient) -> None:
    document = filled_client.get("/v1/collections/docs/documents/owls").json()
    assert document["text"].startswith("Barn owls") and document["metadata"] == {"team": "birds"}
    same = filled_client.put(
        "/v1/collections/docs/documents/owls",
        json={"text": document["text"], "title": "Owls", "metadata": {"team": "birds"}},
    )
    assert same.json()["unchanged"] == 1 and same.json()["index_version"] == 1
    changed = filled_client.put(
        "/v1/collections/docs/documents/owls", json={"text": "Tawny owls call at dusk."}
    )
    assert changed.json()["replaced"] == 1 and changed.json()["index_version"] == 2
    new = filled_client.put("/v1/collections/docs/documents/a/b.txt", json={"text": "Slashes."})
    assert new.json()["added"] == 1
    assert filled_client.get("/v1/collections/docs/documents/a/b.txt").json()["text"] == "Slashes."
    assert filled_client.delete("/v1/collections/docs/documents/owls").status_code == 204
    gone = filled_client.get("/v1/collections/docs/documents/owls")
    assert gone.status_code == 404 and error_code(gone) == "document_not_found"


def test_search_ranks_the_matching_document_first(filled_client: TestClient) -> None:
    response = filled_client.post(
        "/v1/collections/docs/search", json={"query": "when does the ferry leave", "k": 2}
    )
    hits = response.json()
    assert response.status_code == 200 and len(hits) == 2
    assert hits[0]["document_id"] == "ferry" and "ferry" in hits[0]["text"]


def test_pack_text_is_within_budget_and_counted_exactly(filled_client: TestClient) -> None:
    response = filled_client.post(
        "/v1/collections/docs/pack",
        json={"query": "owls", "budget": 120, "tokenizer": "cl100k_base"},
    )
    window = response.json()
    assert response.status_code == 200 and window["messages"] is None
    assert window["tokens"] == get_token_counter("cl100k_base").count(window["text"]) <= 120
    assert window["items"] and all(
        item["kind"] in {"chunk", "summary", "gap"} for item in window["items"]
    )
    # Why each item is in, as a code of `types.WHY`: the window's text does not say it.
    assert all(item["why"] in WHY for item in window["items"])
    assert "gap" in {item["why"] for item in window["items"]}
    # Each item's text is a slice of the window's, sent once; a chunk holds its document's text.
    for item in window["items"]:
        text = window["text"][item["offset"] : item["offset"] + item["chars"]]
        assert "text" not in item and text.strip()
        if item["kind"] == "chunk":
            document = filled_client.get(f"/v1/collections/docs/documents/{item['document_id']}")
            span = item["span"]
            assert document.json()["text"][span["start"] : span["end"]] in text
    assert window["index_versions"] == {"docs": 1}


def test_pack_as_messages_puts_the_stable_tier_first(filled_client: TestClient) -> None:
    body = {"query": "seals", "budget": 2000, "format": "messages", "cache_control": True}
    window = filled_client.post("/v1/collections/docs/pack", json=body).json()
    assert window["text"] is None and window["cacheable_prefix_tokens"] > 0
    system = window["messages"][0]
    assert system["role"] == "system"
    assert system["content"][0]["cache_control"] == {"type": "ephemeral"}


def test_pack_over_several_collections(filled_client: TestClient) -> None:
    filled_client.post("/v1/collections", json={"name": "more"})
    filled_client.post(
        "/v1/collections/more/documents", json={"documents": [{"text": "Otters crack clams."}]}
    )
    body = {"query": "otters", "budget": 3000, "collections": ["docs", "more"]}
    window = filled_client.post("/v1/pack", json=body).json()
    assert window["index_versions"] == {"docs": 1, "more": 1}
    assert "Otters crack clams." in window["text"]


def test_tree_and_its_nodes(filled_client: TestClient) -> None:
    overview = filled_client.get("/v1/collections/docs/tree").json()
    assert overview["documents"] == 3 and overview["root_id"] is not None
    root = filled_client.get(f"/v1/collections/docs/tree/nodes/{overview['root_id']}").json()
    assert root["children"] and root["text"]
    missing = filled_client.get("/v1/collections/docs/tree/nodes/999999")
    assert missing.status_code == 404 and error_code(missing) == "not_found"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": "seals"}, "body.budget"),
        ({"query": "", "budget": 10}, "body.query"),
        ({"query": "x", "budget": 10, "format": "html"}, "body.format"),
        ({"query": "x", "budget": 10, "tokenizer": "/etc/passwd"}, "body.tokenizer"),
        ({"query": "x", "budget": 10, "colour": "red"}, "body.colour"),
    ],
)
def test_validation_errors_name_the_field(
    filled_client: TestClient, body: dict[str, object], field: str
) -> None:
    response = filled_client.post("/v1/collections/docs/pack", json=body)
    assert response.status_code == 422 and error_code(response) == "validation_error"
    assert field in response.json()["error"]["message"]


def test_malformed_json_is_a_422_not_a_500(filled_client: TestClient) -> None:
    response = filled_client.post(
        "/v1/collections/docs/pack",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 422 and error_code(response) == "validation_error"


def test_budget_and_k_limits_come_from_settings(hash_store: wp.Store, tmp_path: Path) -> None:
    app = create_app(settings_for(tmp_path, max_budget=1000, max_k=5), store=hash_store)
    with local_client(app) as client:
        client.post("/v1/collections", json={"name": "docs"})
        client.post("/v1/collections/docs/documents", json={"documents": [{"text": SEALS}]})
        over = client.post("/v1/collections/docs/pack", json={"query": "seals", "budget": 1001})
        assert over.status_code == 400 and error_code(over) == "invalid_argument"
        assert "'budget'" in over.json()["error"]["message"]
        many = client.post("/v1/collections/docs/search", json={"query": "seals", "k": 6})
        assert many.status_code == 400 and "'k'" in many.json()["error"]["message"]
        assert client.post(
            "/v1/collections/docs/pack", json={"query": "s", "budget": 1000}
        ).is_success


def test_unknown_route_and_method_keep_the_error_shape(client: TestClient) -> None:
    assert error_code(client.get("/v1/nothing-here")) == "not_found"
    assert error_code(client.put("/v1/collections")) == "method_not_allowed"


def test_healthz_and_metrics(filled_client: TestClient) -> None:
    assert filled_client.get("/healthz").json() == {
        "status": "ok",
        "version": wp.__version__,
        "keys_required": False,
    }
    filled_client.post("/v1/collections/docs/pack", json={"query": "seals", "budget": 500})
    filled_client.post("/v1/collections/docs/pack", json={"query": "seals", "budget": 500})
    metrics = filled_client.get("/metrics")
    assert metrics.headers["content-type"].startswith("text/plain")
    text = metrics.text
    assert 'windowpack_http_requests_total{method="POST",route="pack",status="200"} 2.0' in text
    assert "windowpack_window_cache_hits 1.0" in text
    assert 'windowpack_index_version{name="docs"} 1.0' in text
    assert "windowpack_ingest_tokens_total" in text


@pytest.mark.model
def test_search_over_http_with_the_bundled_model(tmp_path: Path) -> None:
    with (
        wp.open(tmp_path / "store") as store,
        local_client(create_app(settings_for(tmp_path), store=store)) as client,
    ):
        client.post("/v1/collections", json={"name": "docs"})
        documents = [
            {"id": "boat", "text": "The ferry to the island leaves at seven."},
            {"id": "birds", "text": "Barn owls hunt voles in the meadow at night."},
        ]
        client.post("/v1/collections/docs/documents", json={"documents": documents})
        hits = client.post(
            "/v1/collections/docs/search", json={"query": "when does the boat depart", "k": 1}
        ).json()
        assert hits[0]["document_id"] == "boat"
