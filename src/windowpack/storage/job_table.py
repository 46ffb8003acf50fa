"""The job table's queries: enqueue, claim, progress, finish, and what recovery needs.

Every change of a job's state after it is claimed is a compare-and-set on (status, worker):
a worker writes only a job it holds, so a worker that lost a job (its lease was taken as
dead and the job handed to another) cannot overwrite the other's outcome. The claim itself
is one conditional UPDATE: two workers racing for a job both try it and exactly one sees a
row changed. On PostgreSQL the candidate is read `FOR UPDATE SKIP LOCKED`, so racing workers
take different jobs instead of queueing on one row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from windowpack.storage.notifications import JOBS_CHANNEL, notify
from windowpack.storage.schema import JobRow, utc_now


@dataclass(frozen=True, kw_only=True)
class JobOutcome:
    """How a job ended, as the worker writes it."""

    status: str
    progress: Mapping[str, int]
    failures: Mapping[str, str] = field(default_factory=dict)
    report: Mapping[str, Any] | None = None
    error_code: str | None = None
    error_message: str | None = None


class JobTable:
    """The store's ingest jobs."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions

    def insert(self, row: JobRow) -> tuple[JobRow, bool]:
        """Store a new job; (the job, True), or, when its idempotency key is taken in that
        collection, (the job that holds it, False)."""
        try:
            with self._sessions.begin() as session:
                session.add(row)
                notify(session, JOBS_CHANNEL, row.id)  # wakes idle workers when it commits
            return row, True
        except IntegrityError:
            if row.idempotency_key is None:
                raise
            existing = self.by_key(row.collection, row.idempotency_key)
            if existing is None:  # deleted between the two statements: a new race, not ours
                raise
            return existing, False

    def get(self, job_id: str) -> JobRow | None:
        with self._sessions() as session:
            return session.get(JobRow, job_id)

    def by_key(self, collection: str, key: str) -> JobRow | None:
        """The job a client's `Idempotency-Key` names in `collection`."""
        with self._sessions() as session:
            return session.scalars(
                select(JobRow).where(JobRow.collection == collection, JobRow.idempotency_key == key)
            ).first()

    def claim(self, worker: str, lock: int) -> JobRow | None:
        """Take the oldest queued job for `worker` (holding lease `lock`); None when none is."""
        with self._sessions.begin() as session:
            candidates = (
                select(JobRow.id)
                .where(JobRow.status == "queued")
                .order_by(JobRow.created_at, JobRow.id)
                .limit(1)
            )
            if session.get_bind().dialect.name == "postgresql":
                candidates = candidates.with_for_update(skip_locked=True)
            job_id = session.scalar(candidates)
            if job_id is None:
                return None
            claimed = session.execute(
                update(JobRow)
                .where(JobRow.id == job_id, JobRow.status == "queued")
                .values(
                    status="running",
                    stage="starting",
                    worker=worker,
                    worker_lock=lock,
                    attempts=JobRow.attempts + 1,
                    started_at=utc_now(),
                )
            )
            if claimed.rowcount != 1:  # type: ignore[attr-defined]
                return None  # another worker took it between the two statements
            return session.get(JobRow, job_id, populate_existing=True)

    def save_progress(
        self, job_id: str, worker: str, stage: str, progress: Mapping[str, int]
    ) -> bool:
        """Record progress of a job `worker` holds; False when it no longer holds it."""
        return self._held_update(job_id, worker, stage=stage, progress=dict(progress))

    def finish(self, job_id: str, worker: str, outcome: JobOutcome) -> bool:
        """Record how a job `worker` holds ended; False when it no longer holds it."""
        return self._held_update(
            job_id,
            worker,
            status=outcome.status,
            stage="done",
            progress=dict(outcome.progress),
            failures=dict(outcome.failures),
            report=dict(outcome.report) if outcome.report is not None else None,
            error_code=outcome.error_code,
            error_message=outcome.error_message,
            finished_at=utc_now(),
        )

    def running(self) -> list[JobRow]:
        """Every job some worker has claimed and not finished."""
        with self._sessions() as session:
            return list(session.scalars(select(JobRow).where(JobRow.status == "running")))

    def requeue(self, job_id: str, worker: str) -> bool:
        """Put a job whose worker died back in the queue (only if that worker still holds it)."""
        return self._held_update(
            job_id, worker, status="queued", stage="queued", worker=None, worker_lock=None
        )

    def queued_count(self) -> int:
        with self._sessions() as session:
            count = session.scalar(select(func.count()).where(JobRow.status == "queued"))
            return int(count or 0)

    def prune(self, keep: int) -> int:
        """Delete the oldest finished jobs beyond the newest `keep`; how many went."""
        with self._sessions.begin() as session:
            old = session.scalars(
                select(JobRow.id)
                .where(JobRow.finished_at.is_not(None))
                .order_by(JobRow.finished_at.desc(), JobRow.id)
                .offset(keep)
            ).all()
            if old:
                session.execute(delete(JobRow).where(JobRow.id.in_(list(old))))
            return len(old)

    def _held_update(self, job_id: str, holder: str, **values: Any) -> bool:
        with self._sessions.begin() as session:
            result = session.execute(
                update(JobRow)
                .where(JobRow.id == job_id, JobRow.status == "running", JobRow.worker == holder)
                .values(**values)
            )
            return bool(result.rowcount == 1)  # type: ignore[attr-defined]


def new_job_row(
    *,
    job_id: str,
    collection: str,
    kind: str,
    manifest: Mapping[str, Any],
    documents_total: int,
    idempotency_key: str | None,
    request_hash: str | None,
    created_at: datetime | None = None,
) -> JobRow:
    """A queued job's row."""
    return JobRow(
        id=job_id,
        collection=collection,
        kind=kind,
        manifest=dict(manifest),
        status="queued",
        stage="queued",
        progress={"documents_total": documents_total},
        failures={},
        attempts=0,
        idempotency_key=idempotency_key,
        request_hash=request_hash,
        created_at=created_at or utc_now(),
    )
