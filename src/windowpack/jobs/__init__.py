"""Ingest jobs: accepted writes kept in the store's database until a worker has done them.

`JobQueue` enqueues a job (documents or uploaded files: `DocumentsInput`, `FilesInput`) as a
row of the job table, reads it back and waits for it to end; an `Idempotency-Key` makes a
retried request answer the job it already made. `Worker` claims queued jobs one at a time and
runs them through the facade (`Collection.add` / `add_files`), in the serving process or in
`windowpack worker` processes on any machine sharing the database; a job whose worker died is
queued again (or failed after `WorkerSettings.max_attempts`), told by a lease the operating
system or PostgreSQL releases with the process (`liveness`), not by a clock.
"""

from __future__ import annotations

from windowpack.jobs.inputs import DocumentsInput, FilesInput, JobInput
from windowpack.jobs.queue import JobQueue, request_hash
from windowpack.jobs.worker import Worker, WorkerSettings

__all__ = [
    "DocumentsInput",
    "FilesInput",
    "JobInput",
    "JobQueue",
    "Worker",
    "WorkerSettings",
    "request_hash",
]
