"""The ranking seam: the `Reranker` protocol, the bounds a pack puts on it, and the bounded run.

A reranker re-scores passages that a first stage (BM25 and vectors, fused) already ranked.
It is slower per passage than that first stage, so it only ever sees the best `depth`
candidates, a few at a time, and is not started on another batch once the pack's time budget
is spent: a slow reranker costs ranking quality on the passages it did not reach, never
the pack's latency beyond one batch.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from windowpack.errors import InvalidArgumentError

Scores = npt.NDArray[np.float64]

BATCH_SIZE = 4
"""Passages scored per call of `Reranker.scores`: small enough that the batch that crosses the
budget overruns it by little, large enough to amortise one embedding call."""


class Reranker(Protocol):
    """Scores passages for a query: one relevance per passage, higher is better.

    The scale is the reranker's own; callers compare a reranker's scores only with each other.
    """

    @property
    def name(self) -> str:
        """A short name for logs and timings (the factory's spec, for the built-in ones)."""
        ...

    def scores(self, query: str, passages: Sequence[str]) -> Scores:
        """One float64 score per passage, in the passages' order."""
        ...


@dataclass(frozen=True, kw_only=True)
class RerankBounds:
    """How much reranking one pack may do.

    - `depth`: how many of the first stage's best candidates are re-scored (0: none).
    - `time_ms`: the pack's budget for reranking, in milliseconds; no batch is started once
      it is spent (the batch running when it runs out finishes).
    """

    depth: int = 16
    time_ms: float = 50.0

    def __post_init__(self) -> None:
        depth = self.depth
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 0:
            raise InvalidArgumentError("rerank_depth", f"must be zero or more, got {depth!r}")
        budget = self.time_ms
        # `not > 0` rather than `<= 0`: NaN is no budget either.
        if isinstance(budget, bool) or not isinstance(budget, int | float) or not budget > 0:
            raise InvalidArgumentError(
                "rerank_time_ms", f"must be a positive number, got {budget!r}"
            )


def rerank_bounded(
    reranker: Reranker,
    query: str,
    passages: Sequence[str],
    bounds: RerankBounds,
    *,
    clock: Callable[[], float] = time.perf_counter,
    batch_size: int = BATCH_SIZE,
) -> Scores | None:
    """The reranker's scores for the first `bounds.depth` passages, within `bounds.time_ms`.

    `passages` come best first (the first stage's order): the depth and the time budget cut
    from the end. Batches of `batch_size` passages are scored in order; after each, `clock`
    (seconds) is read, and no further batch starts once more than `time_ms` has passed since
    the first began. The result has one entry per passage, NaN where the passage was not
    scored; None when nothing was (a depth of 0, or no passages).
    """
    if batch_size < 1:
        raise InvalidArgumentError("batch_size", f"must be at least 1, got {batch_size!r}")
    count = min(bounds.depth, len(passages))
    if count == 0:
        return None
    result: Scores = np.full(len(passages), np.nan, dtype=np.float64)
    budget = bounds.time_ms / 1000.0
    started = clock()
    for first in range(0, count, batch_size):
        batch = passages[first : min(first + batch_size, count)]
        found = np.asarray(reranker.scores(query, batch), dtype=np.float64).reshape(-1)
        if len(found) != len(batch):
            raise InvalidArgumentError(
                "reranker",
                f"{reranker.name!r} gave {len(found)} scores for {len(batch)} passages",
            )
        result[first : first + len(batch)] = found
        if clock() - started > budget:
            break
    return result
