"""Schemathesis over the app's own OpenAPI schema, on SQLite and PostgreSQL: no input gives a
500, none hangs, responses conform.

Every route gets generated bodies, paths and parameters (25 each, derandomized, so a run is
bounded and repeatable). The app runs under a real uvicorn with the server's own protocol
and deadlines, and each request has a generous client timeout: a hang fails the test as a
timeout instead of stalling the suite.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from api_helpers import SEALS, settings_for
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

import windowpack as wp
from live_uvicorn import served
from windowpack.api import create_app, head_deadline_protocol
from windowpack.config import StoreConfig

CONFIG = StoreConfig(embedder="hash", chunk_tokens=64)
POSTGRES_ADMIN_URL = os.environ.get(
    "WINDOWPACK_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
# Only catches a hang: the slowest generated request (a pack over a few documents) is far less.
REQUEST_TIMEOUT_S = 60


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def live_api(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Any, str]]:
    """(app, base URL) of a keyless server over a store holding collection `docs`."""
    folder = tmp_path_factory.mktemp(f"fuzz-{request.param}")
    with _database(request.param, folder) as store:
        store.collection("docs").add([wp.Document(id="seals", text=SEALS)])
        app = create_app(settings_for(folder, max_request_bytes=1_000_000), store=store)
        protocol = head_deadline_protocol(20.0)
        try:
            with served(lambda _port: app, log_level="critical", http=protocol) as port:
                yield app, f"http://127.0.0.1:{port}"
        finally:
            app.state.api.close_workers()


def _openapi() -> dict[str, Any]:
    """The app's schema (the same over any store): from an app over a throwaway one."""
    folder = Path(tempfile.mkdtemp(prefix="wp-fuzz-schema-"))
    with wp.open(folder / "store", config=CONFIG) as store:
        app = create_app(settings_for(folder), store=store)
        spec: dict[str, Any] = app.openapi()
        app.state.api.close_workers()
    shutil.rmtree(folder, ignore_errors=True)
    return spec


schema = schemathesis.openapi.from_dict(_openapi())


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_no_input_is_a_server_error_or_hangs(
    case: schemathesis.Case, live_api: tuple[Any, str]
) -> None:
    _, base_url = live_api
    case.call_and_validate(
        base_url=base_url,
        timeout=REQUEST_TIMEOUT_S,
        checks=[
            not_a_server_error,
            response_schema_conformance,
            status_code_conformance,
            content_type_conformance,
        ],
    )


class _database:  # noqa: N801 - used as a context manager, like `open`
    """A store on SQLite, or on a fresh PostgreSQL database dropped at the end."""

    def __init__(self, kind: str, folder: Path) -> None:
        self.kind, self.folder = kind, folder
        self.name = f"windowpack_fuzz_{uuid.uuid4().hex[:12]}"

    def __enter__(self) -> wp.Store:
        if self.kind == "sqlite":
            self.store = wp.open(self.folder / "store", config=CONFIG)
            return self.store
        import sqlalchemy

        try:
            self._admin = sqlalchemy.create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
            with self._admin.connect() as connection:
                connection.execute(sqlalchemy.text(f'CREATE DATABASE "{self.name}"'))
        except Exception as error:  # the same message tests/conftest.py gives
            pytest.skip(f"PostgreSQL not reachable at {POSTGRES_ADMIN_URL}: {error}")
        url = f"{POSTGRES_ADMIN_URL.rsplit('/', 1)[0]}/{self.name}"
        self.store = wp.open(url, index_dir=self.folder / "indexes", config=CONFIG)
        return self.store

    def __exit__(self, *_exc: object) -> None:
        self.store.close()
        if self.kind == "sqlite":
            return
        import sqlalchemy

        with self._admin.connect() as connection:
            connection.execute(
                sqlalchemy.text(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
            )
        self._admin.dispose()
