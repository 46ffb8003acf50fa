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
from dataclasses import replace
from datetime import UTC, datetime

from windowpack.errors import JobNotFoundError, StorageError, WindowpackError
from windowpack.types import IngestProgress, IngestReport, JobError, JobState

IngestCall = Callable[[Callable[[IngestProgress], None]], IngestReport]
"""The work of a job: a facade call that takes a progress callback."""

_LOG = logging.getLogger("windowpack.jobs")


def _reported(job_id: str, error: Exception) -> JobError:
    """Why a job failed, in the caller's terms.

    A bad input says what was wrong with it. Anything else goes to the server log, and the job
    says only what failed: anyone who may poll the job reads its error, and a database error's
    text can hold the SQL with the documents' text as parameters, a storage error server paths.
    """
    if isinstance(error, WindowpackError) and not isinstance(error, StorageError):
        return JobError(code=error.code, message=error.message)
    _LOG.error("ingest job %s failed", job_id, exc_info=error)
    if isinstance(error, StorageError):
        message = f"ingest job {job_id} could not use the store; the server log has details"
        return JobError(code=error.code, message=message)
    message = f"ingest job {job_id} failed on the server; the server log has details"
    return JobError(code="internal_error", message=message)


def _queued(job_id: str, collection: str, documents_total: int) -> JobState:
    return JobState(
        id=job_id,
        collection=collection,
        status="queued",
        stage="queued",
        documents_total=documents_total,
        documents=0,
        chunks=0,
        tokens=0,
        embedded=0,
        failures={},
        error=None,
        report=None,
        created_at=datetime.now(UTC),
        finished_at=None,
    )


def _with_progress(job: JobState, progress: IngestProgress) -> JobState:
    return replace(
        job,
        stage=progress.stage,
        documents_total=progress.documents_total,
        documents=progress.documents,
        chunks=progress.chunks,
        tokens=progress.tokens,
        embedded=progress.embedded,
    )


class JobRunner:
    """Runs ingest calls on a worker thread and keeps their latest snapshot by id."""

    def __init__(
        self,
        *,
        keep: int = 1000,
        on_finish: Callable[[JobState, float], None] | None = None,
    ) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="windowpack-job")
        self._jobs: OrderedDict[str, JobState] = OrderedDict()
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
    ) -> JobState:
        """Queue `work` for `collection`; `cleanup` runs after it, whatever happened."""
        job_id = f"job-{next(self._counter)}-{secrets.token_hex(4)}"
        job = _queued(job_id, collection, documents_total)
        self._save(job)
        self._executor.submit(self._run, job.id, work, cleanup)
        return job

    def get(self, job_id: str) -> JobState:
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
        self._update(job_id, lambda job: replace(job, status="running"))
        try:
            report = work(lambda progress: self._progress(job_id, progress))
        except Exception as error:  # a job must always end
            failed = _reported(job_id, error)
            self._finish(job_id, started, lambda job: replace(job, status="failed", error=failed))
        else:
            self._finish(job_id, started, lambda job: _succeeded(job, report))
        finally:
            if cleanup is not None:
                cleanup()

    def _progress(self, job_id: str, progress: IngestProgress) -> None:
        # The counts are copied: the pipeline goes on updating its own object.
        self._update(job_id, lambda job: _with_progress(job, progress))

    def _finish(
        self, job_id: str, started: datetime, outcome: Callable[[JobState], JobState]
    ) -> None:
        finished_at = datetime.now(UTC)
        job = self._update(
            job_id, lambda job: replace(outcome(job), stage="done", finished_at=finished_at)
        )
        if self._on_finish is not None:
            self._on_finish(job, (datetime.now(UTC) - started).total_seconds())

    def _update(self, job_id: str, change: Callable[[JobState], JobState]) -> JobState:
        with self._lock:
            job = change(self._jobs[job_id])
            self._jobs[job_id] = job
            return job

    def _save(self, job: JobState) -> None:
        with self._lock:
            self._jobs[job.id] = job
            # Forget the oldest finished jobs; a running one is never dropped mid-way.
            finished = [key for key, old in self._jobs.items() if old.finished_at is not None]
            for key in finished[: max(0, len(self._jobs) - self._keep)]:
                del self._jobs[key]


def _succeeded(job: JobState, report: IngestReport) -> JobState:
    return replace(
        job,
        status="succeeded",
        chunks=report.chunks,
        tokens=report.tokens,
        report=report,
        failures=dict(report.skipped),
    )
