"""A process-wide setting changed while any caller needs it, restored by the last one out."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class SharedSetting(Generic[T]):
    """A setting of the whole process (torch's thread count, the collector's thresholds)
    that callers change for as long as they run: the first one in saves it and applies the
    change (`apply`, returning what it replaced), the last one out restores that (`restore`),
    so concurrent callers share one save and restore."""

    def __init__(self, apply: Callable[[], T], restore: Callable[[T], None]) -> None:
        self._apply, self._restore = apply, restore
        self._lock = threading.Lock()
        self._holders = 0
        self._saved: T | None = None

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """The setting applied for the body (and for whoever else holds it meanwhile)."""
        with self._lock:
            if self._holders == 0:
                self._saved = self._apply()
            self._holders += 1
        try:
            yield
        finally:
            with self._lock:
                self._holders -= 1
                if self._holders == 0:
                    saved, self._saved = self._saved, None
                    self._restore(saved)  # type: ignore[arg-type]  # set by the first holder
