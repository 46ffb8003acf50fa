"""`kill -9` of a process while it ingests, and the checks a store must pass afterwards.

Shared by `test_kill_during_ingest.py` (a few seeded rounds in CI) and `benchmarks/crash.py`
(as many as asked). A round forks a child (the parent has windowpack imported already, so a
round costs milliseconds, not an interpreter start) that opens the store and adds batches of
documents in a loop, appending each batch's number to a log once `add` has returned; the
parent kills it with SIGKILL after a seeded random delay, whatever it is doing (chunking,
embedding, inside the transaction, writing index files).

A store passes when it opens, SQLite's `integrity_check` says ok, every batch is wholly there
or wholly absent (never half-added), every batch the child reported is there (nothing lost),
every document has all its chunks, tiling its text, and its summary tree, and search, pack
and a new write work.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select, text

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.storage.schema import ChunkRow, DocumentRow, TreeNodeRow

CONFIG = StoreConfig(embedder="hash", chunk_tokens=64)
BATCH = 6
_WORDS = ("harbour", "seals", "rest", "on", "sandbanks", "barn", "owls", "hunt", "voles")


@dataclass(frozen=True, kw_only=True)
class StoreAt:
    """Where a store is: a folder (`url` None) or a database URL with its index folder."""

    folder: Path
    url: str | None = None

    def open(self, *, create: bool = True, config: StoreConfig = CONFIG) -> wp.Store:
        if self.url is None:
            return wp.open(self.folder, config=config, create=create)
        return wp.open(self.url, index_dir=self.folder / "ix", config=config, create=create)


@dataclass(frozen=True, kw_only=True)
class RoundResult:
    """What one round left: batches the child reported, batches found, documents checked."""

    reported: int
    present: int
    documents: int
    killed_after_s: float


def batch_documents(batch: int) -> list[wp.Document]:
    """Batch `batch`'s documents: the same text for the same batch, in every run."""
    rng = random.Random(batch)
    return [
        wp.Document(
            id=f"b{batch}-d{i}",
            text=" ".join(
                f"{rng.choice(_WORDS).capitalize()} {' '.join(rng.choices(_WORDS, k=11))}."
                for _ in range(rng.randint(4, 40))
            ),
        )
        for i in range(BATCH)
    ]


def run_round(at: StoreAt, seed: int, *, max_delay_s: float = 1.2) -> RoundResult:
    """Fork an ingesting child, kill -9 it after a seeded delay, check the store."""
    log = at.folder / "committed.log"
    start_batch = max(_present_batches(at), default=-1) + 1  # creates the store if need be
    child = multiprocessing.get_context("fork").Process(
        target=_ingest_forever, args=(at, log, start_batch), daemon=True
    )
    delay = random.Random(seed).uniform(0.05, max_delay_s)
    child.start()
    time.sleep(delay)
    assert child.pid is not None
    os.kill(child.pid, signal.SIGKILL)
    child.join()
    assert child.exitcode == -signal.SIGKILL  # it was still working: killed, not finished
    reported = _reported(log)
    documents, present = check_store(at)
    missing = reported - present
    assert not missing, f"batches reported committed but absent after the kill: {missing}"
    return RoundResult(
        reported=len(reported), present=len(present), documents=documents, killed_after_s=delay
    )


def _ingest_forever(at: StoreAt, log: Path, first_batch: int) -> None:
    with at.open() as store:
        collection = store.collection("docs")
        batch = first_batch
        while True:
            collection.add(batch_documents(batch))
            with log.open("a") as file:
                file.write(f"{batch}\n")
                file.flush()
                os.fsync(file.fileno())
            batch += 1


def _reported(log: Path) -> set[int]:
    if not log.exists():
        return set()
    lines = log.read_text().splitlines()
    return {int(line) for line in lines if line.strip().isdigit()}


def _present_batches(at: StoreAt) -> set[int]:
    with at.open() as store, store.sessions() as session:
        ids = session.scalars(select(DocumentRow.external_id)).all()
    return {int(i.split("-")[0][1:]) for i in ids}


def check_store(at: StoreAt) -> tuple[int, set[int]]:
    """Every check of the module docstring; returns (documents, batches present)."""
    with at.open(create=False) as store:
        sessions = store.sessions
        with sessions() as session:
            if store.url.startswith("sqlite"):
                assert session.execute(text("PRAGMA integrity_check")).scalar() == "ok"
            documents = list(session.scalars(select(DocumentRow)))
            positions = [row.position for row in documents]
            assert len(set(positions)) == len(positions), "two documents share a position"
            for row in documents:
                _check_document(session, row)
        batches: dict[int, set[str]] = {}
        for row in documents:
            batches.setdefault(int(row.external_id.split("-")[0][1:]), set()).add(row.external_id)
        for batch, ids in batches.items():
            expected = {doc.id for doc in batch_documents(batch)}
            assert ids == expected, f"batch {batch} half-added: {sorted(expected - ids)} absent"
        _check_reads_and_a_write(store, bool(documents))
    return len(documents), set(batches)


def _check_document(session: object, row: DocumentRow) -> None:
    from sqlalchemy.orm import Session

    assert isinstance(session, Session)
    chunks = list(
        session.scalars(
            select(ChunkRow).where(ChunkRow.document_id == row.id).order_by(ChunkRow.ordinal)
        )
    )
    assert chunks, f"{row.external_id} has no chunks"
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert all(row.text[c.char_start : c.char_end] == c.text for c in chunks)
    assert chunks[0].char_start == 0 and chunks[-1].char_end <= len(row.text)
    if len(chunks) > 1:
        nodes = list(session.scalars(select(TreeNodeRow).where(TreeNodeRow.document_id == row.id)))
        top = max(nodes, key=lambda node: node.level, default=None)
        assert top is not None, f"{row.external_id} has {len(chunks)} chunks and no tree"
        assert (top.leaf_start, top.leaf_end) == (0, len(chunks))


def _check_reads_and_a_write(store: wp.Store, filled: bool) -> None:
    collection = store.collection("docs")
    if filled:
        assert collection.search("barn owls", k=3)
        window = collection.pack("seals on sandbanks", budget=500)
        assert 0 < window.tokens <= 500
    probe = wp.Document(id="probe", text="A probe written after the kill: kestrels hover.")
    collection.add([probe])
    assert collection.search("probe kestrels", k=1)[0].document_id == "probe"
    collection.delete("probe")
