"""Means with 95% intervals over the cases of a cell.

Which interval: a metric whose every value is 0 or 1 (a needle found or not, a window
ordinal-complete or not) is a proportion, and gets the Wilson score interval — unlike the
normal approximation it stays inside [0, 1] and keeps a width when all 8 of 8 cases pass
(0.68 to 1.00), which is when a small sample most needs one. Any other mean (the MRCR
grade, the share of four needles found) gets Student's t interval on n - 1 degrees of
freedom, clipped to [0, 1] since every metric here lies there; one case gives no interval.
scipy (a dependency of sentence-transformers already) computes both.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

CONFIDENCE = 0.95

Method = Literal["wilson", "t", "none"]


@dataclass(frozen=True, kw_only=True)
class Interval:
    """A mean and its 95% interval, `low <= mean <= high`, and how it was computed."""

    mean: float
    low: float
    high: float
    method: Method
    n: int

    def as_dict(self) -> dict[str, float | str]:
        return {"low": self.low, "high": self.high, "method": self.method}


def mean_interval(values: Sequence[float]) -> Interval:
    """The mean of `values` with a 95% interval: Wilson for 0/1 values, else t."""
    if not values:
        raise ValueError("no values to average")
    mean = statistics.fmean(values)
    n = len(values)
    if all(value in (0.0, 1.0) for value in values):
        return _wilson(round(sum(values)), n)
    if n < 2:
        return Interval(mean=mean, low=mean, high=mean, method="none", n=n)
    from scipy import stats

    error = statistics.stdev(values) / math.sqrt(n)
    half = float(stats.t.ppf((1 + CONFIDENCE) / 2, n - 1)) * error
    return Interval(
        mean=mean, low=max(0.0, mean - half), high=min(1.0, mean + half), method="t", n=n
    )


def _wilson(successes: int, n: int) -> Interval:
    from scipy import stats

    interval = stats.binomtest(successes, n).proportion_ci(CONFIDENCE, method="wilson")
    mean = successes / n
    # Clamp: the bounds are computed in floating point and may miss the mean by an ulp.
    low, high = min(mean, float(interval.low)), max(mean, float(interval.high))
    return Interval(mean=mean, low=low, high=high, method="wilson", n=n)
