"""Session windows through `Client` and `AsyncClient`, against a real uvicorn server.

The server shares the test's store, so each remote window is checked against the library's
own session over the same store and questions; the token is all a client keeps, so a second
client resumes the session from it.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator

import pytest
from api_helpers import live_server

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.prompt_cache import MAX_ANTHROPIC_BREAKPOINTS, Tier
from windowpack.text.tokens import get_token_counter

CONFIG = StoreConfig(embedder="hash", chunk_tokens=32, fanout=3)
QUESTIONS = [f"What is the value of key{d}_{p}?" for d, p in [(3, 1), (17, 0), (8, 2), (25, 1),
             (11, 3), (4, 0)]]  # fmt: skip


def ledgers(count: int, prefix: str = "ledger") -> list[wp.Document]:
    """Documents of numbered facts: in `{prefix}-{d}`, key{d}_{p} has the value d * 1000 + p."""
    return [
        wp.Document(
            id=f"{prefix}-{d}",
            text="\n\n".join(
                f"Entry {p} of {prefix} {d}: the value of key{d}_{p} is {d * 1000 + p}."
                for p in range(5)
            ),
        )
        for d in range(count)
    ]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[wp.Store]:
    with wp.open(tmp_path_factory.mktemp("client-sessions"), config=CONFIG) as opened:
        opened.collection("ledgers").add(ledgers(30))
        opened.collection("notes").add(ledgers(8, prefix="note"))
        yield opened


@pytest.fixture(scope="module")
def server(store: wp.Store, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with live_server(store, tmp_path_factory.mktemp("server")) as url:
        yield url


@pytest.fixture
def client(server: str) -> Iterator[wp.Client]:
    with wp.Client(server) as opened:
        yield opened


def test_a_remote_session_is_the_library_s_session(client: wp.Client, store: wp.Store) -> None:
    remote = client.collection("ledgers").session(budget=3000, provider="anthropic")
    local = store.collection("ledgers").session(budget=3000, provider="anthropic")
    counter = get_token_counter("o200k_base")
    assert isinstance(remote, wp.client.RemoteSession)
    assert remote.token is None and remote.window is None and remote.budget == 3000

    previous: wp.Window | None = None
    for question in QUESTIONS:
        window = remote.pack(question)
        assert window == local.pack(question)
        assert remote.window == window and remote.token == local.token
        assert (remote.extends, remote.reason) == (local.extends, local.reason)
        assert window.tokens == counter.count(window.text) <= 3000
        assert all(isinstance(tier, Tier) for tier in window.session_tiers)
        assert local.window is not None and window.tiers == local.window.tiers
        assert window.cache_plan("anthropic") == local.window.cache_plan("anthropic")
        if previous is not None:
            assert remote.extends and window.text.startswith(previous.text)
            assert window.cached_prefix_tokens(previous) == previous.tokens
        previous = window
    assert previous is not None
    plan = previous.cache_plan("anthropic")
    assert len(plan["breakpoints"]) <= MAX_ANTHROPIC_BREAKPOINTS
    assert plan["request"]["system"][0]["text"] == previous.text[: previous.cacheable_prefix_chars]


def test_a_second_client_resumes_the_session_from_its_token(client: wp.Client, server: str) -> None:
    session = client.collection("ledgers").session(budget=2500)
    first = session.pack(QUESTIONS[0])
    token = session.token
    assert token is not None
    here = session.pack(QUESTIONS[1])

    with wp.Client(server) as other:
        resumed = other.collection("ledgers").session(budget=2500, token=token)
        assert resumed.token == token
        there = resumed.pack(QUESTIONS[1])
        assert there == here and resumed.token == session.token
        assert resumed.extends and there.text.startswith(first.text)
        assert there.cached_prefix_tokens(first) == first.tokens


def test_a_full_session_repacks_and_says_why(client: wp.Client) -> None:
    session = client.collection("ledgers").session(
        budget=1200, first_tokens=800, follow_up_tokens=300
    )
    windows = [session.pack(QUESTIONS[0])]
    for question in QUESTIONS[1:]:
        windows.append(session.pack(question))
        if not session.extends:
            break
    assert not session.extends, "follow-ups of 300 tokens cannot all fit 1,200 after 800"
    assert session.reason is not None and "too few left" in session.reason
    assert windows[-2].tokens > 1200 - 300 and not windows[-1].text.startswith(windows[-2].text)


def test_bad_tokens_and_providers_are_errors_naming_them(client: wp.Client) -> None:
    docs = client.collection("ledgers")
    with pytest.raises(wp.InvalidArgumentError, match="'session'"):
        docs.session(budget=2000, token="not a token!").pack("x")
    with pytest.raises(wp.InvalidArgumentError, match=r"'provider'.*'nope'"):
        docs.session(budget=2000, provider="nope").pack("x")
    with pytest.raises(wp.InvalidArgumentError, match=r"'provider'.*'nope'"):
        docs.pack("x", budget=2000, provider="nope")
    with pytest.raises(wp.CollectionNotFoundError):
        client.collection("absent").session(budget=2000).pack("x")


def test_a_pack_with_a_provider_carries_its_plan(client: wp.Client, store: wp.Store) -> None:
    window = client.collection("ledgers").pack(QUESTIONS[0], budget=2000, provider="openai")
    local = store.collection("ledgers").pack(QUESTIONS[0], budget=2000, provider="openai")

    assert window == local and window.session_tiers == ()
    assert window.cache_plan("openai") == local.cache_plan("openai")
    several = client.pack(
        QUESTIONS[0], collections=["ledgers", "notes"], budget=2000, provider="openai"
    )
    assert several == store.pack(
        QUESTIONS[0], collections=["ledgers", "notes"], budget=2000, provider="openai"
    )


def test_the_async_client_keeps_its_session_too(server: str, store: wp.Store) -> None:
    questions = ["What is the value of key5_2?", "What is the value of key3_4 in the notes?"]

    async def run() -> tuple[list[wp.Window], list[bool], str | None]:
        async with wp.AsyncClient(server) as client:
            session = client.session(collections=["ledgers", "notes"], budget=3000)
            windows = [await session.pack(questions[0])]
            async with wp.AsyncClient(server) as other:
                resumed = other.session(
                    collections=["ledgers", "notes"], budget=3000, token=session.token
                )
                windows.append(await resumed.pack(questions[1]))
            single = client.collection("ledgers").session(budget=2000)
            await single.pack(QUESTIONS[0])
            await single.pack(QUESTIONS[1])
            return windows, [resumed.extends, single.extends], single.token

    windows, extended, token = asyncio.run(run())

    local = store.session(collections=["ledgers", "notes"], budget=3000)
    assert windows == [local.pack(question) for question in questions]
    assert extended == [True, True] and token is not None
    for previous, window in itertools.pairwise(windows):
        assert window.text.startswith(previous.text)
        assert window.cached_prefix_tokens(previous) == previous.tokens
