"""`windowpack eval` writes the JSON, markdown and PNG report; bad options exit 2 naming them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from windowpack.cli import main
from windowpack.evals.report import budget_label, headline_table


def _run_main(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.argv", ["windowpack", *args])
    try:
        main()
        code = 0
    except SystemExit as exited:
        code = int(exited.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_eval_writes_report_and_plots(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "report"
    code, stdout, err = _run_main(
        monkeypatch,
        capsys,
        "eval",
        "niah",
        "mrcr",
        "--budgets",
        "1k,4k",
        "--lengths",
        "6k",
        "--depths",
        "0,100",
        "--systems",
        "windowpack,truncation",
        "--embedder",
        "hash",
        "--out",
        str(out),
    )
    assert code == 0, err
    report = json.loads((out / "results.json").read_text())
    assert report["command"].startswith("windowpack eval niah mrcr --budgets 1k,4k")
    assert [result["task"] for result in report["results"]] == ["niah", "mrcr"]
    markdown = (out / "results.md").read_text()
    assert "| niah (needle recall) | windowpack | 1.00 | 1.00 |" in markdown
    assert "| mrcr (MRCR score) | truncation |" in markdown
    for name in ("niah-heatmap-windowpack", "niah-heatmap-truncation", "mrcr-score-vs-budget"):
        assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| niah (needle recall) | windowpack |" in stdout


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["niah", "--budgets", "2k,lots"], "'budgets'"),
        (["niah", "--budgets", "2k", "--depths", "150"], "'depths'"),
        (["niah", "--budgets", "2k", "--systems", "windowpack,rag"], "'systems'"),
        (["sudoku", "--budgets", "2k"], "'tasks'"),
        (["ruler", "--budgets", "2k", "--ruler-lengths", "big"], "'ruler-lengths'"),
        (["niah", "--budgets", "2k", "--reader-url", "http://x"], "'reader-url'"),
    ],
)
def test_bad_options_exit_2_naming_the_option(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: list[str],
    named: str,
) -> None:
    code, _, err = _run_main(
        monkeypatch, capsys, "eval", *args, "--embedder", "hash", "--out", str(tmp_path / "o")
    )
    assert code == 2 and named in err and err.count("error:") == 1  # one message (rich wraps)
    assert not (tmp_path / "o").exists()  # nothing ran


def test_headline_table_has_a_row_per_task_and_system() -> None:
    summary = {
        "windowpack": {"2048": {"needle_recall": 1.0}},
        "bm25": {"2048": {"needle_recall": 0.5}},
    }
    result = {"task": "niah", "settings": {"budgets": [2048]}, "summary": summary}
    lines = headline_table([result]).splitlines()
    assert lines[0] == "| task (metric) | system | 2K |"
    assert lines[2:] == [
        "| niah (needle recall) | windowpack | 1.00 |",
        "| niah (needle recall) | bm25 | 0.50 |",
    ]


def test_budget_labels() -> None:
    assert [budget_label(n) for n in (2048, 131072, 1 << 20, 3000)] == ["2K", "128K", "1M", "3000"]


def test_importing_the_evals_stays_light() -> None:
    code = (
        "import sys, windowpack.evals; "
        "heavy = [m for m in ('matplotlib', 'llama_index', 'torch', 'faiss') if m in sys.modules]; "
        "print(heavy)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
