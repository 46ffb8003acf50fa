"""Fixtures for the reliability suite: one store per database for a whole module (SQLite,
then PostgreSQL), filled once, with an app over it; tests check that it stays unchanged."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from reliability_helpers import FILLED_DOCUMENTS, LOCAL, SEALS, FilledServer, snapshot

import windowpack as wp
from windowpack.api import ApiSettings, create_app
from windowpack.config import StoreConfig

HASH_CONFIG = StoreConfig(embedder="hash", chunk_tokens=64)
POSTGRES_ADMIN_URL = os.environ.get(
    "WINDOWPACK_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[wp.Store]:
    """A store of its own for one test: collection `docs` holding the document `seals`."""
    with wp.open(tmp_path / "store", config=HASH_CONFIG) as opened:
        opened.collection("docs").add([wp.Document(id="seals", text=SEALS)])
        yield opened


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def filled_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FilledServer]:
    """A keyless app over a filled store, on SQLite then PostgreSQL; shared by a module."""
    folder = tmp_path_factory.mktemp(f"reliability-{request.param}")
    with _Database(request.param, folder) as url:
        store = (
            wp.open(folder / "store", config=HASH_CONFIG)
            if url is None
            else wp.open(url, index_dir=folder / "indexes", config=HASH_CONFIG)
        )
        store.collection("docs").add(FILLED_DOCUMENTS)
        settings = ApiSettings(upload_dir=str(folder / "uploads"), max_request_bytes=1_000_000)
        with store, TestClient(create_app(settings, store=store), base_url=LOCAL) as client:
            yield FilledServer(request.param, store, client, snapshot(store))


class _Database:
    """None for SQLite; for PostgreSQL a fresh database, dropped at the end."""

    def __init__(self, kind: str, folder: Path) -> None:
        self.kind, self.name = kind, f"windowpack_rel_{uuid.uuid4().hex[:12]}"

    def __enter__(self) -> str | None:
        if self.kind == "sqlite":
            return None
        import sqlalchemy

        try:
            self._admin = sqlalchemy.create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
            with self._admin.connect() as connection:
                connection.execute(sqlalchemy.text(f'CREATE DATABASE "{self.name}"'))
        except Exception as error:  # the same message tests/conftest.py gives
            pytest.skip(f"PostgreSQL not reachable at {POSTGRES_ADMIN_URL}: {error}")
        return f"{POSTGRES_ADMIN_URL.rsplit('/', 1)[0]}/{self.name}"

    def __exit__(self, *_exc: object) -> None:
        if self.kind == "sqlite":
            return
        import sqlalchemy

        with self._admin.connect() as connection:
            connection.execute(
                sqlalchemy.text(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
            )
        self._admin.dispose()
