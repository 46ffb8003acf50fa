"""The units a metadata filter keeps, which a filtered search stays within.

A filtered search or pack must search *inside* the kept units, not drop results after the
top k: a filter that keeps 1% of a collection would otherwise find a handful of hits, or
none. `KeptUnits` is the set of index ids (chunks, and summary nodes standing for kept
documents only) of one collection at one version; every index takes it as `within=` and
scores only those units (`VectorIndex.search`, `LexicalIndex.search`,
`SentenceIndex.search_pieces`). What an index derives from it (which sentences of a BM25
segment are kept, the kept vectors gathered for an exact search, a FAISS selector) is kept
on the object (`derived`), so it is computed once per (filter, version), and goes when the
object does.

`KeptCache` holds them by (collection, version, filter key), least recently used first out,
within a bound in bytes that counts what the indexes derived too (`trim`): a `BoundedCache`,
which the packer's filtered states are held in as well.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from windowpack.index.base import Ids
from windowpack.index.ids import NODE_ID_OFFSET

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

DEFAULT_KEPT_CACHE_BYTES = 256 * 1024 * 1024
"""The bound of every cached `KeptUnits` together, with what the indexes derived from them."""


class KeptUnits:
    """The index ids a filter keeps in one collection at one version (sorted, unique).

    `keeps(ids)` tells which of some ids are kept; `derived(key, compute)` keeps what an index
    computes from the set (keyed by that index, so that two indexes never share an entry).
    """

    def __init__(self, ids: Ids, *, cacheable: bool = True) -> None:
        self.ids = ids
        self.cacheable = cacheable
        """False for a set read at another version than the one it is asked for (a write
        landed meanwhile): used once, never cached under that version."""
        self._derived: dict[Hashable, Any] = {}
        self._lock = threading.Lock()

    @classmethod
    def of(
        cls, chunk_ids: npt.ArrayLike, node_ids: npt.ArrayLike, *, cacheable: bool = True
    ) -> KeptUnits:
        """The units of these chunk ids and summary node ids (database ids, not index ids)."""
        chunks = np.asarray(chunk_ids, dtype=np.int64).reshape(-1)
        nodes = np.asarray(node_ids, dtype=np.int64).reshape(-1) + NODE_ID_OFFSET
        return cls(np.unique(np.concatenate([chunks, nodes])), cacheable=cacheable)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def chunk_count(self) -> int:
        """How many of the kept units are chunks (the rest are summary nodes)."""
        return int(np.searchsorted(self.ids, NODE_ID_OFFSET))

    def keeps(self, ids: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Which of `ids` (index ids) are kept."""
        wanted = np.asarray(ids, dtype=np.int64)
        if not len(self.ids):
            return np.zeros(wanted.shape, dtype=np.bool_)
        slots = np.minimum(np.searchsorted(self.ids, wanted), len(self.ids) - 1)
        return np.asarray(self.ids[slots] == wanted)

    def derived(self, key: Hashable, compute: Callable[[], T]) -> T:
        """`compute()`, kept under `key` for as long as this set lives. Two searches asking
        at once may both compute it: the value is the same, one is kept."""
        with self._lock:
            if key in self._derived:
                found: T = self._derived[key]
                return found
        value = compute()
        with self._lock:
            kept: T = self._derived.setdefault(key, value)
            return kept

    @property
    def nbytes(self) -> int:
        """About what the set and everything derived from it hold in memory."""
        with self._lock:
            values = list(self._derived.values())
        return int(self.ids.nbytes) + sum(_weight(value) for value in values)


def _weight(value: Any) -> int:
    """Bytes of a derived value: an array's, or what the value says of itself (`nbytes`)."""
    return int(getattr(value, "nbytes", 0) or 0)


class BoundedCache(Generic[K, V]):
    """Values by key, least recently used first out, all within `max_bytes` together as
    `weigh(key, value)` says. Entries are weighed again at every `trim`, since a value may
    grow after it is stored (what the indexes derive from a `KeptUnits`); the one in use
    (`keep`) outlives the bound, so a single value larger than it lives while it is used."""

    def __init__(
        self,
        max_bytes: int,
        weigh: Callable[[K, V], int],
        *,
        storable: Callable[[V], bool] = lambda _value: True,
    ) -> None:
        """`storable(value)` false: a built value is answered but never kept."""
        self.max_bytes = max_bytes
        self._weigh = weigh
        self._storable = storable
        self._entries: OrderedDict[K, V] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K, build: Callable[[], V]) -> V:
        """The value under `key`, built by `build()` when not held (and kept, when storable,
        within the bound)."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found
        built = build()
        if not self._storable(built):
            return built
        with self._lock:
            self._entries[key] = built
        self.trim(keep=key)
        return built

    def trim(self, keep: K | None = None) -> None:
        """Drop the least recently used entries until all fit `max_bytes` (never `keep`)."""
        with self._lock:
            weights = {key: self._weigh(key, value) for key, value in self._entries.items()}
            total = sum(weights.values())
            for key in list(self._entries):
                if total <= self.max_bytes:
                    break
                if key != keep:
                    total -= weights[key]
                    del self._entries[key]

    def discard_if(self, stale: Callable[[K], bool]) -> None:
        """Drop every entry whose key `stale` picks (a collection deleted, a version left)."""
        with self._lock:
            for key in [key for key in self._entries if stale(key)]:
                del self._entries[key]


class KeptCache(BoundedCache[Hashable, KeptUnits]):
    """`KeptUnits` by key ((collection id, version, filter key)), all of them within
    `max_bytes` together with what the indexes derived from them; a set read at another
    version than asked for (`KeptUnits.cacheable`) is never kept."""

    def __init__(self, max_bytes: int = DEFAULT_KEPT_CACHE_BYTES) -> None:
        super().__init__(
            max_bytes, lambda _key, units: units.nbytes, storable=lambda units: units.cacheable
        )
