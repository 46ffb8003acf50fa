"""Session packs over REST: each follow-up's text starts with the previous answer's, byte for
byte, whenever `extends` says so; every window is within the budget and counted exactly; the
session lives in its token alone, so another replica continues it; provider cache plans."""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from api_helpers import bearer, error_code, local_client, settings_for
from fastapi.testclient import TestClient

import windowpack as wp
from windowpack.api import create_app
from windowpack.config import StoreConfig
from windowpack.prompt_cache import MAX_ANTHROPIC_BREAKPOINTS
from windowpack.service import SessionTokens
from windowpack.storage import SESSION_TOKENS, StoreSecrets
from windowpack.text.tokens import get_token_counter

CONFIG = StoreConfig(embedder="hash", chunk_tokens=32, fanout=3)
ROUTE = "/v1/collections/ledgers/sessions/pack"
QUESTIONS = [f"What is the value of key{d}_{p}?" for d, p in [(3, 1), (17, 0), (8, 2), (25, 1),
             (11, 3), (4, 0), (29, 2), (14, 1), (21, 0), (6, 3)]]  # fmt: skip


def ledgers(count: int, prefix: str = "ledger") -> list[wp.Document]:
    """Documents of numbered facts: in `{prefix}-{d}`, key{d}_{p} has the value d * 1000 + p."""
    return [
        wp.Document(
            id=f"{prefix}-{d}",
            title=f"{prefix.title()} {d}",
            text="\n\n".join(
                f"Entry {p} of {prefix} {d}: the value of key{d}_{p} is {d * 1000 + p}."
                for p in range(5)
            ),
        )
        for d in range(count)
    ]


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding `ledgers` (30 documents) and `notes` (8), written once."""
    path = tmp_path_factory.mktemp("session-routes")
    with wp.open(path / "store", config=CONFIG) as store:
        store.collection("ledgers").add(ledgers(30))
        store.collection("notes").add(ledgers(8, prefix="note"))
    return path


@pytest.fixture(scope="module")
def store(store_path: Path) -> Iterator[wp.Store]:
    with wp.open(store_path / "store", config=CONFIG) as opened:
        yield opened


@pytest.fixture(scope="module")
def api(store: wp.Store, store_path: Path) -> Iterator[TestClient]:
    with local_client(create_app(settings_for(store_path), store=store)) as client:
        yield client


def store_tokens(store: wp.Store, scope: str = "") -> SessionTokens:
    """The store's own token signer, for `scope` (an API key's id; '' without keys)."""
    return SessionTokens(secret=StoreSecrets(store.sessions).get(SESSION_TOKENS), scope=scope)


def ask(client: TestClient, body: dict[str, Any], route: str = ROUTE) -> dict[str, Any]:
    response = client.post(route, json=body)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def conversation(
    client: TestClient, questions: list[str], route: str = ROUTE, **options: Any
) -> list[dict[str, Any]]:
    """Each question's answer, each sent with the session of the answer before it."""
    answers: list[dict[str, Any]] = []
    for question in questions:
        token = answers[-1]["session"] if answers else None
        answers.append(ask(client, {"query": question, **options, "session": token}, route))
    return answers


def check_exact(answer: dict[str, Any], budget: int, tokenizer: str) -> None:
    """Within `budget`, its count and each tier's exact in `tokenizer`, tiers in order."""
    counter = get_token_counter(tokenizer)
    text = answer["text"]
    assert answer["tokens"] == counter.count(text) <= budget
    ends = [tier["end"] for tier in answer["session_tiers"]]
    assert ends == sorted(ends) and ends and ends[-1] <= len(text)
    for tier in answer["session_tiers"]:
        assert tier["tokens"] == counter.count(text[: tier["end"]])
    assert answer["stable_tokens"] == answer["session_tiers"][-1]["tokens"]


@pytest.mark.parametrize("tokenizer", ["o200k_base", "cl100k_base"])
def test_follow_ups_start_with_the_previous_answer_byte_for_byte(
    api: TestClient, tokenizer: str
) -> None:
    answers = conversation(api, QUESTIONS, budget=3000, tokenizer=tokenizer)

    assert not answers[0]["extends"] and answers[0]["session_reason"] is None
    for previous, answer in itertools.pairwise(answers):
        check_exact(answer, 3000, tokenizer)
        if answer["extends"]:
            assert answer["text"].startswith(previous["text"])
            assert answer["session_tiers"][:-1] == previous["session_tiers"]
        else:
            assert answer["session_reason"], "a window packed afresh says why"
    assert sum(answer["extends"] for answer in answers) == len(QUESTIONS) - 1
    for question, answer in zip(QUESTIONS, answers, strict=True):
        key = question.removeprefix("What is the value of key").rstrip("?")
        document, entry = map(int, key.split("_"))
        assert f"is {document * 1000 + entry}." in answer["text"], question


def test_the_answers_are_the_library_session_s(api: TestClient, store: wp.Store) -> None:
    answers = conversation(api, QUESTIONS[:4], budget=2500, provider="anthropic")
    session = store.collection("ledgers").session(budget=2500, provider="anthropic")

    for question, answer in zip(QUESTIONS[:4], answers, strict=True):
        window = session.pack(question)
        assert answer["text"] == window.text and answer["tokens"] == window.tokens
        assert answer["session"] == session.token
        assert (answer["extends"], answer["session_reason"]) == (session.extends, session.reason)
        assert answer["cache_plan"] == window.cache_plan("anthropic")
        assert answer["stable_tokens"] == window.stable_tokens


def test_another_replica_continues_the_session_from_its_token(
    api: TestClient, store_path: Path
) -> None:
    first, second = conversation(api, QUESTIONS[:2], budget=2500)
    here = ask(api, {"query": QUESTIONS[2], "budget": 2500, "session": second["session"]})

    # A second server over the same files: nothing of the first one's memory is shared.
    with (
        wp.open(store_path / "store", config=CONFIG) as replica_store,
        local_client(create_app(settings_for(store_path), store=replica_store)) as replica,
    ):
        there = ask(replica, {"query": QUESTIONS[2], "budget": 2500, "session": second["session"]})

    assert there == here
    assert there["extends"] and there["text"].startswith(second["text"])
    assert second["text"].startswith(first["text"])


def test_several_collections_share_one_session(api: TestClient) -> None:
    route = "/v1/sessions/pack"
    questions = ["What is the value of key5_2?", "What is the value of key3_4 in the notes?"]
    answers = conversation(api, questions, route, budget=3000, collections=["ledgers", "notes"])

    assert [answer["index_versions"] for answer in answers] == [{"ledgers": 1, "notes": 1}] * 2
    assert answers[1]["extends"] and answers[1]["text"].startswith(answers[0]["text"])
    check_exact(answers[1], 3000, "o200k_base")
    # The token is bound to its collections: sent to one collection's route, it is refused.
    body = {"query": questions[1], "budget": 3000, "session": answers[1]["session"]}
    alone = api.post(ROUTE, json=body)
    assert alone.status_code == 400 and error_code(alone) == "invalid_argument"
    message = alone.json()["error"]["message"]
    assert "'session'" in message and "['ledgers', 'notes']" in message


def test_a_follow_up_that_cannot_fit_is_packed_afresh_and_says_why(api: TestClient) -> None:
    options = {"budget": 1200, "first_tokens": 800, "follow_up_tokens": 300}
    answers = conversation(api, QUESTIONS[:6], **options)

    afresh = [i for i, answer in enumerate(answers) if i and not answer["extends"]]
    assert afresh, "follow-ups of 300 tokens cannot all fit 1,200 after 800"
    full = answers[afresh[0] - 1]
    repacked = answers[afresh[0]]
    assert full["tokens"] > 1200 - 300
    assert "too few left" in repacked["session_reason"]
    assert not repacked["text"].startswith(full["text"])
    for answer in answers:
        check_exact(answer, 1200, "o200k_base")


def test_an_anthropic_cache_plan_has_at_most_four_breakpoints(api: TestClient) -> None:
    answers = conversation(api, QUESTIONS[:7], budget=3000, provider="anthropic")
    last = answers[-1]
    plan = last["cache_plan"]

    # More tiers than breakpoints (a question whose answer a window holds already adds
    # none).
    assert len(last["session_tiers"]) > MAX_ANTHROPIC_BREAKPOINTS
    assert plan["provider"] == "anthropic"
    assert 1 <= len(plan["breakpoints"]) <= MAX_ANTHROPIC_BREAKPOINTS
    request = plan["request"]
    system = request["system"]
    assert [block["type"] for block in system] == ["text"]
    assert system[0]["text"] == last["text"][: last["cacheable_prefix_chars"]]
    parts = system + [part for message in request["messages"] for part in message["content"]]
    marked = [part for part in parts if "cache_control" in part]
    assert len(marked) == len(plan["breakpoints"])
    assert "".join(part["text"] for part in parts[:-1]) == last["text"]
    assert parts[-1]["text"] == QUESTIONS[6]
    assert plan["stable_tokens"] == last["stable_tokens"]

    as_messages = ask(
        api,
        {
            "query": QUESTIONS[6],
            "budget": 3000,
            "provider": "anthropic",
            "format": "messages",
            "session": answers[-2]["session"],
        },
    )
    assert as_messages["text"] is None
    assert as_messages["messages"] == [{"role": "system", "content": system}, *request["messages"]]


def test_a_pack_names_its_provider_s_plan_and_its_tiers(api: TestClient) -> None:
    # A provider's plan opens with a stable tier that reaches its cache minimum: the budget
    # allows it (at most half of it).
    body = {"query": QUESTIONS[0], "budget": 5000}
    plain = ask(api, body, "/v1/collections/ledgers/pack")
    openai = ask(api, {**body, "provider": "openai"}, "/v1/collections/ledgers/pack")

    assert plain["cache_plan"] is None and plain["session_tiers"] == []
    assert plain["stable_tokens"] == plain["cacheable_prefix_tokens"]
    plan = openai["cache_plan"]
    assert plan["provider"] == "openai" and plan["request"]["prompt_cache_key"].startswith(
        "windowpack-"
    )
    assert plan["request"]["messages"][0]["role"] == "system"
    messages = ask(
        api,
        {**body, "provider": "anthropic", "format": "messages"},
        "/v1/collections/ledgers/pack",
    )["messages"]
    assert "cache_control" in messages[0]["content"][0]
    many = ask(api, {**body, "provider": "openai", "collections": ["ledgers", "notes"]}, "/v1/pack")
    assert many["cache_plan"]["provider"] == "openai"


@pytest.mark.parametrize(
    "route", [ROUTE, "/v1/collections/ledgers/pack", "/v1/pack", "/v1/sessions/pack"]
)
def test_an_unknown_provider_is_an_error_naming_it(api: TestClient, route: str) -> None:
    body: dict[str, Any] = {"query": "x", "budget": 2000, "provider": "nope"}
    if route.startswith("/v1/pack") or route.startswith("/v1/sessions"):
        body["collections"] = ["ledgers"]
    response = api.post(route, json=body)

    assert response.status_code == 400 and error_code(response) == "invalid_argument"
    message = response.json()["error"]["message"]
    assert "'provider'" in message and "'nope'" in message and "anthropic" in message


@pytest.mark.parametrize(
    ("session", "status"),
    [
        ("not a token!", 400),
        ("eyJmb3JtYXQiOjJ9", 400),  # {"format":2}: a token of another format
        ("eyJmb3JtYXQiOjF9", 400),  # {"format":1}: a token with nothing in it
        ("", 422),
    ],
)
def test_a_bad_session_token_is_an_error_naming_session(
    api: TestClient, session: str, status: int
) -> None:
    response = api.post(ROUTE, json={"query": "x", "budget": 2000, "session": session})

    assert response.status_code == status, response.text
    assert error_code(response) in {"invalid_argument", "validation_error"}
    assert "session" in response.json()["error"]["message"]


def test_a_token_naming_chunks_the_collection_lacks_is_refused(
    api: TestClient, store: wp.Store
) -> None:
    first = ask(api, {"query": QUESTIONS[0], "budget": 2000})
    payload = json.loads(base64.urlsafe_b64decode(first["session"].split(".")[1] + "=="))
    payload["added"] = [[[10**6]]]
    edited = first["session"].split(".")
    edited[1] = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")
    refused = api.post(
        ROUTE, json={"query": QUESTIONS[1], "budget": 2000, "session": ".".join(edited)}
    )
    assert refused.status_code == 400 and "not signed" in refused.json()["error"]["message"]
    # Signed with the store's own secret (as if it leaked), the chunks are still checked.
    forged = store_tokens(store).sign(json.dumps(payload).encode())
    response = api.post(ROUTE, json={"query": QUESTIONS[1], "budget": 2000, "session": forged})

    assert response.status_code == 400 and error_code(response) == "invalid_argument"
    assert "'session'" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("body", "named", "status"),
    [
        ({"first_tokens": 5000}, "'first_tokens'", 400),
        ({"follow_up_tokens": 0}, "body.follow_up_tokens", 422),
        ({"align": True}, "body.align", 422),  # sessions size their tiers themselves
        ({"budget": 10_001}, "'budget'", 400),
    ],
)
def test_session_settings_are_checked_and_named(
    store: wp.Store, tmp_path: Path, body: dict[str, Any], named: str, status: int
) -> None:
    app = create_app(settings_for(tmp_path, max_budget=10_000), store=store)
    with local_client(app) as client:
        response = client.post(ROUTE, json={"query": "x", "budget": 2000, **body})
    assert response.status_code == status and named in response.json()["error"]["message"]


def test_a_session_needs_read_access_only_to_its_collections(
    hash_store: wp.Store, tmp_path: Path
) -> None:
    # A store of its own: once a key exists, every request to its store needs one.
    hash_store.collection("ledgers").add(ledgers(6))
    hash_store.collection("notes").add(ledgers(2, prefix="note"))
    reader = hash_store.api_keys.create("reader", collections=["ledgers"], can_write=False)
    body = {"query": QUESTIONS[0], "budget": 2000}
    with local_client(create_app(settings_for(tmp_path), store=hash_store)) as client:
        headers = bearer(reader.secret)
        first = ask_as(client, ROUTE, body, headers)
        follow = ask_as(client, ROUTE, {**body, "session": first["session"]}, headers)
        assert follow["extends"]
        hidden = client.post("/v1/collections/notes/sessions/pack", json=body, headers=headers)
        assert hidden.status_code == 404 and error_code(hidden) == "collection_not_found"
        several = client.post(
            "/v1/sessions/pack", json={**body, "collections": ["ledgers", "notes"]}, headers=headers
        )
        assert several.status_code == 404 and error_code(several) == "collection_not_found"
        assert "'notes'" in several.json()["error"]["message"]
        assert client.post(ROUTE, json=body).status_code == 401


def ask_as(
    client: TestClient, route: str, body: dict[str, Any], headers: dict[str, str]
) -> dict[str, Any]:
    response = client.post(route, json=body, headers=headers)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def test_the_session_routes_are_documented(api: TestClient) -> None:
    paths = api.get("/openapi.json").json()["paths"]
    for route in ("/v1/collections/{name}/sessions/pack", "/v1/sessions/pack"):
        operation = paths[route]["post"]
        assert operation["summary"] and "session" in operation["description"].lower()
        assert "SessionPackOut" in str(operation["responses"]["200"])
