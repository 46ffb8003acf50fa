"""Python's cyclic garbage collector run in larger batches while packs and state loads run.

A window of B = 1M allocates hundreds of thousands of small objects (blocks, items, count
plans), and a state load at 100M tokens millions. With the default threshold (700 net
allocations) the collector ran ~100 times a pack, and every hundredth run traversed every
object the process tracks, the packing states and the cached windows among them: over a
10.9M-token collection, 10 full collections in 12 packs at B = 1M cost 1.4 s in all. Nearly
everything a pack allocates is freed by reference counting, so those runs found little.

While any pack or load runs, the first generation's threshold is raised to
`_BATCHED_THRESHOLD`: the collector still runs and frees what it would have freed, in
batches, and the process's own thresholds come back when the last one ends. The setting
is the process's: concurrent packs share one save and restore (`windowpack.shared_setting`), as
the query's torch threads do.
"""

from __future__ import annotations

import gc
from contextlib import AbstractContextManager

from windowpack.shared_setting import SharedSetting

_BATCHED_THRESHOLD = 100_000


def _batch() -> tuple[int, ...]:
    saved = gc.get_threshold()
    first, *rest = saved
    gc.set_threshold(max(first, _BATCHED_THRESHOLD), *rest)  # never lowered
    return saved


_THRESHOLDS = SharedSetting(_batch, lambda saved: gc.set_threshold(*saved))


def collections_batched() -> AbstractContextManager[None]:
    """Run the body with the collector's first threshold at `_BATCHED_THRESHOLD` (never
    lowered: a process that set a higher one keeps it)."""
    return _THRESHOLDS.held()
