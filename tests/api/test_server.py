"""End to end: `windowpack serve` as a real uvicorn process on a loopback port, over HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from api_helpers import FERRY, SEALS

REPO_ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_until_up(url: str, process: subprocess.Popen[str]) -> None:
    """Until the server answers /healthz (seconds; the bound only catches a hang); fails if
    the process died."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
    raise AssertionError(f"{url} did not answer within 180 s")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`windowpack serve` on a free loopback port over an empty hash-embedder store."""
    port = _free_port()
    command = [
        sys.executable, "-c", "from windowpack.cli import main; main()", "serve",
        "--store", str(tmp_path / "store"), "--port", str(port), "--embedder", "hash",
    ]  # fmt: skip
    env = {**os.environ, "WINDOWPACK_UPLOAD_DIR": str(tmp_path / "uploads")}
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, process)
        yield url, process
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_serve_announces_the_docs_and_answers_over_http(
    server: tuple[str, subprocess.Popen[str]],
) -> None:
    url, process = server
    assert process.stdout is not None
    announced = [process.stdout.readline() for _ in range(2)]
    assert announced[1].strip() == f"interactive docs: {url}/docs"
    assert "no API keys" in announced[0]
    with httpx.Client(base_url=url, timeout=30) as client:
        assert client.get("/docs").status_code == 200
        assert client.post("/v1/collections", json={"name": "docs"}).status_code == 201
        added = client.post(
            "/v1/collections/docs/documents",
            json={"documents": [{"id": "seals", "text": SEALS}, {"id": "ferry", "text": FERRY}]},
        )
        assert added.json()["added"] == 2
        window = client.post(
            "/v1/collections/docs/pack", json={"query": "when does the ferry leave", "budget": 250}
        ).json()
        assert 0 < window["tokens"] <= 250 and "ferry" in window["text"]
        files = {"files": ("notes.md", b"# Notes\n\nThe generator is serviced in May.")}
        assert client.post("/v1/collections/docs/files", files=files).json()["added"] == 1
        bad = client.post("/v1/collections/docs/pack", json={"query": "x", "budget": -1})
        assert bad.status_code == 422 and "body.budget" in bad.json()["error"]["message"]
        assert "windowpack_http_requests_total" in client.get("/metrics").text


def test_the_readme_curl_example_works(server: tuple[str, subprocess.Popen[str]]) -> None:
    url, _ = server
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    marked = readme.split("```bash\n# the server's curl example", 1)[1].partition("\n")[2]
    block = marked.split("```", 1)[0]
    script = block.replace("http://127.0.0.1:8000", url)
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert '"tokens"' in result.stdout and "generator" in result.stdout


def _serve_and_stop(tmp_path: Path, *flags: str) -> str:
    """Run `windowpack serve` with `flags`, make two requests, stop it: all it printed."""
    port = _free_port()
    command = [
        sys.executable, "-c", "from windowpack.cli import main; main()", "serve",
        "--store", str(tmp_path / "store"), "--port", str(port), "--embedder", "hash", *flags,
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, process)
        assert httpx.get(f"{url}/v1/collections/nope", timeout=10).status_code == 404
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=30)
    return output


def test_serve_logs_every_request_at_info(tmp_path: Path) -> None:
    output = _serve_and_stop(tmp_path)

    assert '"GET /healthz HTTP/1.1" 200' in output
    assert '"GET /v1/collections/nope HTTP/1.1" 404' in output
    assert "window inspector: http://127.0.0.1:" in output


def test_log_level_warning_silences_the_access_log(tmp_path: Path) -> None:
    output = _serve_and_stop(tmp_path, "--log-level", "warning")

    assert "GET /healthz" not in output and "interactive docs" in output


def test_a_bad_log_level_is_named(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", "from windowpack.cli import main; main()", "serve",
         "--store", str(tmp_path / "s"), "--log-level", "loud"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 2 and "log-level" in result.stderr
