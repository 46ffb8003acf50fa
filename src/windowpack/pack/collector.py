"""Python's cyclic garbage collector run in larger batches while packs and state loads run.

A window of B = 1M allocates hundreds of thousands of small objects (blocks, items, count
plans), and a state load at 100M tokens millions. With the default threshold (700 net
allocations) the collector ran ~100 times a pack, and every hundredth run traversed every
object the process tracks, the packing states and the cached windows among them: over a
10.9M-token collection, 10 full collections in 12 packs at B = 1M cost 1.4 s in all. Nearly
everything a pack allocates is freed by reference counting, so those runs found little.

While any pack or load runs, the first generation's threshold is raised to
`_BATCHED_THRESHOLD`: the collector still runs and frees what it would have freed, in
batches, and the thresholds are restored as they were when the last one ends. The setting
is the process's: concurrent packs share one save and restore, as the query's torch
threads do (`retrieval.embedder`).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_BATCHED_THRESHOLD = 100_000
_lock = threading.Lock()
_running = 0
_saved: tuple[int, ...] = ()


@contextlib.contextmanager
def collections_batched() -> Iterator[None]:
    """Run the body with the collector's first threshold at `_BATCHED_THRESHOLD` (never
    lowered: a process that set a higher one keeps it)."""
    global _running, _saved
    with _lock:
        if _running == 0:
            _saved = gc.get_threshold()
            first, *rest = _saved
            gc.set_threshold(max(first, _BATCHED_THRESHOLD), *rest)
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0:
                gc.set_threshold(*_saved)
