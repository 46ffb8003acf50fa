"""Background ingest jobs: run an `add`/`add_files` call off the request, report its progress.

A job is one call to the facade on a worker thread. Its progress comes from the ingest
pipeline's own callback (stage, documents, chunks, tokens, embedded); files that could not be
parsed are listed per file. Writes to a store are serialised by the store's write lock, so one
worker is enough; more would only queue on that lock.

Jobs live in the memory of the process that accepted them (the last `keep` of them): a job
is a view on work this process is doing, not stored state. After a restart the documents a
finished job wrote are in the store; an unfinished job wrote nothing (ingest is atomic).
"""

from __future__ import annotations

import itertools
import logging
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Literal

from windowpack.errors import JobNotFoundError, StorageError, WindowpackError
from windowpack.types import IngestProgress, IngestReport

JobStatus = Literal["queued", "running", "succeeded", "failed"]
IngestCall = Callable[[Callable[[IngestProgress], None]], IngestReport]
"""The work of a job: a facade call that takes a progress callback."""

_LOG = logging.getLogger("windowpack.jobs")


@dataclass(frozen=True, kw_only=True)
class Job:
    """A snapshot of one ingest job.

    `progress` is the ingest pipeline's own (its `stage`: queued, chunk, summarize, embed,
    index, done). `failures` maps a file to why it was skipped; `error` says why a failed job
    failed (its `code` and `message`, as the REST API reports errors), and then nothing was
    stored.
    """

    id: str
    collection: str
    status: JobStatus = "queued"
    progress: IngestProgress = field(default_factory=lambda: _queued(0))
    failures: dict[str, str] = field(default_factory=dict)
    error: tuple[str, str] | None = None
    report: IngestReport | None = None
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    finished_at: datetime | None = None


def _reported(job_id: str, error: Exception) -> tuple[str, str]:
    """(code, message) of a failed job, in the caller's terms.

    A bad input says what was wrong with it. Anything else (a database error, whose text can
    hold the SQL with the documents' text as parameters; a storage error naming server paths)
    goes to the server log, and the job says only what failed (issue 14, D8).
    """
    if isinstance(error, WindowpackError) and not isinstance(error, StorageError):
        return error.code, error.message
    _LOG.error("ingest job %s failed", job_id, exc_info=error)
    if isinstance(error, StorageError):
        return (
            error.code,
            f"ingest job {job_id} could not use the store; the server log has details",
        )
    return "internal_error", f"ingest job {job_id} failed on the server; the server log has details"


def _queued(documents_total: int) -> IngestProgress:
    return IngestProgress(stage="queued", documents_total=documents_total)


class JobRunner:
    """Runs ingest calls on a worker thread and keeps their latest snapshot by id."""

    def __init__(
        self,
        *,
        keep: int = 1000,
        on_finish: Callable[[Job, float], None] | None = None,
    ) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="windowpack-job")
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._keep = keep
        self._lock = threading.Lock()
        self._on_finish = on_finish
        self._counter = itertools.count(1)

    def submit(
        self,
        collection: str,
        work: IngestCall,
        *,
        documents_total: int = 0,
        cleanup: Callable[[], None] | None = None,
    ) -> Job:
        """Queue `work` for `collection`; `cleanup` runs after it, whatever happened."""
        job = Job(
            id=f"job-{next(self._counter)}-{secrets.token_hex(4)}",
            collection=collection,
            progress=_queued(documents_total),
        )
        self._save(job)
        self._executor.submit(self._run, job.id, work, cleanup)
        return job

    def get(self, job_id: str) -> Job:
        """The latest snapshot of a job; `JobNotFoundError` for an unknown id."""
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            raise JobNotFoundError(job_id)
        return job

    def wait(self, timeout: float | None = None) -> None:
        """Block until every job queued so far has finished (for tests and shutdown)."""
        self._executor.submit(lambda: None).result(timeout=timeout)

    def close(self) -> None:
        """Finish the queued jobs and stop the worker."""
        self._executor.shutdown(wait=True)

    def _run(self, job_id: str, work: IngestCall, cleanup: Callable[[], None] | None) -> None:
        started = datetime.now(UTC)
        self._update(job_id, status="running")
        try:
            report = work(lambda progress: self._progress(job_id, progress))
        except Exception as error:  # a job must always end
            self._finish(job_id, started, status="failed", error=_reported(job_id, error))
        else:
            self._finish(job_id, started, report, status="succeeded")
        finally:
            if cleanup is not None:
                cleanup()

    def _progress(self, job_id: str, progress: IngestProgress) -> None:
        # A copy: the pipeline goes on updating its own object after this snapshot.
        self._update(job_id, progress=replace(progress, note=None))

    def _finish(
        self,
        job_id: str,
        started: datetime,
        report: IngestReport | None = None,
        **changes: object,
    ) -> None:
        with self._lock:
            progress = replace(self._jobs[job_id].progress, stage="done")
        if report is not None:
            progress = replace(progress, chunks=report.chunks, tokens=report.tokens)
            changes.update(report=report, failures=dict(report.skipped))
        job = self._update(job_id, progress=progress, finished_at=datetime.now(UTC), **changes)
        if self._on_finish is not None:
            self._on_finish(job, (datetime.now(UTC) - started).total_seconds())

    def _update(self, job_id: str, **changes: object) -> Job:
        with self._lock:
            job = replace(self._jobs[job_id], **changes)  # type: ignore[arg-type]
            self._jobs[job_id] = job
            return job

    def _save(self, job: Job) -> None:
        with self._lock:
            self._jobs[job.id] = job
            # Forget the oldest finished jobs; a running one is never dropped mid-way.
            finished = [key for key, old in self._jobs.items() if old.finished_at is not None]
            for key in finished[: max(0, len(self._jobs) - self._keep)]:
                del self._jobs[key]
