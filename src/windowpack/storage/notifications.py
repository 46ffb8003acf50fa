"""Telling other processes that a collection has a new index version (PostgreSQL NOTIFY).

A writer announces each version (and a collection's deletion) inside its transaction
(`announce_change`): PostgreSQL
delivers the notification when, and only if, the transaction commits. A replica's
`VersionListener` waits on the channel and wakes as soon as one arrives; on SQLite (one
machine, no notifications) and whenever the connection is lost, it simply waits out its
interval, so the caller polls. Notifications are a hint to look, never the data: the caller
reads the versions from the database either way.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from sqlalchemy import Engine, text
from sqlalchemy.orm import Session

_LOG = logging.getLogger("windowpack")
CHANNEL = "windowpack_versions"
STOP_CHECK_SECONDS = 0.5
"""How often a wait for a notification looks at its `stop` event: psycopg's `notifies` cannot
be woken by it, so a long interval (a replica's 60 s, a test's hour) once held `close()` for
all of it."""
JOBS_CHANNEL = "windowpack_jobs"


def announce_change(session: Session, collection_id: int) -> None:
    """Tell listeners that the collection changed (a new version, or deleted) when the
    caller's transaction commits (PostgreSQL only; elsewhere they poll)."""
    notify(session, CHANNEL, str(collection_id))


def notify(session: Session, channel: str, payload: str) -> None:
    """Send `payload` on `channel` when the caller's transaction commits (PostgreSQL only)."""
    if session.get_bind().dialect.name != "postgresql":
        return
    session.execute(
        text("SELECT pg_notify(:channel, :payload)"), {"channel": channel, "payload": payload}
    )


class VersionListener:
    """Waits until another process announces a version (or, on `channel`, anything else),
    or until the interval passes."""

    def __init__(self, engine: Engine, channel: str = CHANNEL) -> None:
        self._engine = engine
        self._channel = channel
        self._listens = engine.dialect.name == "postgresql"
        self._connection: Any = None

    def wait(self, seconds: float, stop: threading.Event) -> bool:
        """Block up to `seconds` (less once `stop` is set); True when a notification came."""
        if not self._listens:
            stop.wait(seconds)
            return False
        connection = self._connection or self._connect()
        if connection is None:
            stop.wait(seconds)
            return False
        deadline = time.monotonic() + seconds
        try:
            # Up to `seconds` for the first notification, in short waits so that `stop` is seen;
            # then take whatever else has queued.
            while not stop.is_set() and (left := deadline - time.monotonic()) > 0:
                wait = min(left, STOP_CHECK_SECONDS)
                if any(True for _ in connection.notifies(timeout=wait, stop_after=1)):
                    for _ in connection.notifies(timeout=0):
                        pass
                    return True
            return False
        except Exception as error:  # a lost connection: poll until it comes back
            _LOG.warning("listening for new index versions failed, polling: %s", error)
            self.close()
            stop.wait(seconds)
            return False

    def _connect(self) -> Any:
        import psycopg

        url = self._engine.url.set(drivername="postgresql")
        try:
            connection = psycopg.connect(url.render_as_string(hide_password=False), autocommit=True)
            connection.execute(f"LISTEN {self._channel}")
        except Exception as error:
            _LOG.warning("cannot listen for new index versions, polling: %s", error)
            return None
        self._connection = connection
        return connection

    def close(self) -> None:
        if self._connection is not None:
            try:
                self._connection.close()
            finally:
                self._connection = None
