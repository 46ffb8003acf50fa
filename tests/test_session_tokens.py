"""Session tokens (`service.SessionTokens`): a state round-trips through its token, and any
other string, or any payload even signed with the right secret, is a state or an
`InvalidArgumentError` naming `session`, never another exception."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from windowpack.errors import InvalidArgumentError
from windowpack.pack import SessionState
from windowpack.service import SessionTokens

TOKENS = SessionTokens(secret=b"a secret of the store", scope="key-1")
COLLECTIONS = ["docs", "notes"]
BUDGET = 4000


def _storable(text: str) -> bool:
    return "\x00" not in text and not any(0xD800 <= ord(char) <= 0xDFFF for char in text)


positions = st.lists(st.integers(0, 2**40), max_size=5, unique=True)
states = st.builds(
    lambda versions, plan, question, tiers: SessionState(
        versions=tuple(zip(COLLECTIONS, versions, strict=True)),
        plan=tuple(plan),
        first_query=question,
        added=tiers,
    ),
    st.lists(st.integers(0, 2**40), min_size=2, max_size=2),
    # What a plan holds: numbers, names and a filter's key (filters refuse NUL too).
    st.lists(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8).filter(_storable),
        max_size=8,
    ),
    st.text(min_size=1, max_size=50).filter(lambda text: bool(text.strip()) and _storable(text)),
    st.just(()),
)


def _decode(token: object, tokens: SessionTokens = TOKENS) -> SessionState | None:
    """The state, or None when refused naming `session` (anything else fails the test)."""
    try:
        return tokens.decode(token, collections=COLLECTIONS, budget=BUDGET)
    except InvalidArgumentError as error:
        assert error.argument == "session", error
        return None


@given(state=states, tiers=st.lists(st.tuples(positions, positions), max_size=4))
def test_a_state_round_trips_through_its_token(
    state: SessionState, tiers: list[tuple[list[int], list[int]]]
) -> None:
    seen: set[tuple[int, int]] = set()
    added = []
    for tier in tiers:  # each chunk once, each tier adding one: what a session makes
        kept = tuple(
            tuple(p for p in chunks if (i, p) not in seen) for i, chunks in enumerate(tier)
        )
        seen.update((i, p) for i, chunks in enumerate(kept) for p in chunks)
        if any(kept):
            added.append(kept)
    state = SessionState(
        versions=state.versions,
        plan=state.plan,
        first_query=state.first_query,
        added=tuple(added),
    )
    token = TOKENS.encode(state)
    assert _decode(token) == state
    other = SessionTokens(secret=b"a secret of the store", scope="key-2")
    assert _decode(token, other) is None  # another key's token
    assert _decode(token.replace(".", "x", 1)) is None


@given(token=st.text(max_size=200) | st.binary(max_size=50) | st.integers() | st.none())
def test_any_other_token_is_refused_naming_session(token: Any) -> None:
    assert _decode(token) is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=30,
)
fields = st.fixed_dictionaries(
    {
        "format": st.just(1) | json_values,
        "versions": st.just([["docs", 1], ["notes", 2]]) | json_values,
        "plan": st.just([]) | json_values,
        "first_query": st.text(max_size=30) | json_values,
        "added": st.lists(st.lists(positions, min_size=2, max_size=2), max_size=3) | json_values,
    }
)


@given(body=fields | json_values)
def test_any_signed_payload_is_a_state_or_refused_naming_session(body: Any) -> None:
    """A leaked secret signs anything: what it signs is still checked, field by field."""
    raw = json.dumps(body).encode()
    state = _decode(TOKENS.sign(raw))
    if state is not None:
        assert [name for name, _ in state.versions] == COLLECTIONS
        assert 1 <= len(state.first_query) <= 20_000
        assert sum(len(chunks) for tier in state.added for chunks in tier) <= BUDGET


@pytest.mark.parametrize("payload", [b"[" * 100_000, b'{"a":' * 5_000, b"\xff\xfe", b""])
def test_payloads_that_are_no_json_within_the_limits_are_refused(payload: bytes) -> None:
    assert _decode(TOKENS.sign(payload)) is None


def test_a_payload_of_far_more_values_than_the_budget_allows_is_refused_unparsed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its cost is then a byte count, not a parse: bounded by the budget, not by the token."""
    from windowpack.service import session_tokens

    def parse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(session_tokens, "load_untrusted_json", parse)
    body = {"format": 1, "versions": [["docs", 1], ["notes", 1]], "plan": [],
            "first_query": "q", "added": [[[0], []]] * 60_000}  # fmt: skip
    with pytest.raises(InvalidArgumentError, match="more than 13,000 JSON values"):
        TOKENS.decode(
            TOKENS.sign(json.dumps(body).encode()), collections=COLLECTIONS, budget=BUDGET
        )
