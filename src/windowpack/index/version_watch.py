"""A replica's watcher: brings collections that another process wrote to their new version.

Several processes can serve one database (`windowpack serve` replicas on PostgreSQL, each with
its own index folder). Without a watcher a replica notices a new version only when a read
asks for it; with one, a thread wakes on every announced version (PostgreSQL LISTEN; on
SQLite, or if the connection drops, every `interval` seconds) and catches each loaded
collection up (`IndexStore.refresh_stale`), serving the previous version until the new one
is whole. A collection this process never read is not watched: its first read loads it.
"""

from __future__ import annotations

import logging
import threading

from sqlalchemy import Engine

from windowpack.index.store import IndexStore
from windowpack.storage import VersionListener

_LOG = logging.getLogger("windowpack")


class VersionWatcher:
    """A daemon thread that keeps this process's indexes at the database's versions."""

    def __init__(self, engine: Engine, indexes: IndexStore, *, interval: float) -> None:
        self._listener = VersionListener(engine)
        self._indexes = indexes
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="windowpack-versions", daemon=True)
        self.refreshes = 0
        """Collections brought to a new version (or forgotten) so far: for tests and metrics."""

    def start(self) -> VersionWatcher:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop watching; returns within about one interval."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self._interval + 5)
        self._listener.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._listener.wait(self._interval, self._stop)
            if self._stop.is_set():
                break
            try:
                self.refreshes += len(self._indexes.refresh_stale())
            except Exception:  # the database is away: try again next time
                _LOG.exception("checking for new index versions failed")
