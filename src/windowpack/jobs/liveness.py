"""Whether the worker that claimed a job is still alive, told by a lock the operating system
or the database releases when that worker's process dies, never by a clock.

A worker holds one lease for its life: on PostgreSQL a session advisory lock on its own
connection (released when the connection drops, as it does when the process is killed, on
any machine), on SQLite an exclusive `flock` on a file in the store folder (released by the
kernel with the process; SQLite stores are on one machine). A job whose worker's lease can be
taken is orphaned. A heartbeat would need a timeout that a loaded machine can miss, handing a
live worker's job to another; a lock cannot be missed.
"""

from __future__ import annotations

import fcntl
import os
import secrets
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, text

# The first key of PostgreSQL's two-key advisory locks: the namespace of worker leases.
_LEASE_SPACE = 0x6A6F62  # "job"


class WorkerLease:
    """A lock held from `acquire()` to `release()` that names one worker."""

    def __init__(self, engine: Engine, folder: Path) -> None:
        self._engine = engine
        self._folder = folder
        self.key = secrets.randbelow(2**31 - 1) + 1
        self._held: Any = None

    @property
    def on_postgres(self) -> bool:
        return self._engine.dialect.name == "postgresql"

    def acquire(self) -> None:
        """Take the lease (a fresh key is never held by anyone else); held already: nothing."""
        if self._held is not None:
            return
        if self.on_postgres:
            connection = self._engine.connect()
            connection.execute(text("SELECT pg_advisory_lock(:a, :b)"), _keys(self.key))
            connection.commit()
            self._held = connection
            return
        self._folder.mkdir(parents=True, exist_ok=True)
        handle = _lock_path(self._folder, self.key).open("w")
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._held = handle

    def release(self) -> None:
        held, self._held = self._held, None
        if held is None:
            return
        if self.on_postgres:
            held.close()  # the session ends and its advisory lock with it
            return
        _lock_path(self._folder, self.key).unlink(missing_ok=True)
        held.close()

    def is_alive(self, key: int | None) -> bool:
        """Whether the worker holding lease `key` is still running (False for None)."""
        if key is None:
            return False
        if key == self.key and self._held is not None:
            return True
        if self.on_postgres:
            with self._engine.begin() as connection:
                # Taken only for this transaction: a free lease is not kept from its owner.
                free = connection.scalar(
                    text("SELECT pg_try_advisory_xact_lock(:a, :b)"), _keys(key)
                )
            return not free
        return _file_is_locked(_lock_path(self._folder, key))


def _keys(key: int) -> dict[str, int]:
    return {"a": _LEASE_SPACE, "b": key}


def _lock_path(folder: Path, key: int) -> Path:
    return folder / f"worker-{key}.lock"


def _file_is_locked(path: Path) -> bool:
    try:
        descriptor = os.open(path, os.O_RDWR)  # never created here: no file, no worker
    except FileNotFoundError:
        return False
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)
    path.unlink(missing_ok=True)  # a dead worker's file: nobody will take this key again
    return False
