"""A worker: takes queued jobs from the store's job table and runs them, one at a time.

`windowpack serve` runs one in its process by default; `windowpack worker` runs one outside
it, on this or any machine sharing the database (so ingest leaves the serving process's CPU to
readers). A worker holds a lease for its life (`jobs.liveness`); at start and whenever it is
idle it looks for jobs claimed by a worker whose lease is gone (killed, crashed, its machine
lost) and queues them again, or marks them failed after `max_attempts` runs. Ingest is an
upsert by id in one transaction, so a job run again after an interruption changes nothing
twice and never leaves half of itself stored.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from windowpack.errors import (
    InvalidInputError,
    JobInterruptedError,
    StorageError,
    WindowpackError,
)
from windowpack.ingest import ProgressLog
from windowpack.jobs.inputs import input_of, run_checked
from windowpack.jobs.liveness import WorkerLease
from windowpack.jobs.queue import JobQueue, report_json, state_of
from windowpack.storage import JOBS_CHANNEL, JobOutcome, JobRow, JobTable, VersionListener
from windowpack.types import IngestProgress, IngestReport, JobState

_LOG = logging.getLogger("windowpack.jobs")

OnFinish = Callable[[JobState, float], None]


@dataclass(frozen=True, kw_only=True)
class WorkerSettings:
    """How a worker runs: `max_attempts` runs of a job before an interruption fails it,
    seconds between looks at the queue when nothing woke it, seconds between progress writes,
    and the nice value added to its job thread (higher leaves more CPU to the requests of a
    server on the same machine, and makes writes under load slower)."""

    max_attempts: int = 3
    poll_seconds: float = 1.0
    progress_seconds: float = 0.5
    niceness: int = 0


class Worker:
    """Runs the queued jobs of `queue`'s store until stopped."""

    def __init__(
        self,
        queue: JobQueue,
        settings: WorkerSettings | None = None,
        *,
        on_finish: OnFinish | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.queue = queue
        self.settings = settings or WorkerSettings()
        engine: Engine = queue.store.engine
        self._lease = WorkerLease(engine, _lease_folder(engine))
        self.name = f"{socket.gethostname()}:{os.getpid()}:{self._lease.key}"
        self._on_finish = on_finish
        self._clock = clock
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._started = False
        self._start_lock = threading.Lock()

    @property
    def table(self) -> JobTable:
        return self.queue.table

    def start(self) -> Worker:
        """Take the lease, recover orphaned jobs and run jobs on a background thread
        (again: nothing)."""
        with self._start_lock:
            if self._started:
                return self
            self._started = True
            self._lease.acquire()
            self.recover()
            self._spawn(self._loop, "windowpack-worker")
            if self._lease.on_postgres:
                self._spawn(self._listen, "windowpack-worker-listen")
        return self

    def run(self, stop: threading.Event | None = None) -> None:
        """Run jobs in this thread until `stop` is set (for `windowpack worker`)."""
        if stop is not None:

            def stop_when_asked() -> None:
                stop.wait()
                self._stop.set()

            self._spawn(stop_when_asked, "windowpack-worker-stop")
        self.start()
        self._stop.wait()
        self.close()

    def close(self) -> None:
        """Stop taking jobs, let the one running finish, release the lease."""
        self._stop.set()
        self.queue.queued.set()
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join()
        self._threads.clear()
        self._lease.release()

    def run_one(self) -> bool:
        """Claim and run the oldest queued job in this thread; False when there was none.
        The lease is taken first if `start` has not taken it."""
        self._lease.acquire()
        row = self.table.claim(self.name, self._lease.key)
        if row is None:
            return False
        self._run(row)
        return True

    def recover(self) -> int:
        """Queue again (or fail, after `max_attempts`) every job whose worker is gone; how
        many were found."""
        found = 0
        for row in self.table.running():
            if row.worker == self.name or self._lease.is_alive(row.worker_lock):
                continue
            found += 1
            assert row.worker is not None
            if row.attempts < self.settings.max_attempts:
                if self.table.requeue(row.id, row.worker):
                    _LOG.warning("job %s: its worker %s stopped; queued again", row.id, row.worker)
                    self.queue.queued.set()
            else:
                self._give_up(row)
        return found

    def _give_up(self, row: JobRow) -> None:
        assert row.worker is not None
        error = JobInterruptedError(
            f"ingest job {row.id} was interrupted {row.attempts} times (the process running it "
            "stopped each time); none of its documents were stored, so sending it again is safe"
        )
        outcome = JobOutcome(
            status="failed",
            progress=row.progress or {},
            error_code=error.code,
            error_message=error.message,
        )
        if self.table.finish(row.id, row.worker, outcome):
            input_of(row.kind, row.manifest).cleanup()
            if row.manifest.get("collection") is None:
                # The job was to create its collection (a first write): a killed run may have
                # made the row, and a failed first write leaves no empty collection behind.
                self.queue.store.delete_collection(row.collection, only_if_unwritten=True)
            self.queue.ended()

    def _loop(self) -> None:
        _lower_priority(self.settings.niceness)
        while not self._stop.is_set():
            try:
                if self.run_one():
                    continue
                self.recover()
            except Exception as error:  # the database went away: wait and look again
                _LOG.error("the job worker could not read the job table", exc_info=error)
            self.queue.queued.wait(self.settings.poll_seconds)
            self.queue.queued.clear()

    def _listen(self) -> None:
        listener = VersionListener(self.queue.store.engine, JOBS_CHANNEL)
        try:
            while not self._stop.is_set():
                if listener.wait(self.settings.poll_seconds, self._stop):
                    self.queue.queued.set()
        finally:
            listener.close()

    def _spawn(self, target: Callable[[], Any], name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _run(self, row: JobRow) -> None:
        started = self._clock()
        job_input = input_of(row.kind, row.manifest)
        progress = _ProgressWriter(self.table, row, self.name, self.settings.progress_seconds)
        try:
            report = run_checked(
                job_input, self.queue.store, row.collection, row.manifest, progress.update
            )
        except Exception as error:  # a job always ends, with the reason in the user's terms
            progress.stop()
            outcome = _failed(row.id, error, progress.counts())
        else:
            progress.stop()
            outcome = _succeeded(report, progress.counts())
        if not self.table.finish(row.id, self.name, outcome):
            _LOG.warning("job %s was taken from worker %s before it ended", row.id, self.name)
            return
        if outcome.status == "failed" and row.manifest.get("collection") is None:
            # A failed first write leaves no collection, whichever way it failed.
            self.queue.store.delete_collection(row.collection, only_if_unwritten=True)
        job_input.cleanup()
        self.queue.ended()
        self.table.prune(self.queue.keep)
        if self._on_finish is not None:
            ended = self.table.get(row.id)
            if ended is not None:
                self._on_finish(state_of(ended), self._clock() - started)


class _ProgressWriter:
    """Keeps a job's latest progress and writes it every `seconds` from its own thread, so
    the ingest never waits on the job table (nor on a database lock the ingest holds)."""

    def __init__(self, table: JobTable, row: JobRow, worker: str, seconds: float) -> None:
        self._table, self._job_id, self._worker = table, row.id, worker
        self._latest: dict[str, Any] = {"stage": "starting", **(row.progress or {})}
        self._written: dict[str, Any] = dict(self._latest)
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._seconds = seconds
        # The same progress in the server's or worker's log, a line at a steady interval.
        self._log = ProgressLog(_LOG.info, label=f"job {row.id}")
        self._thread = threading.Thread(target=self._write_every, daemon=True)
        self._thread.start()

    def update(self, progress: IngestProgress) -> None:
        # The counts are copied: the pipeline goes on updating its own object.
        with self._lock:
            self._log.report(progress)
            self._latest = {
                "stage": progress.stage,
                "documents_total": progress.documents_total,
                "documents": progress.documents,
                "chunks": progress.chunks,
                "tokens": progress.tokens,
                "embedded": progress.embedded,
            }

    def counts(self) -> dict[str, int]:
        with self._lock:
            return {key: value for key, value in self._latest.items() if key != "stage"}

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()
        with self._lock:
            self._log.close()

    def _write_every(self) -> None:
        while not self._stopped.wait(self._seconds):
            with self._lock:
                latest = dict(self._latest)
            if latest == self._written:
                continue
            try:
                stage = str(latest.pop("stage"))
                self._table.save_progress(self._job_id, self._worker, stage, latest)
                self._written = {"stage": stage, **latest}
            except Exception as error:  # progress is a view; the outcome is what must land
                _LOG.warning("job %s: progress not saved: %s", self._job_id, error)


def _succeeded(report: IngestReport, counts: dict[str, int]) -> JobOutcome:
    """The outcome of an ingest that ran: succeeded, unless it was given files and not one
    could be read (then `failed`: `succeeded` with nothing added hid that from a client that
    looks at the status alone; each file's reason is in `failures` either way)."""
    documents = report.added + report.replaced + report.unchanged
    if report.skipped and not documents:
        error = InvalidInputError(
            f"none of the {len(report.skipped):,} file(s) could be read, so nothing was "
            "stored; each file's reason is in `failures`"
        )
        return JobOutcome(
            status="failed",
            progress=counts,
            failures=dict(report.skipped),
            error_code=error.code,
            error_message=error.message,
        )
    progress = {
        **counts,
        "documents": max(documents, counts.get("documents", 0)),
        "chunks": report.chunks,
        "tokens": report.tokens,
        "embedded": report.embedded,
    }
    return JobOutcome(
        status="succeeded",
        progress=progress,
        failures=dict(report.skipped),
        report=report_json(report),
    )


def _failed(job_id: str, error: Exception, counts: dict[str, int]) -> JobOutcome:
    """Why a job failed, in the caller's terms.

    A bad input says what was wrong with it. Anything else goes to the server log, and the job
    says only what failed: anyone who may poll the job reads its error, and a database error's
    text can hold the SQL with the documents' text as parameters, a storage error server paths.
    """
    if isinstance(error, WindowpackError) and not isinstance(error, StorageError):
        code, message = error.code, error.message
    else:
        _LOG.error("ingest job %s failed", job_id, exc_info=error)
        if isinstance(error, StorageError):
            code = error.code
            message = f"ingest job {job_id} could not use the store; the server log has details"
        else:
            code = "internal_error"
            message = f"ingest job {job_id} failed on the server; the server log has details"
    return JobOutcome(status="failed", progress=counts, error_code=code, error_message=message)


def _lower_priority(niceness: int) -> None:
    """Make the calling thread (on Linux a thread is scheduled on its own) and the threads it
    starts yield the CPU to the others: requests in a server's process go first."""
    if niceness <= 0 or not hasattr(os, "setpriority"):
        return
    try:
        thread = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, thread, os.getpriority(os.PRIO_PROCESS, thread) + niceness)
    except OSError as error:  # not permitted here: run at the normal priority
        _LOG.info("job worker runs at normal priority: %s", error)


def _lease_folder(engine: Engine) -> Path:
    """Where SQLite workers keep their lease files: beside the database."""
    database = engine.url.database or ""
    return Path(database).resolve().parent / "workers" if database else Path.cwd()
