"""The store's ingest jobs as callers see them: enqueue, read, wait for one to end.

A job is a row of the job table from the moment it is accepted, in the database the
documents are in: every server and worker sharing that database sees it, and a restart loses
nothing. Workers (`jobs.Worker`) take the queued ones.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from windowpack.errors import ConflictError, JobNotFoundError
from windowpack.jobs.inputs import JobInput, accepted_for
from windowpack.service import Collection, Store
from windowpack.storage import JobRow, JobTable, new_job_row
from windowpack.types import IngestReport, JobError, JobState

# How long a waiter sleeps between looks at a job a worker in another process runs; a worker
# in this process wakes it at once.
_WAIT_POLL_SECONDS = 0.2


class JobQueue:
    """Enqueue ingest jobs into a store's job table and read them back."""

    def __init__(self, store: Store, *, keep: int = 1000) -> None:
        self.store = store
        self.table = JobTable(store.sessions)
        self.keep = keep
        # Set when a job is queued here, so a worker in this process starts it at once.
        self.queued = threading.Event()
        self._ended = threading.Condition()

    def enqueue(
        self,
        collection: Collection,
        job_input: JobInput,
        *,
        idempotency_key: str | None = None,
        request_hash: str | None = None,
    ) -> tuple[JobState, bool]:
        """Queue `job_input` for `collection`: (the job, True); or, when `idempotency_key` was
        already used in that collection for the same request, (that job, False).

        The same key with another request (`request_hash` differs) is a `ConflictError`.
        """
        manifest = {**job_input.manifest(), **accepted_for(self.store, collection)}
        row = new_job_row(
            job_id=f"job-{secrets.token_hex(10)}",
            collection=collection.name,
            kind=job_input.kind,
            manifest=manifest,
            documents_total=job_input.count,
            idempotency_key=idempotency_key,
            request_hash=request_hash,
        )
        stored, created = self.table.insert(row)
        if not created and stored.request_hash != request_hash:
            raise ConflictError(
                f"Idempotency-Key {idempotency_key!r} was used for another request to "
                f"collection {collection.name!r} (job {stored.id}); use a new key"
            )
        if created:
            self.queued.set()
        return state_of(stored), created

    def get(self, job_id: str) -> JobState:
        """The job's state now; `JobNotFoundError` for an id the store does not hold."""
        row = self.table.get(job_id)
        if row is None:
            raise JobNotFoundError(job_id)
        return state_of(row)

    def queued_count(self) -> int:
        """Jobs accepted and not yet taken by a worker (by every server on the store)."""
        return self.table.queued_count()

    def wait(
        self,
        job_id: str,
        timeout: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> JobState:
        """Block until the job has ended (either way) and return it; `TimeoutError` past
        `timeout` seconds on `clock`."""
        deadline = None if timeout is None else clock() + timeout
        while True:
            job = self.get(job_id)
            if job.done:
                return job
            if deadline is not None and clock() >= deadline:
                raise TimeoutError(f"job {job_id} has not ended after {timeout} s")
            with self._ended:
                self._ended.wait(_WAIT_POLL_SECONDS)

    def ended(self) -> None:
        """A worker in this process finished a job: wake the waiters."""
        with self._ended:
            self._ended.notify_all()


def request_hash(*parts: Any) -> str:
    """A stable hash of a request's content, to tell a retry from another request."""
    digest = hashlib.sha256()
    for part in parts:
        if isinstance(part, bytes):
            digest.update(part)
        else:
            digest.update(json.dumps(part, sort_keys=True, default=str).encode())
        digest.update(b"\0")
    return digest.hexdigest()


def state_of(row: JobRow) -> JobState:
    """The `JobState` a job row describes."""
    progress = row.progress or {}
    error = None
    if row.error_code is not None:
        error = JobError(code=row.error_code, message=row.error_message or "")
    return JobState(
        id=row.id,
        collection=row.collection,
        status=row.status,  # type: ignore[arg-type]
        stage=row.stage,
        documents_total=int(progress.get("documents_total", 0)),
        documents=int(progress.get("documents", 0)),
        chunks=int(progress.get("chunks", 0)),
        tokens=int(progress.get("tokens", 0)),
        embedded=int(progress.get("embedded", 0)),
        failures=dict(row.failures or {}),
        error=error,
        report=IngestReport(**row.report) if row.report is not None else None,
        created_at=_utc(row.created_at),
        finished_at=_utc(row.finished_at) if row.finished_at is not None else None,
        started_at=_utc(row.started_at) if row.started_at is not None else None,
        attempts=row.attempts,
    )


def report_json(report: IngestReport) -> dict[str, Any]:
    return asdict(report)


def _utc(moment: datetime) -> datetime:
    # SQLite gives back naive datetimes; every one stored is UTC.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
