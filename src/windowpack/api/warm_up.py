"""The server's warm-up: what the first requests would wait for, loaded in the background.

A restarted server holds nothing: its first pack loaded the tokenizer tables, the query
model, the collection's indexes and its packing state (11 s once at 10M tokens). Started
with the app, `Store.warm_up` loads them in a daemon thread while the server already
answers; a request that comes first waits only for what is still loading (the loads are
shared, never done twice). `/readyz` says when it is done, for a load balancer to wait on.
"""

from __future__ import annotations

import logging
import threading

from windowpack.service import Store

_LOG = logging.getLogger("windowpack.api")


class WarmUp:
    """`Store.warm_up` in a daemon thread; ready once it ended, or at once when not asked."""

    def __init__(self, store: Store, *, enabled: bool) -> None:
        self._store, self._enabled = store, enabled
        self._done, self._stop = threading.Event(), threading.Event()
        self._thread: threading.Thread | None = None
        self.warmed: list[str] = []
        if not enabled:
            self._done.set()

    @property
    def ready(self) -> bool:
        return self._done.is_set()

    def start(self) -> None:
        if self._enabled and self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="windowpack-warm-up", daemon=True
            )
            self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Ask it to end after the collection it is on, and wait up to `timeout` seconds."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        try:
            self.warmed = self._store.warm_up(stop=self._stop)
            # Asked to stop, the server is shutting down: what it logs to may be closed.
            if not self._stop.is_set():
                _LOG.info("warmed up %d collection(s)", len(self.warmed))
        except Exception:  # the server serves anyway: each request then loads what it needs
            if not self._stop.is_set():
                _LOG.exception("warming up failed; requests load what they need themselves")
        finally:
            self._done.set()
