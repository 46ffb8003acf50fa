"""The real-manual tables of docs/results/manuals: one `windowpack eval docs --manual` run per
manual, read back and set side by side.

    python benchmarks/manual_tables.py docs/results/manuals/*/

Prints, in Markdown: window recall per system at each budget for every manual (overall), the
same per question kind at the largest budget, and each system's monotonicity count (question
and budget pairs whose recall is lower than at a smaller budget).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench_common import add_smoke_option


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path, help="each manual's eval output")
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        with tempfile.TemporaryDirectory() as folder:
            made = Path(folder) / "smoke"
            made.mkdir()
            rows = [
                {"system": s, "case": f"docs-q{q}", "budget": b, "kind": k, "needle_recall": r}
                for s in ("windowpack", "bm25")
                for q, k in ((1, "lookup"), (2, "set"))
                for b, r in ((2000, 0.5), (8000, 1.0))
            ]
            (made / "results.json").write_text(
                json.dumps({"results": [{"task": "docs", "rows": rows}]})
            )
            tables([made])
        return
    tables(args.folders)


def tables(folders: list[Path]) -> None:
    runs = {folder.name: _rows(folder) for folder in folders}
    systems = list(dict.fromkeys(row["system"] for rows in runs.values() for row in rows))
    budgets = sorted({int(row["budget"]) for rows in runs.values() for row in rows})
    print("| manual | system | " + " | ".join(str(b) for b in budgets) + " |")
    print("|---|---|" + "---:|" * len(budgets))
    for name, rows in runs.items():
        for system in systems:
            cells = [_mean(rows, system=system, budget=b) for b in budgets]
            print(f"| {name} | {system} | " + " | ".join(cells) + " |")
    kinds = sorted({row.get("kind") or "lookup" for rows in runs.values() for row in rows})
    top = budgets[-1]
    print(f"\nWindow recall by question kind at {top}:\n")
    print("| manual | system | " + " | ".join(kinds) + " |")
    print("|---|---|" + "---:|" * len(kinds))
    for name, rows in runs.items():
        for system in systems:
            cells = [_mean(rows, system=system, budget=top, kind=k) for k in kinds]
            print(f"| {name} | {system} | " + " | ".join(cells) + " |")
    print("\nRecall lower at a larger budget (question, budget pairs):\n")
    for name, rows in runs.items():
        counts = _violations(rows)
        print(f"- {name}: " + ", ".join(f"{s} {counts.get(s, 0)}" for s in systems))


def _rows(folder: Path) -> list[dict[str, Any]]:
    result = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    tasks = result if isinstance(result, list) else result.get("results", [result])
    return [row for task in tasks for row in task["rows"] if task.get("task") == "docs"]


def _mean(rows: list[dict[str, Any]], **wanted: Any) -> str:
    values = [
        float(row["needle_recall"])
        for row in rows
        if all(
            (row.get(k) or "lookup") == v if k == "kind" else row[k] == v for k, v in wanted.items()
        )
    ]
    return f"{sum(values) / len(values):.2f}" if values else ""


def _matches(row: dict[str, Any], wanted: dict[str, Any]) -> bool:
    return all(
        (row.get(key) or "lookup") == value if key == "kind" else row[key] == value
        for key, value in wanted.items()
    )


def _violations(rows: list[dict[str, Any]]) -> dict[str, int]:
    by_case: dict[tuple[str, str], list[tuple[int, float]]] = defaultdict(list)
    for row in rows:
        by_case[(row["system"], row["case"])].append((int(row["budget"]), row["needle_recall"]))
    counts: dict[str, int] = defaultdict(int)
    for (system, _), cells in by_case.items():
        best = -1.0
        for _, recall in sorted(cells):
            counts[system] += recall < best
            best = max(best, recall)
    return counts


if __name__ == "__main__":
    main()
