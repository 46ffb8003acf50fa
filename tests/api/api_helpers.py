"""Helpers for the API tests (imported by name: the test folders are not packages)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient

import windowpack as wp
from live_uvicorn import served
from windowpack.api import ApiSettings

LOCAL = "http://127.0.0.1"
"""Where test clients send requests: a keyless server answers only loopback Host names."""

SEALS = "Harbour seals rest on sandbanks at low tide. " * 12
OWLS = "Barn owls hunt voles in the meadow at night. " * 12
FERRY = "The ferry to the island leaves at seven and returns at noon. " * 12


def settings_for(tmp_path: Path, **overrides: object) -> ApiSettings:
    """Settings for tests: uploads under the test's folder, small background threshold."""
    values: dict[str, object] = {"upload_dir": str(tmp_path / "uploads"), **overrides}
    return ApiSettings(**values)  # type: ignore[arg-type]


def local_client(app: FastAPI) -> TestClient:
    """A TestClient addressing the app as 127.0.0.1 (its default Host, `testserver`, is not
    loopback, and a keyless server refuses it)."""
    return TestClient(app, base_url=LOCAL)


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def wait_for_job(client: TestClient, job_id: str) -> dict[str, object]:
    """`GET /v1/jobs/{job_id}` once the job has ended (failing the test after 300 s: a bound
    that only catches a hang, never a slow machine)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        job = client.get(f"/v1/jobs/{job_id}").json()
        if job["status"] in {"succeeded", "failed"}:
            return dict(job)
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not end")


def error_code(response: object) -> str:
    """The error code of a response, checking it has exactly the one error shape."""
    body = response.json()  # type: ignore[attr-defined]
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    return str(body["error"]["code"])


@contextmanager
def live_server(store: wp.Store, tmp_path: Path, **overrides: object) -> Iterator[str]:
    """The app over `store` served by a real uvicorn server on a free loopback port: its URL.

    In this process (on a thread), so a test can fill the store directly and check what the
    server answers over HTTP. Stops when the block ends.
    """
    from windowpack.api import create_app

    def app_on(port: int) -> FastAPI:
        return create_app(settings_for(tmp_path, port=port, **overrides), store=store)

    with served(app_on) as port:
        yield f"http://127.0.0.1:{port}"
