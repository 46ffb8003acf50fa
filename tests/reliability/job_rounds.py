"""Servers and workers as real processes, killed with SIGKILL while they hold accepted jobs.

`JobServer` starts `windowpack serve` (or `windowpack worker`) as a child process over one
store; `run_round` accepts a few background jobs, kills the server at a seeded moment (jobs
then queued, running or done), starts a new one, and checks that every accepted job ends,
that a succeeded job's documents are all there whole, and that nothing else is.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import sqlalchemy

COLLECTION = "docs"
_PARAGRAPH = "Tide tables for the harbour list {w} high waters and {w} low waters each day. "


@dataclass(frozen=True)
class StoreAt:
    """A store folder (SQLite) or a PostgreSQL URL with its index folder."""

    folder: Path
    url: str | None = None

    def flags(self) -> list[str]:
        if self.url is None:
            return ["--store", str(self.folder / "store")]
        return ["--store", self.url, "--index-dir", str(self.folder / "indexes")]

    def job_statuses(self, job_ids: Iterable[str]) -> dict[str, str]:
        """Each job's status as its database row holds it (no server needed: read after a
        kill, it is where the killed server left each job)."""
        url = self.url or f"sqlite:///{self.folder / 'store' / 'windowpack.db'}"
        engine = sqlalchemy.create_engine(url)
        try:
            with engine.connect() as connection:
                rows = connection.execute(
                    sqlalchemy.text("SELECT id, status FROM jobs WHERE id IN :ids").bindparams(
                        sqlalchemy.bindparam("ids", expanding=True)
                    ),
                    {"ids": list(job_ids)},
                )
                return {str(job_id): str(status) for job_id, status in rows}
        finally:
            engine.dispose()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class JobServer:
    """`windowpack serve` over `at` on `port`, started and killed at will."""

    at: StoreAt
    port: int = field(default_factory=free_port)
    workers: int = 1
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> JobServer:
        command = [
            *_cli(), "serve", *self.at.flags(), "--port", str(self.port),
            "--embedder", "hash", "--no-warm-up", "--log-level", "warning",
            "--workers", str(self.workers),
        ]  # fmt: skip
        self.process = _spawn(command, self.at.folder / f"serve-{self.port}.log")
        wait_until_up(self.url, self.process)
        return self

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as when a machine or the OOM killer stops it."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=300)
            except subprocess.TimeoutExpired:
                self.kill()


def start_worker(at: StoreAt, log: Path) -> subprocess.Popen[bytes]:
    """A `windowpack worker` process over `at` (it looks at the queue every 0.1 s)."""
    command = [*_cli(), "worker", *at.flags(), "--embedder", "hash", "--poll-seconds", "0.1"]
    return _spawn(command, log)


def _cli() -> list[str]:
    return [sys.executable, "-c", "from windowpack.cli import main; main()"]


def _spawn(command: list[str], log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with log.open("ab") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)


def wait_until_up(url: str, process: subprocess.Popen[bytes]) -> None:
    """Until the server answers /healthz (two minutes at most); fails if the process died."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the server exited with {process.returncode}"
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{url} did not come up")


@contextmanager
def server_on(at: StoreAt, *, workers: int = 1) -> Iterator[JobServer]:
    server = JobServer(at, workers=workers).start()
    try:
        yield server
    finally:
        server.stop()


def job_documents(tag: str, count: int, words: int) -> list[dict[str, str]]:
    """`count` documents of about `words` words each, all of their text new (tagged)."""
    return [
        {"id": f"{tag}/doc-{i}", "text": _PARAGRAPH.format(w=f"{tag}-{i}") * (words // 14)}
        for i in range(count)
    ]


def create_collection(url: str) -> None:
    response = httpx.post(f"{url}/v1/collections", json={"name": COLLECTION}, timeout=300)
    assert response.status_code in (201, 409), response.text


def post_job(url: str, documents: list[dict[str, str]], key: str) -> str:
    """Accept `documents` as a background job; its id."""
    response = httpx.post(
        f"{url}/v1/collections/{COLLECTION}/documents",
        params={"background": "true"},
        json={"documents": documents},
        headers={"Idempotency-Key": key},
        timeout=60,
    )
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


def job_state(url: str, job_id: str) -> dict[str, object]:
    response = httpx.get(f"{url}/v1/jobs/{job_id}", timeout=30)
    assert response.status_code == 200, (job_id, response.text)
    body: dict[str, object] = response.json()
    return body


def wait_for_jobs(url: str, job_ids: list[str], *, seconds: float = 300) -> list[dict[str, object]]:
    """Each job's state once every one has ended (fails past `seconds`)."""
    deadline = time.monotonic() + seconds
    pending = set(job_ids)
    while pending and time.monotonic() < deadline:
        pending = {j for j in pending if job_state(url, j)["status"] not in ("succeeded", "failed")}
        time.sleep(0.1)
    assert not pending, f"jobs still not ended after {seconds} s: {sorted(pending)}"
    return [job_state(url, job_id) for job_id in job_ids]


def stored_ids(url: str) -> set[str]:
    """The ids of every stored document, each checked to have its chunks."""
    listing = httpx.get(
        f"{url}/v1/collections/{COLLECTION}/documents", params={"limit": 1000}, timeout=60
    )
    assert listing.status_code == 200, listing.text
    items = listing.json()["items"]
    assert all(item["chunks"] >= 1 for item in items), items
    return {str(item["id"]) for item in items}


def stored_texts(url: str, ids: Iterable[str] | None = None) -> dict[str, str]:
    """The stored text of each of `ids` (default: every document), read over REST."""
    texts = {}
    for document_id in stored_ids(url) if ids is None else ids:
        got = httpx.get(f"{url}/v1/collections/{COLLECTION}/documents/{document_id}", timeout=300)
        assert got.status_code == 200, got.text
        texts[document_id] = got.json()["text"]
    return texts


@dataclass(frozen=True)
class RoundResult:
    jobs: int
    done_before_kill: int
    retried: int


def run_round(server: JobServer, seed: int, expected: dict[str, str]) -> RoundResult:
    """Accept 4 jobs (a seeded pause before the last), SIGKILL the server right after the
    last one's 202, restart it, check every job.

    `expected` (updated) holds the text of every document a succeeded job stored so far.
    """
    rng = random.Random(seed)
    sent: dict[str, list[dict[str, str]]] = {}
    for n in range(4):
        documents = job_documents(f"s{seed}-j{n}", rng.randint(2, 6), rng.randint(300, 1500))
        sent[post_job(server.url, documents, key=f"round-{seed}-{n}")] = documents
        if n == 2:
            time.sleep(rng.uniform(0.0, 1.2))  # the first jobs queued, running or done
    # The server is killed right after the last job's 202, before any other request: that
    # job is accepted and, but on the fastest machine, not yet done. What each job was at
    # the kill is read from the database afterwards, not asked of the server before it (a
    # quick ingest could end while the questions were asked).
    server.kill()
    before = list(server.at.job_statuses(sent).values())
    server.start()
    ended = wait_for_jobs(server.url, list(sent))
    this_round = {}
    for state in ended:
        # One kill is fewer than a job's attempts: every job must have gone in.
        assert state["status"] == "succeeded", state
        this_round.update({doc["id"]: doc["text"] for doc in sent[str(state["id"])]})
    expected.update(this_round)
    # Every document of every job, whole, and nothing else (no half-added or doubled job).
    assert stored_ids(server.url) == set(expected)
    assert stored_texts(server.url, this_round) == this_round
    return RoundResult(
        jobs=len(sent),
        done_before_kill=sum(status == "succeeded" for status in before),
        retried=sum(int(str(state["attempts"])) > 1 for state in ended),
    )
