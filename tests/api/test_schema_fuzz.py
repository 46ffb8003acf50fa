"""Schemathesis over the app's own OpenAPI schema: no input gives a 500, responses conform."""

from __future__ import annotations

from pathlib import Path

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
from windowpack.api import create_app
from windowpack.config import StoreConfig

_FOLDER = Path(__import__("tempfile").mkdtemp(prefix="wp-fuzz-"))
_STORE = wp.open(_FOLDER / "store", config=StoreConfig(embedder="hash", chunk_tokens=64))
_APP = create_app(settings_for(_FOLDER, max_request_bytes=1_000_000), store=_STORE)
_STORE.collection("docs").add([wp.Document(id="seals", text=SEALS)])
schema = schemathesis.openapi.from_asgi("/openapi.json", _APP)


@pytest.fixture(scope="module", autouse=True)
def _close_store() -> object:
    yield
    _APP.state.api.close_workers()
    _STORE.close()


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_no_input_is_a_server_error(case: schemathesis.Case) -> None:
    case.call_and_validate(
        checks=[
            not_a_server_error,
            response_schema_conformance,
            status_code_conformance,
            content_type_conformance,
        ]
    )
