"""The docs eval's part of the markdown report: what was measured on which corpus, recall and
budget per system, what the windows are made of, and the questions windowpack missed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from windowpack.evals.labels import budget_label
from windowpack.evals.summary import SHARE_METRICS

_SHOWN_MISSES = "windowpack"  # the system whose misses are listed question by question


def docs_section(result: Mapping[str, Any]) -> list[str]:
    """The settings line, the recall table, the composition table and the misses."""
    parts = [settings_line(result), "", recall_table(result), ""]
    if len({row.get("kind") for row in result["rows"]}) > 1:
        parts += ["Window recall by question kind:", "", kind_table(result), ""]
    parts += [monotonicity_line(result), ""]
    parts += ["What the windows are made of (mean share of the budget):", ""]
    parts += [composition_table(result)]
    misses = misses_list(result, _SHOWN_MISSES)
    if misses:
        parts += ["", f"Questions whose answer was not in {_SHOWN_MISSES}'s window:", "", misses]
    return parts


def settings_line(result: Mapping[str, Any]) -> str:
    settings = result["settings"]
    pages = f", the pages of `{settings['pages']}`" if settings.get("pages") else ""
    line = (
        f"Corpus `{settings['corpus']}`{pages}: {settings['documents']} documents, "
        f"{settings['haystack_tokens']:,} tokens; {settings['questions']} questions from "
        f"`{settings['questions_file']}`; tokenizer {settings['tokenizer']}; reader "
        f"{settings['reader']}. Window recall: the {settings['matching']}. Within budget: the "
        "window's text recounted is at most the budget."
    )
    unanswerable = settings.get("unanswerable", [])
    if unanswerable:
        named = "; ".join(f"line {q['line']} ({_pages(q)}): {_answers(q)}" for q in unanswerable)
        line += (
            f" {len(unanswerable)} answer(s) are not in the parsed text of their page, so no "
            f"window can hold them: {named}."
        )
    return line


def recall_table(result: Mapping[str, Any]) -> str:
    """Per system and budget: questions, window recall, within budget, tokens, latency."""
    lines = [
        "| system | budget | questions | window recall | within budget | "
        "tokens used (mean / max) | latency p50 / p95 ms |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for system, by_budget in result["summary"].items():
        for budget, cell in sorted(by_budget.items(), key=lambda item: int(item[0])):
            lines.append(
                f"| {system} | {budget_label(int(budget))} | {cell['cases']:.0f} | "
                f"{cell['needle_recall']:.2f} | {cell['within_budget']:.2f} | "
                f"{cell['tokens']:,.0f} / {cell['max_tokens']:,.0f} | "
                f"{cell['latency_p50_ms']:.1f} / {cell['latency_p95_ms']:.1f} |"
            )
    return "\n".join(lines)


def kind_table(result: Mapping[str, Any]) -> str:
    """Per system and question kind: the mean window recall at each budget."""
    recall: dict[tuple[str, str, int], list[float]] = {}
    for row in result["rows"]:
        key = (row["system"], row.get("kind") or "lookup", int(row["budget"]))
        recall.setdefault(key, []).append(float(row["needle_recall"]))
    budgets = sorted({budget for _, _, budget in recall})
    kinds = sorted({kind for _, kind, _ in recall})
    systems = list(dict.fromkeys(system for system, _, _ in recall))
    header = " | ".join(budget_label(budget) for budget in budgets)
    lines = [f"| kind | system | questions | {header} |", "|---|---|---:|" + "---:|" * len(budgets)]
    for kind in kinds:
        for system in systems:
            cells = [recall.get((system, kind, budget), []) for budget in budgets]
            if not any(cells):
                continue
            shown = " | ".join(f"{sum(c) / len(c):.2f}" if c else "" for c in cells)
            lines.append(f"| {kind} | {system} | {max(map(len, cells))} | {shown} |")
    return "\n".join(lines)


def monotonicity_violations(result: Mapping[str, Any]) -> dict[str, int]:
    """Per system: the (question, budget) pairs whose window recall is lower than at a
    smaller budget for the same question (design §4.6: none for windowpack)."""
    by_case: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for row in result["rows"]:
        key = (row["system"], row["case"])
        by_case.setdefault(key, []).append((int(row["budget"]), float(row["needle_recall"])))
    violations: dict[str, int] = {}
    for (system, _), cells in by_case.items():
        best = -1.0
        count = 0
        for _, recall in sorted(cells):
            count += recall < best
            best = max(best, recall)
        violations[system] = violations.get(system, 0) + count
    return violations


def monotonicity_line(result: Mapping[str, Any]) -> str:
    """The monotonicity count of each system, in one sentence."""
    counts = monotonicity_violations(result)
    shown = ", ".join(f"{system} {count}" for system, count in counts.items())
    return (
        f"Recall lower at a larger budget than at a smaller one (question, budget pairs): {shown}."
    )


def composition_table(result: Mapping[str, Any]) -> str:
    """Per system and budget: the mean share of the budget each part took."""
    names = [metric.removesuffix("_share") for metric in SHARE_METRICS]
    lines = [
        "| system | budget | " + " | ".join(names) + " |",
        "|---|---:|" + "---:|" * len(names),
    ]
    for system, by_budget in result["summary"].items():
        for budget, cell in sorted(by_budget.items(), key=lambda item: int(item[0])):
            shares = " | ".join(f"{cell.get(metric, 0.0):.1%}" for metric in SHARE_METRICS)
            lines.append(f"| {system} | {budget_label(int(budget))} | {shares} |")
    return "\n".join(lines)


def misses_list(result: Mapping[str, Any], system: str) -> str:
    """`system`'s rows without the answer, a line per question with its budgets."""
    questions = {case["case"]: case for case in _questions(result)}
    missed: dict[str, list[int]] = {}
    for row in result["rows"]:
        if row["system"] == system and row["needle_recall"] < 1.0:
            missed.setdefault(row["case"], []).append(int(row["budget"]))
    lines = []
    for name, budgets in missed.items():
        question = questions.get(name, {})
        where = _pages(question)
        shown = ", ".join(budget_label(budget) for budget in sorted(budgets))
        lines.append(
            f"- line {question.get('line', '?')} ({where}), at {shown}: "
            f"{question.get('question', name)} → {_answers(question)}"
        )
    return "\n".join(lines)


def _questions(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each case's question, answer, page and line (the result's `questions`)."""
    return list(result.get("questions", []))


def _pages(question: Mapping[str, Any]) -> str:
    pages = question.get("pages") or ([question["page"]] if question.get("page") else [])
    return ", ".join(pages) or "any page"


def _answers(question: Mapping[str, Any]) -> str:
    answers = question.get("answers") or [question.get("answer", "")]
    return " + ".join(repr(answer) for answer in answers)
