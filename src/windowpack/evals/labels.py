"""What the eval report's tables and plots call things: budgets, metrics, each task's headline.

Both `evals.report` (the markdown) and `evals.plots` (the PNGs) label with these, so a
metric is named alike in a table and in a plot.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from windowpack.evals.options import size_label

# The metrics each task is judged by: recall of the needles; for MRCR whether the window
# holds every instance up to the asked one, and the MRCR grade of the reader's reply; for
# real documents the answer in the window, and the window never over its budget.
HEADLINE_METRICS = {
    "niah": ("needle_recall",),
    "ruler": ("needle_recall",),
    "mrcr": ("ordinal_complete", "score"),
    "associative": ("needle_recall",),
    "multihop": ("needle_recall", "score"),
    "aggregation": ("needle_recall",),
    "loft": ("needle_recall",),
    "openai-mrcr": ("ordinal_complete", "score"),
    "gdm-mrcr": ("ordinal_complete", "score"),
    "docs": ("needle_recall", "within_budget"),
}
METRIC_LABEL = {
    "needle_recall": "needle recall",
    "score": "MRCR score",
    "ordinal_complete": "ordinal-complete",
    "llm_score": "LLM score",
    "within_budget": "within budget",
}
# What a metric means in a task where it is not the generic one above.
TASK_METRIC_LABEL = {
    ("associative", "score"): "reader score",
    ("multihop", "needle_recall"): "share of the 2 facts",
    ("multihop", "score"): "both facts",
    ("aggregation", "needle_recall"): "coverage",
    ("aggregation", "score"): "reader score",
    ("loft", "needle_recall"): "gold passage recall",
    ("loft", "score"): "reader score",
    ("docs", "needle_recall"): "window recall",
}


def budget_label(tokens: int) -> str:
    """2048 → "2K", 1048576 → "1M", 3000 → "3000"."""
    return size_label(tokens).replace(",", "")


def metric_label(task: str, metric: str) -> str:
    """What `metric` is called in `task`'s tables and plots."""
    return TASK_METRIC_LABEL.get((task, metric), METRIC_LABEL[metric])


def headline_metrics(task: str) -> tuple[str, ...]:
    """The metrics `task` is judged by (`score` for a task not listed)."""
    return HEADLINE_METRICS.get(task, ("score",))


def shown_metrics(result: Mapping[str, Any]) -> tuple[str, ...]:
    """The task's headline metrics, and the LLM reader's score where a run had a reader
    (`--reader-url`): its column appears only then."""
    cells = [cell for by_budget in result["summary"].values() for cell in by_budget.values()]
    llm = ("llm_score",) if any("llm_score" in cell for cell in cells) else ()
    return headline_metrics(result["task"]) + llm
