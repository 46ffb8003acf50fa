"""Finished windows kept for repeated requests, bounded by the memory they take, not by count.

A count bound alone let 256 distinct 1M-token windows take RSS to 3.8 GB (issue 14, D12): a
window's size follows its budget, from a few KB to ~10 MB. Each entry is weighed once, when
stored (`window_bytes`), and the least recently used go first until the total fits. A window
heavier than the whole bound is not kept at all. (cachetools' `LRUCache(getsizeof=...)` does
the same; twenty lines did not justify a new dependency.)
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from windowpack.types import Window

# A WindowItem besides its text: 16 fields, its span, ids and title; tracemalloc measures
# ~670 bytes when the item owns its id and title strings (they are often shared).
_ITEM_BYTES = 768


def window_bytes(window: Window) -> int:
    """About how much memory `window` holds: its text, each item's text, the items."""
    items = sum(sys.getsizeof(item.text) + _ITEM_BYTES for item in window.items)
    return sys.getsizeof(window.text) + items


class WindowCache:
    """A thread-safe LRU map of windows whose entries weigh at most `max_bytes` together."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Hashable, tuple[Window, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        """What the kept windows weigh now (never more than `max_bytes`)."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> Window | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry[0]

    def put(self, key: Hashable, window: Window) -> None:
        weight = window_bytes(window)
        with self._lock:
            self._drop(key)
            if weight > self.max_bytes:
                return
            self._entries[key] = (window, weight)
            self._bytes += weight
            while self._bytes > self.max_bytes:
                self._drop(next(iter(self._entries)))

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def discard_if(self, stale: Callable[[Hashable], bool]) -> None:
        """Drop every entry whose key `stale` picks."""
        with self._lock:
            for key in [key for key in self._entries if stale(key)]:
                self._drop(key)

    def _drop(self, key: Hashable) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= entry[1]
