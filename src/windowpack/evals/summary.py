"""Per-case rows into per-cell figures: means with 95% intervals, tokens and latency.

A row is one (case, system, budget). `summarise` pools the cases of every cell of a task
per system and budget; `summarise_cells` keeps each cell (one point of the task's grid,
e.g. an MRCR length and needle count) apart. Both give, per group: the number of cases, the
mean of each quality metric and of each share of the budget (the docs eval's) with its
interval (`intervals[metric]`: low, high, method; see `evals.stats`), mean and largest
tokens used, median and p95 latency.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from windowpack.evals.stats import mean_interval

# Quality metrics, each in [0, 1]; a row has the ones its task defines.
QUALITY_METRICS = ("needle_recall", "score", "ordinal_complete", "llm_score", "within_budget")
# What a window is made of, as shares of the budget (the docs eval's `evals.composition`).
SHARE_METRICS = (
    "content_share",
    "summaries_share",
    "headers_share",
    "markers_share",
    "unused_share",
)

Summary = dict[str, dict[str, dict[str, Any]]]


def summarise(rows: Sequence[dict[str, Any]]) -> Summary:
    """Per system and budget, over every case: the figures of `cell_figures`."""
    groups = _grouped(rows, lambda row: (row["system"], row["budget"]))
    summary: Summary = {}
    for (system, budget), group in groups.items():
        summary.setdefault(system, {})[str(budget)] = cell_figures(group)
    return summary


def summarise_cells(rows: Sequence[dict[str, Any]]) -> dict[str, Summary]:
    """Per cell (`row["cell"]`), then per system and budget: the figures of `cell_figures`."""
    cells: dict[str, Summary] = {}
    groups = _grouped(rows, lambda row: (row["cell"], row["system"], row["budget"]))
    for (cell, system, budget), group in groups.items():
        cells.setdefault(cell, {}).setdefault(system, {})[str(budget)] = cell_figures(group)
    return cells


def cell_figures(group: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Cases, metric means with intervals, tokens and latency of one group of rows."""
    latencies = sorted(row["latency_ms"] for row in group)
    figures: dict[str, Any] = {"cases": float(len(group))}
    intervals: dict[str, dict[str, float | str]] = {}
    for metric in QUALITY_METRICS + SHARE_METRICS:
        values = [float(row[metric]) for row in group if row.get(metric) is not None]
        if values:
            interval = mean_interval(values)
            figures[metric] = interval.mean
            intervals[metric] = interval.as_dict()
    figures["intervals"] = intervals
    figures["tokens"] = statistics.fmean(row["tokens"] for row in group)
    figures["max_tokens"] = float(max(row["tokens"] for row in group))
    figures["latency_p50_ms"] = statistics.median(latencies)
    figures["latency_p95_ms"] = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
    return figures


def _grouped(
    rows: Sequence[dict[str, Any]], key: Callable[[dict[str, Any]], Hashable]
) -> dict[Any, list[dict[str, Any]]]:
    groups: dict[Any, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return groups
