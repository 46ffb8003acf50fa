"""REST does what the library does, with its names and rules: a first write creates its
collection (and a failed one leaves none), conversations and tree rebuilds have routes, a
job's counts are its report's, errors name what the caller sends or changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from api_helpers import (
    FERRY,
    OWLS,
    SEALS,
    bearer,
    error_code,
    local_client,
    settings_for,
    wait_for_job,
)
from fastapi.testclient import TestClient

import windowpack as wp
from windowpack.api import create_app
from windowpack.config import StoreConfig
from windowpack.types import BUDGET_RULE, MAX_BUDGET

HASH_CONFIG = StoreConfig(embedder="hash", chunk_tokens=64)

CHAT = [
    {"role": "user", "content": "Write a haiku about saffron."},
    {"role": "assistant", "content": "Threads of red gold glow."},
    {"role": "user", "content": "And one about kestrels?"},
    {"role": "assistant", "content": "Hovering, then gone."},
]
TRANSCRIPT = "User: Write a haiku about saffron.\n\nAssistant: Threads of red gold glow."


def _job(client: TestClient, answer: object) -> dict[str, object]:
    return wait_for_job(client, answer.json()["id"])  # type: ignore[attr-defined]


WRITES = [
    ("POST", "/v1/collections/new/documents", {"json": {"documents": [{"text": SEALS}]}}),
    ("PUT", "/v1/collections/new/documents/owls", {"json": {"text": OWLS}}),
    ("POST", "/v1/collections/new/conversations", {"json": {"messages": CHAT}}),
    ("POST", "/v1/collections/new/files", {"files": [("files", ("f.txt", FERRY.encode()))]}),
]


@pytest.mark.parametrize(("method", "path", "request_"), WRITES, ids=lambda w: str(w)[:20])
def test_a_first_write_creates_its_collection_as_in_the_library(
    client: TestClient, method: str, path: str, request_: dict[str, object]
) -> None:
    answer = client.request(method, path, **request_)  # type: ignore[arg-type]
    assert answer.status_code == 200, answer.text
    assert answer.json()["added"] == 1
    assert client.get("/v1/collections").json() == {"collections": ["new"]}
    assert client.get("/v1/collections/new").json()["documents"] == 1


def test_a_first_write_takes_the_new_collections_settings_and_checks_an_existing_ones(
    client: TestClient, hash_store: wp.Store
) -> None:
    body = {"json": {"documents": [{"text": SEALS}]}}
    created = client.post("/v1/collections/new/documents?chunk_tokens=32", **body)  # type: ignore[arg-type]
    assert created.status_code == 200, created.text
    assert hash_store.collection("new").stats().chunk_tokens == 32
    other = client.post("/v1/collections/new/documents?chunk_tokens=64", **body)  # type: ignore[arg-type]
    assert other.status_code == 409 and "chunk_tokens=32" in other.json()["error"]["message"]


def test_a_write_that_must_find_its_collection_does_not_create_it(client: TestClient) -> None:
    answer = client.post(
        "/v1/collections/new/documents?create=false", json={"documents": [{"text": SEALS}]}
    )
    assert answer.status_code == 404 and error_code(answer) == "collection_not_found"
    assert client.get("/v1/collections").json() == {"collections": []}


@pytest.mark.parametrize("background", ["false", "true"])
def test_a_failed_first_write_leaves_no_collection_behind(
    client: TestClient, background: str
) -> None:
    twice = {"documents": [{"id": "same", "text": SEALS}, {"id": "same", "text": OWLS}]}
    answer = client.post(f"/v1/collections/new/documents?background={background}", json=twice)
    if background == "true":
        assert _job(client, answer)["status"] == "failed"
    else:
        assert answer.status_code == 400, answer.text
    assert client.get("/v1/collections").json() == {"collections": []}


def test_a_key_may_create_the_names_in_its_scope_and_only_those(
    hash_store: wp.Store, tmp_path: Path
) -> None:
    writer = hash_store.api_keys.create("w", collections=["docs"], can_write=True)
    reader = hash_store.api_keys.create("r", collections=["docs"], can_write=False)
    body = {"documents": [{"text": SEALS}]}
    with local_client(create_app(settings_for(tmp_path), store=hash_store)) as client:
        outside = client.post(
            "/v1/collections/other/documents", json=body, headers=bearer(writer.secret)
        )
        assert outside.status_code == 404 and error_code(outside) == "collection_not_found"
        read_only = client.post(
            "/v1/collections/docs/documents", json=body, headers=bearer(reader.secret)
        )
        assert read_only.status_code == 403 and error_code(read_only) == "forbidden"
        created = client.post(
            "/v1/collections/docs/documents", json=body, headers=bearer(writer.secret)
        )
        assert created.status_code == 200, created.text
    assert hash_store.collections() == ["docs"]


@pytest.mark.parametrize("messages", [CHAT, TRANSCRIPT], ids=["messages", "transcript"])
def test_a_conversation_is_stored_as_the_library_stores_it(
    client: TestClient, tmp_path: Path, messages: object
) -> None:
    answer = client.post(
        "/v1/collections/chats/conversations",
        json={"messages": messages, "id": "chat-1", "title": "Haiku", "metadata": {"by": "me"}},
    )
    assert answer.status_code == 200, answer.text
    with wp.open(
        tmp_path / "library", config=StoreConfig(embedder="hash", chunk_tokens=64)
    ) as store:
        local = store.collection("chats")
        local.add_conversation(messages, id="chat-1", title="Haiku", metadata={"by": "me"})  # type: ignore[arg-type]
        expected, (info,) = local.get("chat-1"), local.documents()
    stored = client.get("/v1/collections/chats/documents/chat-1").json()
    assert stored["kind"] == "conversation" == expected.kind
    assert (stored["text"], stored["title"], stored["metadata"]) == (
        expected.text,
        expected.title,
        expected.metadata,
    )
    (listed,) = client.get("/v1/collections/chats/documents").json()["items"]
    assert (listed["chunks"], listed["tokens"]) == (info.chunks, info.tokens)


def test_a_transcript_added_as_a_document_of_kind_conversation_has_its_turns(
    client: TestClient,
) -> None:
    by_route = client.post(
        "/v1/collections/chats/conversations", json={"messages": TRANSCRIPT, "id": "a"}
    )
    as_document = client.post(
        "/v1/collections/chats/documents",
        json={"documents": [{"id": "b", "text": TRANSCRIPT, "kind": "conversation"}]},
    )
    assert by_route.status_code == as_document.status_code == 200
    hits = client.post(
        "/v1/collections/chats/search", json={"query": "saffron haiku", "k": 2}
    ).json()
    assert {hit["unit_name"] for hit in hits} == {"turn"}


def test_a_conversation_that_is_not_one_is_named(client: TestClient) -> None:
    empty = client.post("/v1/collections/chats/conversations", json={"messages": []})
    assert empty.status_code == 400 and "messages" in empty.json()["error"]["message"]
    no_user = client.post("/v1/collections/chats/conversations", json={"messages": "no roles"})
    assert no_user.status_code == 400 and "User:" in no_user.json()["error"]["message"]
    assert client.get("/v1/collections").json() == {"collections": []}


def test_the_tree_is_rebuilt_as_the_library_rebuilds_it(filled_client: TestClient) -> None:
    before = filled_client.get("/v1/collections/docs/tree").json()
    answer = filled_client.post("/v1/collections/docs/tree:rebuild")
    assert answer.status_code == 200, answer.text
    assert answer.json()["index_version"] == 2
    assert filled_client.get("/v1/collections/docs/tree").json()["levels"] == before["levels"]
    job = _job(
        filled_client, filled_client.post("/v1/collections/docs/tree:rebuild?background=true")
    )
    assert job["status"] == "succeeded"
    missing = filled_client.post("/v1/collections/nope/tree:rebuild")
    assert missing.status_code == 404 and error_code(missing) == "collection_not_found"
    assert filled_client.get("/v1/collections").json() == {"collections": ["docs"]}


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("documents", {"json": {"documents": [{"text": SEALS}, {"text": OWLS}]}}),
        ("conversations", {"json": {"messages": CHAT}}),
        ("files", {"files": [("files", ("f.txt", FERRY.encode()))]}),
    ],
)
def test_a_background_jobs_counts_are_its_reports(
    filled_client: TestClient, route: str, body: dict[str, object]
) -> None:
    answer = filled_client.post(f"/v1/collections/docs/{route}?background=true", **body)  # type: ignore[arg-type]
    job = _job(filled_client, answer)
    report = job["report"]
    assert isinstance(report, dict) and job["status"] == "succeeded"
    assert report["embedded"] > 0
    for count in ("chunks", "tokens", "embedded"):
        assert job[count] == report[count], count


def test_malformed_json_is_named_by_line_and_column(filled_client: TestClient) -> None:
    body = b'{"query": "seals",\n  "budget": }'
    answer = filled_client.post(
        "/v1/collections/docs/pack", content=body, headers={"content-type": "application/json"}
    )
    message = answer.json()["error"]["message"]
    assert answer.status_code == 422 and error_code(answer) == "validation_error"
    assert message.startswith("body: malformed JSON at line 2 column 13"), message
    assert "body.3" not in message


@pytest.mark.parametrize("content_type", [None, "text/plain"])
def test_a_body_sent_without_its_json_content_type_names_the_header(
    filled_client: TestClient, content_type: str | None
) -> None:
    headers = {"content-type": content_type} if content_type else {}
    answer = filled_client.post(
        "/v1/collections/docs/pack", content=b'{"query": "seals", "budget": 100}', headers=headers
    )
    message = answer.json()["error"]["message"]
    assert answer.status_code == 422 and "Content-Type: application/json" in message
    assert (repr(content_type) if content_type else "was not sent") in message


def test_budgets_follow_the_one_rule(filled_client: TestClient) -> None:
    largest = filled_client.post(
        "/v1/collections/docs/pack", json={"query": "seals", "budget": MAX_BUDGET}
    )
    assert largest.status_code == 200, largest.text
    tiny = filled_client.post("/v1/collections/docs/pack", json={"query": "seals", "budget": 1})
    assert tiny.status_code == 200 and tiny.json()["tokens"] == 0 and tiny.json()["reason"]
    for budget in (0, MAX_BUDGET + 1):
        refused = filled_client.post(
            "/v1/collections/docs/pack", json={"query": "seals", "budget": budget}
        )
        assert refused.status_code == 422, budget
        assert (
            f"body.budget: must be a whole number {BUDGET_RULE}"
            in refused.json()["error"]["message"]
        )
    schema = filled_client.get("/openapi.json").json()["components"]["schemas"]["PackIn"]
    budget_schema = schema["properties"]["budget"]
    assert (budget_schema["minimum"], budget_schema["maximum"]) == (1, MAX_BUDGET)
    assert BUDGET_RULE in budget_schema["description"]


def test_a_collection_built_with_another_embedder_says_the_servers_fix(
    tmp_path: Path,
) -> None:
    with wp.open(tmp_path / "store", config=StoreConfig(embedder="hash-128")) as store:
        store.collection("docs").add([SEALS])
    with wp.open(tmp_path / "store", config=StoreConfig(embedder="hash")) as store:
        with local_client(create_app(settings_for(tmp_path), store=store)) as client:
            answer = client.post("/v1/collections/docs/search", json={"query": "seals"})
        with pytest.raises(wp.EmbedderMismatchError, match=r"StoreConfig\(embedder='hash-128'\)"):
            store.collection("docs")
    message = answer.json()["error"]["message"]
    assert answer.status_code == 409 and error_code(answer) == "embedder_mismatch"
    assert "WINDOWPACK_EMBEDDER=hash-128" in message and "StoreConfig" not in message
