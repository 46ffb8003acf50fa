"""PNG plots of eval results (matplotlib, the `evals` extra, Agg backend: files only).

matplotlib is imported when plotting, so `import windowpack.evals` stays light. Per task:
each headline metric against the budget, one panel per haystack length, a line per system
with its 95% interval as error bars (systems nudged apart on the x axis so that the bars
of systems that score alike stay visible); for NIAH also a depth x length heatmap of needle
recall per system, one panel per budget.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from windowpack.errors import MissingDependencyError
from windowpack.evals.labels import budget_label, metric_label, shown_metrics
from windowpack.evals.summary import summarise

_MAX_PANELS = 4  # more lengths than this are pooled into one panel
_NUDGE = 0.05  # log2 units between neighbouring systems at one budget


def plot_result(result: Mapping[str, Any], out: Path) -> list[Path]:
    """Every plot of one task's result, written under `out`."""
    paths = plot_niah_heatmaps(result, out) if result["task"] == "niah" else []
    return paths + [plot_metric_vs_budget(result, metric, out) for metric in _metrics(result)]


def _metrics(result: Mapping[str, Any]) -> list[str]:
    cells = [cell for by_budget in result["summary"].values() for cell in by_budget.values()]
    present = {metric for cell in cells for metric in cell}
    return [metric for metric in shown_metrics(result) if metric in present]


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as error:
        raise MissingDependencyError("matplotlib", "evals") from error
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_metric_vs_budget(result: Mapping[str, Any], metric: str, out: Path) -> Path:
    """`metric` against the budget (log scale), a panel per length, a line per system."""
    plt = _pyplot()
    budgets = result["settings"]["budgets"]
    panels = _length_panels(result["rows"])
    figure, axes = plt.subplots(
        1, len(panels), figsize=(4.2 * len(panels) + 1.6, 3.8), sharey=True, squeeze=False
    )
    systems = list(result["summary"])
    for axis, (title, rows) in zip(axes[0], panels, strict=True):
        summary = summarise(rows)
        for number, system in enumerate(systems):
            cells = summary.get(system, {})
            series = _Series(system=system, cells=cells, number=number, of=len(systems))
            _draw_system(axis, series, budgets, metric)
        axis.set_xscale("log", base=2)
        axis.set_xticks(budgets, [budget_label(b) for b in budgets])
        axis.set_ylim(-0.03, 1.03)
        axis.set_xlabel("budget (tokens)")
        axis.set_title(title, fontsize=10)
        axis.grid(alpha=0.3)
    axes[0][0].set_ylabel(metric_label(result["task"], metric))
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="center right", fontsize=8)
    figure.suptitle(
        f"{result['task']}: {metric_label(result['task'], metric)} vs budget (95% intervals)"
    )
    figure.tight_layout(rect=(0.0, 0.0, 1.0 - 1.4 / figure.get_figwidth(), 1.0))
    name = "score" if metric == "score" else metric.replace("_", "-")
    path = out / f"{result['task']}-{name}-vs-budget.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def _length_panels(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[Any]]]:
    lengths = sorted({row["length"] for row in rows})
    if len(lengths) > _MAX_PANELS:
        return [("all lengths", list(rows))]
    return [
        (f"{_approx(length)} tokens", [row for row in rows if row["length"] == length])
        for length in lengths
    ]


@dataclass(frozen=True, kw_only=True)
class _Series:
    """One system's line in one panel: its figures per budget and its place among lines."""

    system: str
    cells: Mapping[str, Any]
    number: int
    of: int


def _draw_system(axis: Any, series: _Series, budgets: Sequence[int], metric: str) -> None:
    shown = [b for b in budgets if metric in series.cells.get(str(b), {})]
    if not shown:
        return
    means = [series.cells[str(b)][metric] for b in shown]
    lows, highs = [], []
    for budget, mean in zip(shown, means, strict=True):
        interval = series.cells[str(budget)]["intervals"].get(metric)
        lows.append(mean - interval["low"] if interval else 0.0)
        highs.append(interval["high"] - mean if interval else 0.0)
    nudge = 2 ** ((series.number - (series.of - 1) / 2) * _NUDGE)
    axis.errorbar(
        [b * nudge for b in shown],
        means,
        yerr=[lows, highs],
        label=series.system,
        linestyle=("-", "--", ":", "-.")[series.number % 4],
        marker="osD^v"[series.number % 5],
        markersize=4,
        capsize=2,
        alpha=0.85,
    )


def plot_niah_heatmaps(result: Mapping[str, Any], out: Path) -> list[Path]:
    """Per system: needle recall over depth (rows) x length (columns), a panel per budget."""
    plt = _pyplot()
    budgets = result["settings"]["budgets"]
    lengths = sorted({row["length"] for row in result["rows"]})
    depths = sorted({row["depth"] for row in result["rows"]})
    paths = []
    for system in result["summary"]:
        columns = 2 if len(budgets) == 4 else min(3, len(budgets))
        rows = -(-len(budgets) // columns)
        figure, grid_axes = plt.subplots(
            rows,
            columns,
            figsize=(columns * (0.7 * len(lengths) + 1.3) + 1.2, rows * (0.32 * len(depths) + 1.1)),
            sharey=True,
            constrained_layout=True,
            squeeze=False,
        )
        axes = [axis for row in grid_axes for axis in row]
        for unused in axes[len(budgets) :]:
            unused.set_visible(False)
        axes = axes[: len(budgets)]
        for axis, budget in zip(axes, budgets, strict=True):
            grid = _recall_grid(result["rows"], system, budget, lengths, depths)
            image = axis.imshow(grid, vmin=0.0, vmax=1.0, cmap="RdYlGn", aspect="auto")
            for line, values in enumerate(grid):
                for column, value in enumerate(values):
                    axis.text(column, line, f"{value:.2g}", ha="center", va="center", fontsize=8)
            axis.set_title(f"budget {budget_label(budget)}", fontsize=9)
            axis.set_xticks(range(len(lengths)), [_approx(n) for n in lengths])
            axis.set_yticks(range(len(depths)), [f"{d * 100:.0f}%" for d in depths])
            axis.tick_params(labelsize=7)
            axis.set_xlabel("haystack tokens", fontsize=8)
        for axis in axes[::columns]:
            axis.set_ylabel("needle depth", fontsize=8)
        figure.colorbar(image, ax=axes, shrink=0.9, label="needle recall (mean over samples)")
        figure.suptitle(f"NIAH needle recall: {system}", fontsize=11)
        path = out / f"niah-heatmap-{system}.png"
        figure.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(figure)
        paths.append(path)
    return paths


def _recall_grid(
    rows: Sequence[Mapping[str, Any]],
    system: str,
    budget: int,
    lengths: Sequence[int],
    depths: Sequence[float],
) -> list[list[float]]:
    """Mean needle recall per (depth, length) over the samples of that cell."""
    cells: dict[tuple[float, int], list[float]] = {}
    for row in rows:
        if row["system"] == system and row["budget"] == budget:
            cells.setdefault((row["depth"], row["length"]), []).append(row["needle_recall"])
    return [[_mean(cells.get((depth, length), [])) for length in lengths] for depth in depths]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _approx(tokens: int) -> str:
    """A length for an axis: 8192 → "8K", 679937 → "664K"."""
    return f"{tokens / (1 << 20):.1f}M" if tokens >= 1 << 20 else f"{round(tokens / 1024)}K"
