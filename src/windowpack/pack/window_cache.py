"""Finished windows kept for repeated requests, bounded by the memory they take, not by count.

A window's size follows its budget, from a few KB to ~10 MB, so a bound in entries does not
bound memory: 256 distinct 1M-token windows took RSS to 3.8 GB. Each entry is weighed once,
when stored (`window_bytes`), and the least recently used go first until the total fits
(cachetools' `LRUCache` with the weight as each entry's size). A window heavier than the
whole bound is not kept at all.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from cachetools import LRUCache

from windowpack.pack.request import PackRequest
from windowpack.types import Window

# A WindowItem besides its text: 16 fields, its span, ids and title; tracemalloc measures
# ~670 bytes when the item owns its id and title strings (they are often shared).
_ITEM_BYTES = 768


@dataclass(frozen=True, slots=True)
class WindowKey:
    """What a cached window answers, at `versions` ((collection id, index version) each).

    A packed window (kind "request") answers one request. The lossless window (kind
    "lossless", the whole collection verbatim) is the same for every request it fits, so it
    is keyed by the versions, the tokenizer, the header style and the metadata filter
    (`where`, its canonical key) alone, and rendered once for all of them.
    """

    kind: Literal["request", "lossless", "session"]
    versions: tuple[tuple[int, int], ...]
    request: PackRequest | None = None
    tokenizer: str | None = None
    session: object | None = None
    """A session's state (`session.SessionState`): its last window, kept for the next question."""
    where: str | None = None
    """The canonical key of the metadata filter a lossless window keeps the documents of."""

    @classmethod
    def of_request(cls, versions: tuple[tuple[int, int], ...], request: PackRequest) -> WindowKey:
        return cls("request", versions, request=request)

    @classmethod
    def lossless(
        cls,
        versions: tuple[tuple[int, int], ...],
        tokenizer: str,
        headers: str = "full",
        where: str | None = None,
    ) -> WindowKey:
        return cls("lossless", versions, tokenizer=f"{tokenizer} {headers}", where=where)

    @classmethod
    def of_session(cls, versions: tuple[tuple[int, int], ...], state: object) -> WindowKey:
        return cls("session", versions, session=state)

    def names(self, collection_id: int) -> bool:
        """Whether the window was built from (a version of) this collection."""
        return any(cid == collection_id for cid, _ in self.versions)


def window_bytes(window: Window) -> int:
    """About how much memory `window` holds: its text, each item's text, the items."""
    items = sum(sys.getsizeof(item.text) + _ITEM_BYTES for item in window.items)
    return sys.getsizeof(window.text) + items


class WindowCache:
    """A thread-safe LRU map of windows whose entries weigh at most `max_bytes` together."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        # The LRU weighs each window once, when stored, and keeps that weight.
        self._entries: LRUCache[WindowKey, Window] = LRUCache(
            maxsize=max_bytes, getsizeof=window_bytes
        )
        # cachetools' caches are not thread-safe, and a read reorders the LRU.
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        """What the kept windows weigh now (never more than `max_bytes`)."""
        return int(self._entries.currsize)

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: WindowKey) -> Window | None:
        with self._lock:
            return self._entries.get(key)

    def put(self, key: WindowKey, window: Window) -> None:
        """Keep `window` under `key` (replacing what was there), dropping the least recently
        used until all fit; a window heavier than the whole bound is not kept."""
        with self._lock:
            self._entries.pop(key, None)
            # cachetools refuses (ValueError) a window heavier than the whole bound.
            with contextlib.suppress(ValueError):
                self._entries[key] = window

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def discard_if(self, stale: Callable[[WindowKey], bool]) -> None:
        """Drop every entry whose key `stale` picks."""
        with self._lock:
            for key in [key for key in self._entries if stale(key)]:
                del self._entries[key]
