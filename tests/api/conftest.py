"""Fixtures for the REST API, named for the state they give: an app over a hash-embedder store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from api_helpers import FERRY, OWLS, SEALS, local_client, settings_for
from fastapi.testclient import TestClient

import windowpack as wp
from windowpack.api import create_app


@pytest.fixture
def client(hash_store: wp.Store, tmp_path: Path) -> Iterator[TestClient]:
    """A client of an app over an empty store, with no API keys (open, loopback only)."""
    with local_client(create_app(settings_for(tmp_path), store=hash_store)) as test_client:
        yield test_client


@pytest.fixture
def filled_client(client: TestClient) -> TestClient:
    """The app with collection `docs` holding three documents (seals, owls, ferry)."""
    assert client.post("/v1/collections", json={"name": "docs"}).status_code == 201
    documents = [
        {"id": "seals", "title": "Seals", "text": SEALS},
        {"id": "owls", "title": "Owls", "text": OWLS, "metadata": {"team": "birds"}},
        {"id": "ferry", "title": "Ferry", "text": FERRY},
    ]
    response = client.post("/v1/collections/docs/documents", json={"documents": documents})
    assert response.status_code == 200, response.text
    return client
