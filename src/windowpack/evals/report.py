"""Reports of eval results: a JSON file, a markdown table and PNG plots.

Plots use matplotlib with the Agg backend (files only, no display), imported when plotting
so `import windowpack.evals` stays light: a NIAH depth x length heatmap per system (one
panel per budget) and the score against the budget per task, a line per system.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from windowpack.errors import MissingDependencyError

# The metric each task is judged by: recall of the needles, or the MRCR grade of the reply.
HEADLINE_METRIC = {"niah": "needle_recall", "ruler": "needle_recall", "mrcr": "score"}
METRIC_LABEL = {"needle_recall": "needle recall", "score": "MRCR score"}


def budget_label(tokens: int) -> str:
    """2048 → "2K", 1048576 → "1M", 3000 → "3000"."""
    for unit, size in (("M", 1 << 20), ("K", 1 << 10)):
        if tokens % size == 0:
            return f"{tokens // size}{unit}"
    return str(tokens)


def write_report(results: Sequence[Mapping[str, Any]], out: Path, *, command: str) -> list[Path]:
    """Write `results.json`, `results.md` and the plots under `out`; return the paths."""
    out.mkdir(parents=True, exist_ok=True)
    report = {"command": command, "results": list(results)}
    paths = [out / "results.json", out / "results.md"]
    paths[0].write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    paths[1].write_text(markdown_report(results, command=command), encoding="utf-8")
    for result in results:
        if result["task"] == "niah":
            paths += plot_niah_heatmaps(result, out)
        paths.append(plot_score_vs_budget(result, out))
    return paths


def markdown_report(results: Sequence[Mapping[str, Any]], *, command: str) -> str:
    """The headline table, then per task the detail table (recall, score, tokens, latency)."""
    parts = ["# Eval results", "", f"Command: `{command}`", "", headline_table(results), ""]
    for result in results:
        parts += [f"## {result['task']}", "", _settings_line(result), "", detail_table(result), ""]
    return "\n".join(parts)


def headline_table(results: Sequence[Mapping[str, Any]]) -> str:
    """One row per task and system, one column per budget: the task's headline metric."""
    budgets = sorted({b for result in results for b in result["settings"]["budgets"]})
    lines = [
        "| task (metric) | system | " + " | ".join(budget_label(b) for b in budgets) + " |",
        "|---|---|" + "---:|" * len(budgets),
    ]
    for result in results:
        metric = HEADLINE_METRIC[result["task"]]
        label = f"{result['task']} ({METRIC_LABEL[metric]})"
        for system, cells in result["summary"].items():
            values = [cells.get(str(b), {}).get(metric) for b in budgets]
            shown = ["-" if v is None else f"{v:.2f}" for v in values]
            lines.append(f"| {label} | {system} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


def detail_table(result: Mapping[str, Any]) -> str:
    has_llm = any("llm_score" in cell for c in result["summary"].values() for cell in c.values())
    header = "| system | budget | cases | needle recall | reader score | "
    header += "LLM score | " if has_llm else ""
    header += "tokens used (mean / max) | latency p50 / p95 ms |"
    lines = [header, "|---|---:|---:|---:|---:|" + ("---:|" if has_llm else "") + "---:|---:|"]
    for system, cells in result["summary"].items():
        for budget, cell in sorted(cells.items(), key=lambda item: int(item[0])):
            llm = f" {cell.get('llm_score', 0.0):.2f} |" if has_llm else ""
            lines.append(
                f"| {system} | {budget_label(int(budget))} | {cell['cases']:.0f} | "
                f"{cell['needle_recall']:.2f} | {cell['score']:.2f} |{llm} "
                f"{cell['tokens']:,.0f} / {cell['max_tokens']:,.0f} | "
                f"{cell['latency_p50_ms']:.1f} / {cell['latency_p95_ms']:.1f} |"
            )
    return "\n".join(lines)


def _settings_line(result: Mapping[str, Any]) -> str:
    settings = result["settings"]
    lengths = ", ".join(f"{length:,}" for length in settings["lengths"])
    line = (
        f"Haystack `{settings['haystack']}` ({settings['haystack_tokens']:,} tokens); "
        f"lengths {lengths} tokens; tokenizer {settings['tokenizer']}; seed {settings['seed']}; "
        f"reader {settings['reader']}"
    )
    if "depths" in settings:
        line += "; depths " + ", ".join(f"{d * 100:.0f}%" for d in settings["depths"])
    return line + "."


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as error:
        raise MissingDependencyError("matplotlib", "evals") from error
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


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
            axis.set_xticks(range(len(lengths)), [budget_label_approx(n) for n in lengths])
            axis.set_yticks(range(len(depths)), [f"{d * 100:.0f}%" for d in depths])
            axis.tick_params(labelsize=7)
            axis.set_xlabel("haystack tokens", fontsize=8)
        for axis in axes[::columns]:
            axis.set_ylabel("needle depth", fontsize=8)
        figure.colorbar(image, ax=axes, shrink=0.9, label="needle recall")
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
    cells = {
        (row["depth"], row["length"]): row["needle_recall"]
        for row in rows
        if row["system"] == system and row["budget"] == budget
    }
    return [[cells.get((d, n), float("nan")) for n in lengths] for d in depths]


def budget_label_approx(tokens: int) -> str:
    """A length for an axis: 8192 → "8K", 679937 → "664K"."""
    return f"{tokens / (1 << 20):.1f}M" if tokens >= 1 << 20 else f"{round(tokens / 1024)}K"


def plot_score_vs_budget(result: Mapping[str, Any], out: Path) -> Path:
    """The task's headline metric against the budget (log scale), a line per system."""
    plt = _pyplot()
    metric = HEADLINE_METRIC[result["task"]]
    budgets = result["settings"]["budgets"]
    figure, axis = plt.subplots(figsize=(6.4, 4.0))
    for number, (system, cells) in enumerate(result["summary"].items()):
        values = [cells[str(b)][metric] for b in budgets]
        # Styles differ per line: systems that score alike (dense and llama-index rank the
        # same vectors) would otherwise hide one another.
        style = ("-", "--", ":", "-.")[number % 4]
        marker = "osD^v"[number % 5]
        axis.plot(budgets, values, linestyle=style, marker=marker, label=system, alpha=0.85)
    axis.set_xscale("log", base=2)
    axis.set_xticks(budgets, [budget_label(b) for b in budgets])
    axis.set_ylim(-0.03, 1.03)
    axis.set_xlabel("budget (tokens)")
    axis.set_ylabel(METRIC_LABEL[metric])
    axis.set_title(f"{result['task']}: {METRIC_LABEL[metric]} vs budget")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=8)
    path = out / f"{result['task']}-score-vs-budget.png"
    figure.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(figure)
    return path
