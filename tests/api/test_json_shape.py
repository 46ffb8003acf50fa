"""A JSON body's parsed size is bounded, not only its raw size: many tiny values or deep
nesting are refused, naming the body, before anything parses them (a body's parsed form can
take 40 times its bytes). The count runs off the event loop, so other requests go on."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from api_helpers import LOCAL, error_code, local_client, settings_for
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

import windowpack as wp
from windowpack.api import create_app
from windowpack.api.limits import JsonShapeLimit, json_shape

# The reference count: blank out every string with a regular expression, then count brackets
# and commas. `json_shape` gets the same figures with numpy, which lets go of the GIL.
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_SLICE = 1 << 16  # json_shape's slice: strings that straddle it must still be seen whole


def reference_shape(body: bytes) -> tuple[int, int]:
    bare = _JSON_STRING.sub(b"0", body)
    values = 1 + sum(bare.count(byte) for byte in (b"{", b"[", b","))
    depth = level = 0
    for byte in bare:
        level += (byte in b"{[") - (byte in b"}]")
        depth = max(depth, level)
    return values, depth


_TRICKY_TEXT = st.text(alphabet=st.sampled_from('ab"\\,[]{}:\n\u00e9'), max_size=12)
_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | _TRICKY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TRICKY_TEXT, inner, max_size=4),
    max_leaves=20,
)


@pytest.fixture
def small_limits(hash_store: wp.Store, tmp_path: Path) -> Iterator[TestClient]:
    settings = settings_for(tmp_path, max_json_values=1000, max_json_depth=8)
    with local_client(create_app(settings, store=hash_store)) as client:
        assert client.post("/v1/collections", json={"name": "docs"}).status_code == 201
        yield client


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("{}", (2, 1)),
        ('[1, 2, {"a": "x,[{"}]', (5, 2)),
        (r'{"a": "\\\" ,{", "b": [[[]]]}', (6, 4)),
        ("[" * 50 + "]" * 50, (51, 50)),
    ],
)
def test_values_and_depth_are_counted_outside_strings(text: str, shape: tuple[int, int]) -> None:
    json.loads(text)  # each case is valid JSON
    assert json_shape(text.encode()) == shape


@settings(max_examples=200, deadline=None)
@given(value=_JSON_VALUES, ascii_only=st.booleans())
def test_the_count_matches_the_reference_on_any_json(value: object, ascii_only: bool) -> None:
    body = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert json_shape(body) == reference_shape(body)


@pytest.mark.parametrize("offset", range(-12, 4))
def test_a_string_across_a_slice_boundary_is_still_one_string(offset: int) -> None:
    text = 'a\\\\\\"b,[{\\"'  # backslashes in a row and escaped quotes
    string = json.dumps(text)
    body = ("[" + " " * (_SLICE + offset - 1) + string + ", [1]]").encode()
    assert json_shape(body) == reference_shape(body) == (4, 2)


async def test_other_requests_are_served_while_a_body_is_counted(
    hash_store: wp.Store, tmp_path: Path
) -> None:
    # The scan returns only once /healthz has been answered, which can happen only if the
    # scan is off the event loop; on it, the wait times out and the POST fails.
    scan_started, healthz_answered = threading.Event(), threading.Event()

    def waiting_scan(body: bytes) -> tuple[int, int]:
        scan_started.set()
        assert healthz_answered.wait(timeout=120), "/healthz was not answered during the scan"
        return json_shape(body)

    app = create_app(settings_for(tmp_path), store=hash_store)
    limited = JsonShapeLimit(app, max_values=1000, max_depth=8, scan=waiting_scan)
    transport = httpx.ASGITransport(app=limited)
    async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as client:
        created = asyncio.create_task(client.post("/v1/collections", json={"name": "docs"}))
        assert await asyncio.to_thread(scan_started.wait, 10)
        health = await client.get("/healthz")
        healthz_answered.set()
        assert health.status_code == 200 and health.json()["status"] == "ok"
        assert (await created).status_code == 201


def test_a_body_of_many_empty_objects_is_refused_naming_the_body(
    small_limits: TestClient,
) -> None:
    body = json.dumps({"documents": [{} for _ in range(200_000)]})
    tracemalloc.start()
    response = small_limits.post(
        "/v1/collections/docs/documents",
        content=body,
        headers={"content-type": "application/json"},
    )
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert response.status_code == 400 and error_code(response) == "invalid_argument"
    assert "body" in response.json()["error"]["message"]
    assert "1,000 JSON values" in response.json()["error"]["message"]
    assert peak < 8 * len(body)  # never parsed: 200,000 dicts alone take 10x the body


def test_deep_nesting_is_refused(small_limits: TestClient) -> None:
    metadata: dict[str, object] = {}
    for _ in range(10):
        metadata = {"m": metadata}
    documents = [{"id": "deep", "text": "Seals rest on sandbanks.", "metadata": metadata}]
    response = small_limits.post("/v1/collections/docs/documents", json={"documents": documents})
    assert response.status_code == 400 and "levels deep" in response.text
    assert small_limits.get("/v1/collections/docs/documents").json()["total"] == 0


def test_a_body_within_the_limits_is_served(small_limits: TestClient) -> None:
    documents = [{"id": "seals", "text": "Seals rest on sandbanks.", "metadata": {"a": [1, 2]}}]
    response = small_limits.post("/v1/collections/docs/documents", json={"documents": documents})
    assert response.status_code == 200, response.text
    packed = small_limits.post("/v1/collections/docs/pack", json={"query": "seals", "budget": 200})
    assert packed.status_code == 200 and "sandbanks" in packed.json()["text"]
