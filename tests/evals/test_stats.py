"""Means and their 95% intervals: Wilson for 0/1 values, Student's t for other means."""

from __future__ import annotations

import math

import pytest

from windowpack.evals.stats import mean_interval


def test_eight_of_eight_passes_still_has_an_interval() -> None:
    interval = mean_interval([1.0] * 8)
    # Wilson: centre (p + z²/2n) / (1 + z²/n), half-width z·sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n).
    z, n = 1.959964, 8
    centre = (1 + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(z * z / (4 * n * n)) / (1 + z * z / n)
    assert interval.method == "wilson" and interval.mean == 1.0
    assert interval.low == pytest.approx(centre - half, abs=1e-4)  # 0.676
    assert interval.high == 1.0


def test_wilson_matches_the_formula_inside_the_range() -> None:
    interval = mean_interval([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0])
    z, n, p = 1.959964, 10, 0.7
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert interval.mean == pytest.approx(0.7)
    assert (interval.low, interval.high) == pytest.approx((centre - half, centre + half), abs=1e-4)


def test_other_means_get_a_t_interval_clipped_to_the_unit_range() -> None:
    interval = mean_interval([0.2, 0.4, 0.6])
    # mean 0.4, sd 0.2, se 0.2/sqrt(3); t(0.975, 2 df) = 4.302653.
    half = 4.302653 * 0.2 / math.sqrt(3)
    assert interval.method == "t"
    assert interval.mean == pytest.approx(0.4)
    assert interval.low == 0.0  # 0.4 - 0.497 clipped
    assert interval.high == pytest.approx(0.4 + half, abs=1e-5)
    narrow = mean_interval([0.90, 0.92, 0.94, 0.96])
    assert narrow.low < 0.93 < narrow.high and narrow.high < 1.0


def test_one_value_that_is_not_0_or_1_has_no_interval() -> None:
    interval = mean_interval([0.75])
    assert interval.method == "none" and interval.low == interval.high == 0.75


def test_no_values_is_an_error() -> None:
    with pytest.raises(ValueError):
        mean_interval([])
