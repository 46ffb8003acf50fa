"""A JSON body's parsed size is bounded, not only its raw size (issue 14, D12): many tiny
values or deep nesting are refused, naming the body, before anything parses them."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from api_helpers import error_code, local_client, settings_for
from fastapi.testclient import TestClient

import windowpack as wp
from windowpack.api import create_app
from windowpack.api.limits import json_shape


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
