"""Ingest jobs: accepted writes kept in the store's database until a worker has done them.

`JobQueue` enqueues a job (documents, uploaded files, a conversation, a rebuild of the summary
tree: `DocumentsInput`, `FilesInput`, `ConversationInput`, `TreeInput`) as a row of the job
table, reads it back and waits for it to end; an `Idempotency-Key` makes a
retried request answer the job it already made. `Worker` claims queued jobs one at a time and
runs them through the facade (`Collection.add`, `add_files`, ...), in the serving process or in
`windowpack worker` processes on any machine sharing the database; a job whose worker died is
queued again (or failed after `WorkerSettings.max_attempts`), told by a lease the operating
system or PostgreSQL releases with the process (`liveness`), not by a clock.
"""

from __future__ import annotations

from windowpack.jobs.inputs import (
    ConversationInput,
    DocumentsInput,
    FilesInput,
    JobInput,
    TreeInput,
)
from windowpack.jobs.queue import JobQueue, request_hash
from windowpack.jobs.worker import Worker, WorkerSettings

__all__ = [
    "ConversationInput",
    "DocumentsInput",
    "FilesInput",
    "JobInput",
    "JobQueue",
    "TreeInput",
    "Worker",
    "WorkerSettings",
    "request_hash",
]
