"""Reports of eval results: a JSON file, a markdown report and PNG plots (`evals.plots`).

The JSON keeps everything: settings, one row per case x system x budget, the figures per
system and budget over all cases (`summary`) and per cell (`cells`), each case's seconds
per stage and the run's totals (`timing`). The markdown shows means with their 95%
intervals (`mean [low, high]`; Wilson for 0/1 metrics, t otherwise, see `evals.stats`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from windowpack.evals.docs_report import docs_section
from windowpack.evals.labels import budget_label, metric_label, shown_metrics
from windowpack.evals.timing import is_part

INTERVAL_NOTE = (
    "Cells: mean [95% interval] over the cases (Wilson score interval for 0/1 metrics such "
    "as needle recall of one needle and ordinal-complete; Student's t for other means)."
)


def write_report(results: Sequence[Mapping[str, Any]], out: Path, *, command: str) -> list[Path]:
    """Write `results.json`, `results.md` and the plots under `out`; return the paths."""
    from windowpack.evals.plots import plot_result

    out.mkdir(parents=True, exist_ok=True)
    report = {"command": command, "results": list(results)}
    paths = [out / "results.json", out / "results.md"]
    paths[0].write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    paths[1].write_text(markdown_report(results, command=command), encoding="utf-8")
    for result in results:
        paths += plot_result(result, out)
    return paths


def markdown_report(results: Sequence[Mapping[str, Any]], *, command: str) -> str:
    """The headline table, then per task its settings, the detail table (recall, score,
    tokens, latency), the headline metrics per cell (for the docs eval: what the windows
    are made of, and the questions missed) and where the run's time went."""
    parts = ["# Eval results", "", f"Command: `{command}`", "", INTERVAL_NOTE, ""]
    parts += [headline_table(results), ""]
    for result in results:
        parts += [f"## {result['task']}", ""]
        if result["task"] == "docs":  # a cell per question: its own tables instead
            parts += docs_section(result)
        else:
            parts += [_settings_line(result), "", detail_table(result)]
            for metric in shown_metrics(result):
                if "cells" in result:
                    label = metric_label(result["task"], metric)
                    parts += ["", f"{label} per cell:", "", cell_table(result, metric)]
        if "timing" in result:
            parts += ["", timing_table(result)]
        parts.append("")
    return "\n".join(parts)


def headline_table(results: Sequence[Mapping[str, Any]]) -> str:
    """One row per task, metric and system, one column per budget."""
    budgets = sorted({b for result in results for b in result["settings"]["budgets"]})
    lines = [
        "| task (metric) | system | " + " | ".join(budget_label(b) for b in budgets) + " |",
        "|---|---|" + "---:|" * len(budgets),
    ]
    for result in results:
        for metric in shown_metrics(result):
            label = f"{result['task']} ({metric_label(result['task'], metric)})"
            for system, cells in result["summary"].items():
                shown = [with_interval(cells.get(str(b), {}), metric) for b in budgets]
                lines.append(f"| {label} | {system} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


def with_interval(figures: Mapping[str, Any], metric: str) -> str:
    """`0.95 [0.80, 0.99]`; the mean alone without an interval; `-` without the metric."""
    if metric not in figures:
        return "-"
    interval = figures.get("intervals", {}).get(metric)
    if interval is None or interval["method"] == "none":
        return f"{figures[metric]:.2f}"
    return f"{figures[metric]:.2f} [{interval['low']:.2f}, {interval['high']:.2f}]"


def cell_table(result: Mapping[str, Any], metric: str) -> str:
    """One row per cell and system, one column per budget: `metric` with its interval."""
    budgets = result["settings"]["budgets"]
    lines = [
        "| cell | system | cases | " + " | ".join(budget_label(b) for b in budgets) + " |",
        "|---|---|---:|" + "---:|" * len(budgets),
    ]
    for cell, systems in result["cells"].items():
        for system, figures in systems.items():
            cases = max(int(figures[str(b)]["cases"]) for b in budgets if str(b) in figures)
            shown = [with_interval(figures.get(str(b), {}), metric) for b in budgets]
            lines.append(f"| {cell} | {system} | {cases} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


def detail_table(result: Mapping[str, Any]) -> str:
    """Per system and budget over all cases: the means, tokens used and latency."""
    cells = [cell for by_budget in result["summary"].values() for cell in by_budget.values()]
    order = ("needle_recall", "ordinal_complete", "score", "llm_score")
    metrics = [metric for metric in order if any(metric in cell for cell in cells)]
    labels = [metric_label(result["task"], metric) for metric in metrics]
    header = "| system | budget | cases | " + " | ".join(labels)
    header += " | tokens used (mean / max) | latency p50 / p95 ms |"
    lines = [header, "|---|---:|---:|" + "---:|" * len(metrics) + "---:|---:|"]
    for system, by_budget in result["summary"].items():
        for budget, cell in sorted(by_budget.items(), key=lambda item: int(item[0])):
            means = " | ".join(f"{cell[m]:.2f}" if m in cell else "-" for m in metrics)
            lines.append(
                f"| {system} | {budget_label(int(budget))} | {cell['cases']:.0f} | {means} | "
                f"{cell['tokens']:,.0f} / {cell['max_tokens']:,.0f} | "
                f"{cell['latency_p50_ms']:.1f} / {cell['latency_p95_ms']:.1f} |"
            )
    return "\n".join(lines)


def timing_table(result: Mapping[str, Any]) -> str:
    """Where the run's time went: wall seconds per stage, largest first, with their share,
    and the process's CPU seconds in it (below the wall time when the cores were shared)."""
    timing: Mapping[str, float] = result["timing"]
    cpu: Mapping[str, float] = result.get("cpu_timing", {})
    total = sum(seconds for stage, seconds in timing.items() if not is_part(stage)) or 1.0
    lines = ["| stage | seconds | share | CPU seconds |", "|---|---:|---:|---:|"]
    for stage in sorted(timing, key=lambda name: _stage_order(name, timing)):
        seconds = timing[stage]
        used = f"{cpu[stage]:,.1f}" if stage in cpu else "-"
        shown = f"&nbsp;&nbsp;{stage}" if is_part(stage) else stage
        lines.append(f"| {shown} | {seconds:,.1f} | {seconds / total:.1%} | {used} |")
    return f"Where the time went ({total:,.0f} s in stages):\n\n" + "\n".join(lines)


def _stage_order(stage: str, timing: Mapping[str, float]) -> tuple[float, int, float]:
    """Largest stage first, each ingest part right after the ingest, largest first."""
    if is_part(stage):
        return (-timing.get("ingest", 0.0), 1, -timing[stage])
    return (-timing[stage], 0, 0.0)


def _unread_note(result: Mapping[str, Any]) -> str:
    """How many windows the LLM reader could not read whole (its context is too small for
    them), per budget: they were answered "" and scored so."""
    rows = [row for row in result.get("rows", ()) if "llm_score" in row]
    unread = [row for row in rows if row.get("llm_unread")]
    if not unread:
        return ""
    budgets = sorted({int(row["budget"]) for row in unread})
    per_budget = ", ".join(
        f"{sum(int(row['budget']) == budget for row in unread)} of "
        f"{sum(int(row['budget']) == budget for row in rows)} at {budget_label(budget)}"
        for budget in budgets
    )
    return (
        f" (it could not read {len(unread)} of {len(rows)} windows, longer than its context "
        f'in its own tokens: {per_budget}; they were answered "" and scored so)'
    )


def _settings_line(result: Mapping[str, Any]) -> str:
    settings = result["settings"]
    lengths = ", ".join(f"{length:,}" for length in settings["lengths"])
    line = (
        f"Haystack `{settings['haystack']}` ({settings['haystack_tokens']:,} tokens); "
        f"lengths {lengths} tokens; tokenizer {settings['tokenizer']}; seed {settings['seed']}"
        f"; {settings.get('samples', 1)} sample(s) per cell; reader {settings['reader']}"
    )
    line += _unread_note(result)
    if "depths" in settings:
        line += "; depths " + ", ".join(f"{d * 100:.0f}%" for d in settings["depths"])
    if "shapes" in settings:
        line += "; shapes " + ", ".join(settings["shapes"])
        line += "; needles " + ", ".join(str(n) for n in settings["needles"])
    if "gdm" in settings.get("shapes", ()) and len(settings.get("needles", ())) > 1:
        line += (
            ". A GDM conversation of one length and seed serves every needle count (an asked "
            "key per count): a cell's cases are independent draws, the pooled figures hold "
            "one question per count of each conversation"
        )
    return line + "."
