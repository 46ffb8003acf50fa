"""Writes over REST as durable jobs: Idempotency-Key, jobs seen by every server on the store,
a server without workers, and the client's retry of a write whose answer was lost."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pytest
from api_helpers import OWLS, SEALS, error_code, live_server, local_client, settings_for
from fastapi.testclient import TestClient

import windowpack as wp
from windowpack.api import create_app
from windowpack.client import _calls
from windowpack.jobs import JobQueue, Worker

DOCS = "/v1/collections/docs/documents"


@pytest.fixture
def docs_client(hash_store: wp.Store, tmp_path: Path) -> TestClient:
    client = local_client(create_app(settings_for(tmp_path), store=hash_store))
    assert client.post("/v1/collections", json={"name": "docs"}).status_code == 201
    return client


def _version(client: TestClient) -> int:
    return int(client.get("/v1/collections/docs").json()["index_version"])


def test_a_retried_write_with_its_key_answers_the_first_job(docs_client: TestClient) -> None:
    body = {"documents": [{"id": "seals", "text": SEALS}]}
    key = {"Idempotency-Key": "write-1"}
    first = docs_client.post(DOCS, json=body, headers=key)
    assert first.status_code == 200, first.text
    version = _version(docs_client)
    again = docs_client.post(DOCS, json=body, headers=key)
    assert again.status_code == 200 and again.json() == first.json()
    assert _version(docs_client) == version  # nothing ingested the second time

    queued = docs_client.post(
        DOCS, params={"background": "true"}, json={"documents": [{"text": OWLS}]},
        headers={"Idempotency-Key": "write-2"},
    )  # fmt: skip
    repeated = docs_client.post(
        DOCS, params={"background": "true"}, json={"documents": [{"text": OWLS}]},
        headers={"Idempotency-Key": "write-2"},
    )  # fmt: skip
    assert queued.status_code == repeated.status_code == 202
    assert repeated.json()["id"] == queued.json()["id"]
    assert repeated.headers["Location"] == f"/v1/jobs/{queued.json()['id']}"


def test_the_same_key_with_another_body_is_a_conflict(docs_client: TestClient) -> None:
    key = {"Idempotency-Key": "write-1"}
    assert docs_client.post(DOCS, json={"documents": [{"text": SEALS}]}, headers=key).is_success
    other = docs_client.post(DOCS, json={"documents": [{"text": OWLS}]}, headers=key)
    assert other.status_code == 409 and error_code(other) == "conflict"
    assert "Idempotency-Key 'write-1'" in other.json()["error"]["message"]
    assert [d["id"] for d in docs_client.get(DOCS).json()["items"]] != []
    assert len(docs_client.get(DOCS).json()["items"]) == 1


@pytest.mark.parametrize("bad", ["", "x" * 256, "with space", "naïve"])
def test_a_malformed_key_is_refused_naming_the_header(docs_client: TestClient, bad: str) -> None:
    response = docs_client.post(
        DOCS,
        json={"documents": [{"text": SEALS}]},
        headers={"Idempotency-Key": bad.encode("utf-8")},
    )
    assert response.status_code == 422 and "Idempotency-Key" in response.text
    assert docs_client.get(DOCS).json()["items"] == []


def test_a_retried_upload_keeps_no_second_copy_of_its_files(
    docs_client: TestClient, tmp_path: Path
) -> None:
    files = [("files", ("owls.md", f"# Owls\n\n{OWLS}".encode()))]
    key = {"Idempotency-Key": "upload-1"}
    first = docs_client.post("/v1/collections/docs/files", files=files, headers=key)
    again = docs_client.post("/v1/collections/docs/files", files=files, headers=key)
    assert first.status_code == again.status_code == 200 and first.json() == again.json()
    assert list((tmp_path / "uploads").iterdir()) == []  # both folders gone


def test_a_job_is_seen_and_run_by_another_server_on_the_store(
    hash_store: wp.Store, tmp_path: Path
) -> None:
    # The server that accepts the job has no worker; a second app over the same store (another
    # process in production) answers for the job and runs it.
    accepting = local_client(create_app(settings_for(tmp_path, workers=0), store=hash_store))
    assert accepting.post("/v1/collections", json={"name": "docs"}).status_code == 201
    accepted = accepting.post(
        DOCS, params={"background": "true"}, json={"documents": [{"id": "s", "text": SEALS}]}
    )
    assert accepted.status_code == 202 and accepted.json()["attempts"] == 0
    job_id = accepted.json()["id"]
    assert "windowpack_jobs_queued 1.0" in accepting.get("/metrics").text
    with wp.open(tmp_path / "store", config=hash_store.config) as other_store:
        other_app = create_app(settings_for(tmp_path), store=other_store)
        with local_client(other_app) as other:  # its lifespan starts its worker
            JobQueue(other_store).wait(job_id, timeout=300)
            state = other.get(f"/v1/jobs/{job_id}").json()
    assert state["status"] == "succeeded" and state["attempts"] == 1, state
    assert state["started_at"] is not None and state["report"]["added"] == 1
    assert accepting.get(f"/v1/jobs/{job_id}").json()["status"] == "succeeded"
    assert "windowpack_jobs_queued 0.0" in accepting.get("/metrics").text
    assert accepting.get(f"{DOCS}/s").json()["text"] == SEALS


class _LosesFirstAnswer(httpx.BaseTransport):
    """Delivers every request, but loses the answer to the first write: what a client sees
    when the connection drops after the server got the request."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.keys: list[str | None] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method == "POST" and request.url.path.endswith("/documents"):
            self.keys.append(request.headers.get("Idempotency-Key"))
            if len(self.keys) == 1:
                response.read()
                raise httpx.ReadError("connection reset", request=request)
        return response


def test_the_client_sends_a_write_again_with_its_key_when_the_answer_is_lost(
    hash_store: wp.Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_calls, "WRITE_RETRY_SECONDS", (0.0, 0.0))
    transport = _LosesFirstAnswer(httpx.HTTPTransport())
    with live_server(hash_store, tmp_path) as url, wp.Client(url, transport=transport) as client:
        client.create_collection("docs")
        report = client.collection("docs").add([wp.Document(id="seals", text=SEALS)])
        assert report.added == 1
        assert len(transport.keys) == 2 and transport.keys[0] == transport.keys[1]
        assert transport.keys[0] is not None and transport.keys[0].startswith("wp-")
        # The next write gets a key of its own.
        client.collection("docs").add([wp.Document(id="owls", text=OWLS)])
        assert transport.keys[2] != transport.keys[0]
    assert hash_store.collection("docs").stats().index_version == 2  # the lost one went in once


def test_writes_waiting_for_their_jobs_leave_the_threads_to_readers(
    hash_store: wp.Store, tmp_path: Path
) -> None:
    hash_store.collection("docs").add([wp.Document(id="seals", text=SEALS)])
    queue = JobQueue(hash_store)
    writers = 60  # more than the 40 threads sync routes share
    with live_server(hash_store, tmp_path, workers=0) as url:  # nobody runs the jobs yet
        answers: list[int] = []

        def write(n: int) -> None:
            with httpx.Client(base_url=url, timeout=300) as http:
                body = {"documents": [{"id": f"w{n}", "text": f"{n} {OWLS}"}]}
                answers.append(http.post(DOCS, json=body).status_code)

        threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
        for thread in threads:
            thread.start()
        while queue.table.queued_count() < writers:  # every write accepted and waiting
            time.sleep(0.05)
        search = httpx.post(
            f"{url}/v1/collections/docs/search", json={"query": "seals", "k": 1}, timeout=60
        )
        assert search.status_code == 200 and search.json()[0]["document_id"] == "seals"
        worker = Worker(queue).start()
        try:
            for thread in threads:
                thread.join(timeout=300)
        finally:
            worker.close()
    assert answers == [200] * writers
    assert len(hash_store.collection("docs")) == writers + 1
