"""Session tokens: a session's state (`pack.SessionState`) as a signed string, and back.

A token travels through clients, so everything in it is untrusted until checked, and its
checks must cost what the session may cost, not what the token's sender chooses:

- **Signed.** `wps1.<payload>.<mac>`: the payload is base64url of compact JSON, the mac an
  HMAC-SHA256 of it under the store's `session_tokens` secret (`storage.StoreSecrets`, shared
  by every replica on the database) and the caller's scope (the REST API key's id; empty for
  the library). A token of another store, of another key, edited, or signed before a rotation
  (`windowpack keys rotate-session-secret`) is refused naming `session` before its payload is
  read. It is signed, not encrypted: the client can read its question and chunk positions.
- **Bound to its collections.** A token resumes a session over the collections it was packed
  over, in that order: asked of others, it is refused naming `session`.
- **Bounded.** At most `MAX_TOKEN_CHARS` characters, JSON nested `MAX_DEPTH` deep at most,
  strings without NUL or lone surrogates (`text.load_untrusted_json`); the first question a
  string of at most `MAX_QUERY_CHARS`, as REST caps a query; at most as many chunk positions
  as the budget has tokens, none twice (a window shows a chunk once, and each costs a token at
  least), and each tier adds one; a payload with more JSON values than that allows is refused
  before it is parsed. Rendering the state again then stops at the budget (`pack.session`),
  so a follow-up costs at most what a window of the budget costs.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from windowpack.errors import InvalidArgumentError
from windowpack.pack import SessionState
from windowpack.search import check_query
from windowpack.text import load_untrusted_json

MAX_TOKEN_CHARS = 1_000_000
"""The longest token read (REST's `session` field has the same cap)."""
MAX_QUERY_CHARS = 20_000
"""The longest first question a token may hold: REST's cap on a query."""
MAX_DEPTH = 4
"""A token's JSON nests {`added` [tier [collection [position]]]}: four levels."""
MAX_COLLECTIONS = 100
MAX_PLAN_ENTRIES = 32
_SETTINGS_SLACK = 20_000  # brackets and commas a filter's key in the settings may hold
_PREFIX = "wps1"
_FORMAT = 1
_FIELDS = {"format", "versions", "plan", "first_query", "added"}
_ARGUMENT = "session"


@dataclass(frozen=True, kw_only=True)
class SessionTokens:
    """Signs and reads the session tokens of one store (`secret`) for one caller (`scope`)."""

    secret: bytes
    scope: str = ""

    def encode(self, state: SessionState) -> str:
        """`state` as a signed token."""
        body = {
            "format": _FORMAT,
            "versions": state.versions,
            "plan": state.plan,
            "first_query": state.first_query,
            "added": state.added,
        }
        return self.sign(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode())

    def sign(self, raw: bytes) -> str:
        """A token of the payload `raw`, whatever it holds: what `encode` sends, and what a
        test sends to show that a signed payload is still checked (a leaked secret)."""
        payload = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        return f"{_PREFIX}.{payload}.{self._mac(payload)}"

    def decode(self, token: object, *, collections: Sequence[str], budget: int) -> SessionState:
        """The state `token` holds, for a session over `collections` within `budget` tokens;
        `InvalidArgumentError("session")` saying why when it is not one this store signed for
        this scope and these collections, or passes a limit."""
        payload = self._verified(token)
        try:
            raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
        except (binascii.Error, ValueError) as error:
            raise _refused(f"its payload is not base64url ({error})") from None
        max_values = 3 * budget + 1_000
        # Parsing costs by the value; counted first by the bytes that can start one (memchr
        # speed), so that a payload of many more values than the budget allows is refused
        # unparsed: the question and the settings may hold such bytes in their strings.
        starts = raw.count(b"[") + raw.count(b"{") + raw.count(b",")
        if starts > max_values + MAX_QUERY_CHARS + _SETTINGS_SLACK:
            raise _refused(f"holds more than {max_values:,} JSON values")
        body = load_untrusted_json(
            raw,
            argument=_ARGUMENT,
            max_chars=MAX_TOKEN_CHARS,
            max_depth=MAX_DEPTH,
            max_values=max_values,
        )
        return _state(body, list(collections), budget)

    def _mac(self, payload: str) -> str:
        message = f"{self.scope}\x00{payload}".encode()
        digest = hmac.new(self.secret, message, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def _verified(self, token: object) -> str:
        """The payload of `token` once its signature holds."""
        if not isinstance(token, str):
            raise _refused(f"must be a string, got {type(token).__name__}")
        if len(token) > MAX_TOKEN_CHARS:
            raise _refused(f"is longer than {MAX_TOKEN_CHARS:,} characters")
        parts = token.split(".")
        if len(parts) != 3 or parts[0] != _PREFIX:
            raise _refused("is not a session token (an answer's `session`, passed back whole)")
        _, payload, mac = parts
        if not hmac.compare_digest(mac.encode(errors="replace"), self._mac(payload).encode()):
            raise _refused(
                "was not signed by this store for this caller (another store or API key, an "
                "edited token, or one from before the session secret was rotated): start a "
                "new session"
            )
        return payload


def _state(body: Any, collections: list[str], budget: int) -> SessionState:
    if not isinstance(body, dict) or set(body) != _FIELDS or body["format"] != _FORMAT:
        raise _refused("is not a session token of this version")
    first_query = body["first_query"]
    if not isinstance(first_query, str) or not 1 <= len(first_query) <= MAX_QUERY_CHARS:
        raise _refused(f"its question must be a string of 1 to {MAX_QUERY_CHARS:,} characters")
    try:
        check_query(first_query)
    except InvalidArgumentError:
        raise _refused("its question must hold more than white space") from None
    versions = _versions(body["versions"], collections)
    plan = body["plan"]
    if (
        not isinstance(plan, list)
        or len(plan) > MAX_PLAN_ENTRIES
        or not all(value is None or isinstance(value, str | int | float | bool) for value in plan)
    ):
        raise _refused("its settings are not a list of values")
    added = _added(body["added"], len(collections), budget)
    return SessionState(versions=versions, plan=tuple(plan), first_query=first_query, added=added)


def _versions(value: Any, collections: list[str]) -> tuple[tuple[str, int], ...]:
    if not isinstance(value, list) or len(value) > MAX_COLLECTIONS:
        raise _refused("its versions are not a list")
    pairs = []
    for pair in value:
        if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
            raise _refused("its versions are not (collection, version) pairs")
        pairs.append((pair[0], _integer(pair[1], "version")))
    names = [name for name, _ in pairs]
    if names != collections:
        raise _refused(f"was issued for the collections {names!r}, not {collections!r}")
    return tuple(pairs)


def _added(value: Any, collections: int, budget: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Each follow-up's chunk positions by collection: at most `budget` in all, none twice."""
    if not isinstance(value, list):
        raise _refused("its follow-ups are not a list")
    tiers = []
    seen: list[set[int]] = [set() for _ in range(collections)]
    total = 0
    for tier in value:
        if not isinstance(tier, list) or len(tier) != collections:
            raise _refused("a follow-up does not list chunks by collection")
        chunks = []
        for shown, positions in zip(seen, tier, strict=True):
            if not isinstance(positions, list):
                raise _refused("a follow-up's chunks are not a list")
            total += len(positions)
            if total > budget:
                raise _refused("its follow-ups name more chunks than the budget has tokens")
            read = tuple(_integer(position, "chunk position") for position in positions)
            if shown.intersection(read) or len(set(read)) != len(read):
                raise _refused("its follow-ups name a chunk twice")
            shown.update(read)
            chunks.append(read)
        if not any(chunks):
            raise _refused("a follow-up adds no chunk")
        tiers.append(tuple(chunks))
    return tuple(tiers)


def _integer(value: Any, what: str) -> int:
    """A non-negative integer numpy can hold (a version, a chunk position)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**62:
        raise _refused(f"{value!r} is no {what}")
    return value


def _refused(why: str) -> InvalidArgumentError:
    return InvalidArgumentError(_ARGUMENT, why)
