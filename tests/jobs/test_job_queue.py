"""The job table and its workers, on SQLite and PostgreSQL: jobs end, never run twice at once,
come back after their worker dies, and a retry with the same key answers the same job."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import pytest

import windowpack as wp
from windowpack.jobs import DocumentsInput, FilesInput, JobQueue, Worker, WorkerSettings
from windowpack.jobs.liveness import WorkerLease
from windowpack.storage import JobOutcome

SEALS = "Harbour seals rest on sandbanks at low tide. " * 12
OWLS = "Barn owls hunt voles in the meadow at night. " * 12


def _collection(store: wp.Store, name: str = "docs") -> wp.Collection:
    collection = store.collection(name)
    collection.add([wp.Document(id="seed", text="A first document about tide pools.")])
    return collection


def _run_until_ended(queue: JobQueue, job_id: str) -> wp.types.JobState:
    """Start a worker (it first recovers orphaned jobs), wait for the job, stop the worker."""
    worker = Worker(queue).start()
    try:
        return queue.wait(job_id, timeout=300)
    finally:
        worker.close()


def _documents(*ids: str) -> DocumentsInput:
    return DocumentsInput([wp.Document(id=i, text=f"{i}: {SEALS}") for i in ids])


def test_a_queued_job_is_run_by_a_worker_and_its_report_kept(any_database_store: wp.Store) -> None:
    collection = _collection(any_database_store)
    queue = JobQueue(any_database_store)
    job, created = queue.enqueue(collection, _documents("a", "b"))
    assert created and job.status == "queued" and job.documents_total == 2
    assert queue.get(job.id).status == "queued"  # nothing runs it until a worker does

    done = _run_until_ended(queue, job.id)
    assert done.status == "succeeded" and done.attempts == 1, done
    assert done.report is not None and done.report.added == 2
    assert done.embedded == done.report.embedded > 0
    assert done.started_at is not None and done.finished_at is not None
    assert {info.id for info in collection.documents()} == {"seed", "a", "b"}
    # Another process (a new queue over the same database) reads the same job.
    assert JobQueue(any_database_store).get(job.id) == done


def test_a_bad_input_fails_its_job_with_the_error_that_names_it(
    any_database_store: wp.Store,
) -> None:
    collection = _collection(any_database_store)
    queue = JobQueue(any_database_store)
    bad = DocumentsInput([wp.Document(id="empty", text="   ")])
    job, _ = queue.enqueue(collection, bad)
    ended = _run_until_ended(queue, job.id)
    assert ended.status == "failed" and ended.error is not None
    assert ended.error.code == "empty_document" and "empty" in ended.error.message
    assert [info.id for info in collection.documents()] == ["seed"]


def test_the_same_idempotency_key_answers_the_same_job(any_database_store: wp.Store) -> None:
    collection = _collection(any_database_store)
    queue = JobQueue(any_database_store)
    first, created = queue.enqueue(
        collection, _documents("a"), idempotency_key="k-1", request_hash="h1"
    )
    again, created_again = queue.enqueue(
        collection, _documents("a"), idempotency_key="k-1", request_hash="h1"
    )
    assert created and not created_again and again.id == first.id
    with pytest.raises(wp.ConflictError, match="Idempotency-Key 'k-1'"):
        queue.enqueue(collection, _documents("b"), idempotency_key="k-1", request_hash="h2")
    # Keys are per collection.
    other = _collection(any_database_store, "other")
    elsewhere, created_elsewhere = queue.enqueue(
        other, _documents("a"), idempotency_key="k-1", request_hash="h1"
    )
    assert created_elsewhere and elsewhere.id != first.id


def test_racing_workers_never_claim_the_same_job(any_database_store: wp.Store) -> None:
    collection = _collection(any_database_store)
    queue = JobQueue(any_database_store)
    ids = {queue.enqueue(collection, _documents(f"d{i}"))[0].id for i in range(12)}
    leases = [WorkerLease(any_database_store.engine, Path("unused")) for _ in range(4)]
    claimed: list[list[str]] = [[] for _ in leases]
    start = threading.Barrier(len(leases))

    def claim_all(index: int) -> None:
        start.wait()
        while (row := queue.table.claim(f"w{index}", leases[index].key)) is not None:
            claimed[index].append(row.id)

    threads = [threading.Thread(target=claim_all, args=(i,)) for i in range(len(leases))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [job_id for mine in claimed for job_id in mine]
    assert sorted(every) == sorted(ids)  # each job claimed exactly once
    assert all(row.attempts == 1 for row in queue.table.running())


def test_a_job_whose_worker_died_is_queued_again_and_then_done(
    any_database_store: wp.Store, tmp_path: Path
) -> None:
    collection = _collection(any_database_store)
    queue = JobQueue(any_database_store)
    job, _ = queue.enqueue(collection, _documents("a"))
    dead = WorkerLease(any_database_store.engine, tmp_path / "workers")
    assert queue.table.claim("dead-worker", dead.key) is not None  # its lease was never held
    done = _run_until_ended(queue, job.id)
    assert done.status == "succeeded" and done.attempts == 2
    assert "a" in {info.id for info in collection.documents()}


def test_a_job_held_by_a_live_worker_is_left_to_it(any_database_store: wp.Store) -> None:
    collection = _collection(any_database_store)
    queue = JobQueue(any_database_store)
    job, _ = queue.enqueue(collection, _documents("a"))
    folder = Path(any_database_store.engine.url.database or ".").resolve().parent / "workers"
    alive = WorkerLease(any_database_store.engine, folder)
    alive.acquire()
    try:
        assert queue.table.claim("live-worker", alive.key) is not None
        worker = Worker(queue)
        assert worker.recover() == 0
        assert queue.get(job.id).status == "running"
    finally:
        alive.release()
    # Once its lease is released (the process gone), the job is orphaned.
    assert Worker(queue).recover() == 1
    assert queue.get(job.id).status == "queued"


def test_a_job_interrupted_too_often_fails_saying_so(
    any_database_store: wp.Store, tmp_path: Path
) -> None:
    collection = _collection(any_database_store)
    queue = JobQueue(any_database_store)
    job, _ = queue.enqueue(collection, _documents("a"))
    worker = Worker(queue, WorkerSettings(max_attempts=2))
    for attempt in (1, 2):
        dead = WorkerLease(any_database_store.engine, tmp_path / "workers")
        row = queue.table.claim(f"dead-{attempt}", dead.key)
        assert row is not None and row.attempts == attempt
        worker.recover()
    ended = queue.get(job.id)
    assert ended.status == "failed" and ended.error is not None
    assert ended.error.code == "job_interrupted" and "2 times" in ended.error.message
    assert [info.id for info in collection.documents()] == ["seed"]
    with pytest.raises(wp.JobInterruptedError):
        raise wp.errors.from_code(ended.error.code, ended.error.message)


def test_a_first_write_interrupted_too_often_leaves_no_collection(
    any_database_store: wp.Store, tmp_path: Path
) -> None:
    queue = JobQueue(any_database_store)
    job, _ = queue.enqueue(any_database_store.collection("fresh"), _documents("a"))
    kept, _ = queue.enqueue(_collection(any_database_store, "kept"), _documents("b"))
    dead = WorkerLease(any_database_store.engine, tmp_path / "workers")
    for _ in (job, kept):
        assert queue.table.claim("dead", dead.key) is not None
    # What a killed first write leaves: the collection's row, created before the ingest.
    any_database_store.create_collection("fresh")
    Worker(queue, WorkerSettings(max_attempts=1)).recover()
    assert queue.get(job.id).status == queue.get(kept.id).status == "failed"
    assert any_database_store.collections() == ["kept"]  # an existing one stays, documents too
    assert [info.id for info in any_database_store.collection("kept").documents()] == ["seed"]


def test_a_worker_that_lost_its_job_cannot_overwrite_its_outcome(
    any_database_store: wp.Store,
) -> None:
    collection = _collection(any_database_store)
    queue = JobQueue(any_database_store)
    job, _ = queue.enqueue(collection, _documents("a"))
    assert queue.table.claim("first", 1) is not None
    assert queue.table.requeue(job.id, "first")
    assert queue.table.claim("second", 2) is not None
    lost = JobOutcome(status="failed", progress={}, error_code="x", error_message="stale")
    assert not queue.table.finish(job.id, "first", lost)
    assert not queue.table.save_progress(job.id, "first", "embed", {"chunks": 9})
    assert queue.get(job.id).status == "running"


def test_a_files_job_removes_its_upload_folder_when_it_ends(
    hash_store: wp.Store, tmp_path: Path
) -> None:
    collection = _collection(hash_store)
    folder = tmp_path / "upload-1"
    folder.mkdir()
    (folder / "owls.md").write_text(f"# Owls\n\n{OWLS}\n")
    (folder / "broken.pdf").write_bytes(b"not a pdf")
    queue = JobQueue(hash_store)
    job, _ = queue.enqueue(collection, FilesInput(folder=folder, paths=None, count=2))
    done = _run_until_ended(queue, job.id)
    assert done.status == "succeeded", done
    assert list(done.failures) == ["broken.pdf"]
    assert "owls.md" in {info.id for info in collection.documents()}
    assert not folder.exists()


def test_a_files_job_of_which_no_file_could_be_read_fails_and_leaves_no_collection(
    any_database_store: wp.Store, tmp_path: Path
) -> None:
    folder = tmp_path / "upload-1"
    folder.mkdir()
    (folder / "broken.pdf").write_bytes(b"not a pdf")
    (folder / "empty.txt").write_text("   \n")
    queue = JobQueue(any_database_store)
    fresh = any_database_store.collection("fresh")
    job, _ = queue.enqueue(fresh, FilesInput(folder=folder, paths=None, count=2))
    done = _run_until_ended(queue, job.id)
    assert done.status == "failed" and done.error is not None, done
    assert done.error.code == "invalid_input" and "none of the 2 file(s)" in done.error.message
    assert sorted(done.failures) == ["broken.pdf", "empty.txt"]
    assert any_database_store.collections() == []
    assert not folder.exists()


def test_wait_times_out_on_the_given_clock(hash_store: wp.Store) -> None:
    collection = _collection(hash_store)
    queue = JobQueue(hash_store)
    job, _ = queue.enqueue(collection, _documents("a"))
    ticks = iter(range(100))
    with pytest.raises(TimeoutError, match=job.id):
        queue.wait(job.id, timeout=3, clock=lambda: float(next(ticks)))


def test_a_job_for_a_collection_deleted_since_fails_naming_it(hash_store: wp.Store) -> None:
    collection = _collection(hash_store)
    queue = JobQueue(hash_store)
    job, _ = queue.enqueue(collection, _documents("a"))
    hash_store.delete_collection("docs")
    _collection(hash_store)  # the same name made again: not the collection the job was for
    ended = _run_until_ended(queue, job.id)
    assert ended.status == "failed" and ended.error is not None
    assert ended.error.code == "collection_deleted" and "docs" in ended.error.message


def test_finished_jobs_beyond_keep_are_pruned(hash_store: wp.Store) -> None:
    collection = _collection(hash_store)
    queue = JobQueue(hash_store, keep=2)
    jobs = [queue.enqueue(collection, _documents(f"d{i}"))[0] for i in range(4)]
    worker = Worker(queue)
    for _ in jobs:
        assert worker.run_one()
    kept = [job.id for job in jobs if queue.table.get(job.id) is not None]
    assert len(kept) == 2 and kept == [jobs[2].id, jobs[3].id]


@pytest.mark.skipif(not hasattr(os, "setpriority"), reason="no per-thread nice values here")
def test_a_worker_runs_its_jobs_at_the_priority_it_is_given(
    hash_store: wp.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []

    def recording(self: DocumentsInput, *_args: object) -> wp.IngestReport:
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return wp.IngestReport()

    monkeypatch.setattr(DocumentsInput, "run", recording)
    queue = JobQueue(hash_store)
    job, _ = queue.enqueue(_collection(hash_store), _documents("a"))
    worker = Worker(queue, WorkerSettings(niceness=5)).start()
    try:
        assert queue.wait(job.id, timeout=300).status == "succeeded"
    finally:
        worker.close()
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert seen == [min(mine + 5, 19)]


def test_a_running_job_writes_its_progress_to_the_log_as_lines(hash_store: wp.Store) -> None:
    """What `windowpack serve` and `windowpack worker` log: a line per step, no bar."""
    collection = _collection(hash_store)
    queue = JobQueue(hash_store)
    job, _ = queue.enqueue(collection, _documents("a", "b", "c"))
    lines: list[str] = []
    handler = logging.Handler(logging.INFO)
    handler.emit = lambda record: lines.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger("windowpack.jobs")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        done = _run_until_ended(queue, job.id)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)

    assert done.status == "succeeded", done
    mine = [line for line in lines if line.startswith(f"job {job.id}: ")]
    assert {"chunk", "embed", "index"} <= {line.split()[2] for line in mine}, lines
    assert f"job {job.id}: chunk 3/3 documents (100.0%)" in "\n".join(mine)
    assert not any("\r" in line for line in mine)
