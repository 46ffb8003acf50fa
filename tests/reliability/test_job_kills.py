"""No accepted job is lost (issue 28): servers and workers killed with SIGKILL while they hold
queued and running jobs, on SQLite and PostgreSQL, in real processes."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pytest
from job_rounds import (
    COLLECTION,
    JobServer,
    StoreAt,
    create_collection,
    job_documents,
    job_state,
    post_job,
    server_on,
    start_worker,
    stored_texts,
    wait_for_jobs,
)
from job_rounds import (
    run_round as run_kill_round,
)

import windowpack as wp

ROUNDS = 20

pytestmark = pytest.mark.slow


def _kill_rounds(at: StoreAt, seed: int) -> None:
    expected: dict[str, str] = {}
    server = JobServer(at).start()
    try:
        create_collection(server.url)
        results = [run_kill_round(server, seed * 100 + i, expected) for i in range(ROUNDS)]
    finally:
        server.stop()
    # The kills found jobs not yet done (queued or running), and some were taken up again.
    assert sum(r.jobs - r.done_before_kill for r in results) >= ROUNDS
    assert sum(r.retried for r in results) >= 1


def test_no_job_is_lost_when_the_server_is_killed_on_sqlite(tmp_path: Path) -> None:
    _kill_rounds(StoreAt(folder=tmp_path), seed=1)


@pytest.mark.postgres
def test_no_job_is_lost_when_the_server_is_killed_on_postgresql(
    postgres_url: str, tmp_path: Path
) -> None:
    _kill_rounds(StoreAt(folder=tmp_path, url=postgres_url), seed=2)


def _running_worker(at: StoreAt, job_id: str) -> str:
    """The `worker` column of a running job, read from the database (host:pid:lease)."""
    store = wp.open(at.url or at.folder / "store", index_dir=at.folder / "indexes")
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            from windowpack.storage import JobTable

            row = JobTable(store.sessions).get(job_id)
            assert row is not None
            if row.status == "running" and row.worker is not None:
                return row.worker
            assert row.status == "queued", row.status
            time.sleep(0.02)
    finally:
        store.close()
    raise AssertionError(f"job {job_id} never started")


def _worker_killed_mid_job(at: StoreAt) -> None:
    with server_on(at, workers=0) as server:
        create_collection(server.url)
        logs = at.folder
        workers = [start_worker(at, logs / f"worker-{i}.log") for i in range(2)]
        try:
            big = job_documents("big", 40, 2000)  # long enough to be killed while running
            job_id = post_job(server.url, big, key="big")
            holder = _running_worker(at, job_id)
            pid = int(holder.split(":")[1])
            victim = next(w for w in workers if w.pid == pid)
            victim.kill()
            victim.wait()
            # The other worker finds the orphan when it next looks, and runs it to the end.
            smaller = [
                post_job(server.url, job_documents(f"n{i}", 3, 400), f"n{i}") for i in range(6)
            ]
            states = wait_for_jobs(server.url, [job_id, *smaller])
            assert all(state["status"] == "succeeded" for state in states), states
            assert states[0]["attempts"] == 2
            # Two workers never ran the same job: the small ones each ran once.
            assert all(state["attempts"] == 1 for state in states[1:])
            texts = stored_texts(server.url)
            assert {doc["id"]: doc["text"] for doc in big}.items() <= texts.items()
            assert len(texts) == 40 + 6 * 3
        finally:
            for worker in workers:
                worker.terminate()
                worker.wait(timeout=300)


def test_a_worker_killed_mid_job_leaves_it_to_another_on_sqlite(tmp_path: Path) -> None:
    _worker_killed_mid_job(StoreAt(folder=tmp_path))


@pytest.mark.postgres
def test_a_worker_killed_mid_job_leaves_it_to_another_on_postgresql(
    postgres_url: str, tmp_path: Path
) -> None:
    _worker_killed_mid_job(StoreAt(folder=tmp_path, url=postgres_url))


def test_the_clients_wait_survives_a_server_restart(tmp_path: Path) -> None:
    at = StoreAt(folder=tmp_path)
    server = JobServer(at, workers=0).start()  # nobody runs the job until the restart
    try:
        create_collection(server.url)
        client = wp.Client(server.url)
        documents = [wp.Document(id=d["id"], text=d["text"]) for d in job_documents("w", 3, 500)]
        job = client.collection(COLLECTION).add(documents, background=True)
        assert isinstance(job, wp.client.RemoteJob)
        outcome: dict[str, object] = {}
        waiting = threading.Thread(target=lambda: outcome.update(report=job.wait(timeout=300)))
        waiting.start()
        server.kill()
        time.sleep(0.5)  # the client's polls fail meanwhile: the server is down
        server.workers = 1
        server.start()
        waiting.join(timeout=300)
        report = outcome.get("report")
        assert isinstance(report, wp.IngestReport) and report.added == 3, outcome
        assert job_state(server.url, job.id)["attempts"] == 1
        got = httpx.get(f"{server.url}/v1/collections/{COLLECTION}/documents/w/doc-0", timeout=30)
        assert got.json()["text"] == documents[0].text
    finally:
        server.stop()
