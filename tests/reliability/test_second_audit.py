"""The second audit's probes over HTTP, on SQLite and PostgreSQL (issue 40: D1-D5).

Each is a request that answered a 500, or cost seconds to minutes of CPU, at 1641aee. Each
must now be a 400 naming the offending field, in the one error shape, and leave the store as
it was and serving. Session tokens are also sent signed with the store's own secret, as if
it had leaked: past the signature, their payload is still checked, at a cost bounded by the
budget.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from reliability_helpers import FilledServer, assert_still_serving, error_of, snapshot

from windowpack.service import SessionTokens
from windowpack.storage import SESSION_TOKENS, StoreSecrets

SESSION = "/v1/collections/docs/sessions/pack"
ROUTES = [
    ("/v1/collections/docs/search", {"query": "seals"}),
    ("/v1/collections/docs/pack", {"query": "seals", "budget": 500}),
    (SESSION, {"query": "seals", "budget": 500}),
    ("/v1/pack", {"query": "seals", "budget": 500, "collections": ["docs"]}),
    ("/v1/sessions/pack", {"query": "seals", "budget": 500, "collections": ["docs"]}),
]


def _signed(server: FilledServer, payload: bytes) -> str:
    secret = StoreSecrets(server.store.sessions).get(SESSION_TOKENS)
    return SessionTokens(secret=secret).sign(payload)


def _unsigned(payload: bytes) -> str:
    return base64.urlsafe_b64encode(payload).decode().rstrip("=")


def _state(**fields: Any) -> bytes:
    body = {"format": 1, "versions": [["docs", 1]], "plan": [], "first_query": "seals"}
    return json.dumps({**body, "added": [], **fields}).encode()


def _refused(server: FilledServer, path: str, body: str, named: str) -> str:
    """Send `body` (JSON text: it may hold escapes a Python string cannot) and check the 400."""
    headers = {"content-type": "application/json"}
    response = server.client.post(path, content=body.encode(), headers=headers)
    assert response.status_code == 400, response.text
    code, message = error_of(response)
    assert code == "invalid_argument" and f"'{named}" in message, message
    return message


@pytest.fixture
def server(filled_server: FilledServer) -> Any:
    yield filled_server
    assert snapshot(filled_server.store) == filled_server.before
    assert_still_serving(filled_server.client)


@pytest.mark.parametrize("signed", [False, True])
def test_d1_a_token_of_deeply_nested_json_is_a_400_naming_session(
    server: FilledServer, signed: bool
) -> None:
    payload = b"[" * 100_000
    token = _signed(server, payload) if signed else _unsigned(payload)
    body = json.dumps({"query": "seals", "budget": 500, "session": token})
    _refused(server, SESSION, body, "session")


@pytest.mark.parametrize("signed", [False, True])
def test_d2_a_token_whose_question_holds_a_lone_surrogate_is_a_400_naming_session(
    server: FilledServer, signed: bool
) -> None:
    payload = _state(first_query="\ud800x")  # json.dumps writes it as the escape \ud800
    token = _signed(server, payload) if signed else _unsigned(payload)
    body = json.dumps({"query": "seals", "budget": 500, "session": token})
    message = _refused(server, SESSION, body, "session")
    assert ("lone surrogate" in message) is signed  # unsigned: refused before it is read


@pytest.mark.parametrize(("path", "fields"), ROUTES)
def test_d3_a_filter_value_with_a_lone_surrogate_is_a_400_naming_its_field(
    server: FilledServer, path: str, fields: dict[str, Any]
) -> None:
    body = json.dumps({**fields, "where": {"team": "\ud800x"}})
    _refused(server, path, body, "where.team")


@pytest.mark.parametrize("follow_ups", [2_000, 16_000, 60_000])
def test_d4_a_token_repeating_a_chunk_in_many_follow_ups_is_refused_before_any_packing(
    server: FilledServer, follow_ups: int
) -> None:
    # At 1641aee 16,000 follow-ups took 9-172 s and 60,000 did not end in 120 s. The limits
    # are counts (each chunk once, no more chunks than the budget has tokens), so this test
    # has no clock in it: it fails by hanging, not by a slow machine.
    token = _signed(server, _state(added=[[[0]]] * follow_ups))
    body = json.dumps({"query": "seals", "budget": 3000, "session": token})
    message = _refused(server, SESSION, body, "session")
    limits = ("a chunk twice", "more chunks than the budget", "more than 10,000 JSON values")
    assert any(limit in message for limit in limits), message


@pytest.mark.parametrize(("path", "fields"), ROUTES)
def test_d5_a_filter_of_too_many_clauses_is_a_400_naming_where(
    server: FilledServer, path: str, fields: dict[str, Any]
) -> None:
    # 20,000 clauses: the audit's 100,000 (1.9 MB) pass this server's 1 MB body limit.
    clauses = [{"team": f"t{i}"} for i in range(20_000)]
    body = json.dumps({**fields, "where": {"$and": clauses}}, separators=(",", ":"))
    message = _refused(server, path, body, "where.$and")
    assert "at most 10,000" in message
    smaller = json.dumps({**fields, "where": {"$or": clauses[:5_000]}})
    assert "1,000 clauses" in _refused(server, path, smaller, "where.$or[")


def test_a_delete_by_a_filter_keeping_every_document_is_a_400_naming_all(
    server: FilledServer,
) -> None:
    body = json.dumps({"where": {"$not": {"team": "nobody"}}})
    _refused(server, "/v1/collections/docs/documents:delete", body, "all")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32-be"])
def test_a_json_body_in_utf_16_or_32_is_a_400_naming_body(
    server: FilledServer, encoding: str
) -> None:
    body = json.dumps({"documents": [{"id": "wide", "text": "Wide characters."}]})
    response = server.client.post(
        "/v1/collections/docs/documents",
        content=body.encode(encoding),
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 400, response.text
    code, message = error_of(response)
    assert code == "invalid_argument" and "'body'" in message and "UTF-8" in message
