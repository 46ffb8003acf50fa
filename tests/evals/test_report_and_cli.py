"""`windowpack eval` writes the JSON, markdown and PNG report; bad options exit 2 naming them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli_main import run_main
from windowpack.evals.labels import budget_label
from windowpack.evals.report import headline_table


def test_eval_writes_report_and_plots(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "report"
    code, stdout, err = run_main(
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
        "--samples",
        "2",
        "--mrcr-lengths",
        "32k",
        "--mrcr-needles",
        "2",
        "--mrcr-shapes",
        "gdm,openai",
        "--embedder",
        "hash",
        "--out",
        str(out),
    )
    assert code == 0, err
    report = json.loads((out / "results.json").read_text())
    assert report["command"].startswith("windowpack eval niah mrcr --budgets 1k,4k")
    niah, mrcr = report["results"]
    assert (niah["task"], mrcr["task"]) == ("niah", "mrcr")
    assert {row["seed"] for row in niah["rows"]} == {0, 1}  # two samples per cell
    assert {row["task"] for row in mrcr["rows"]} == {"mrcr-gdm-2", "mrcr-openai-2"}
    assert len(mrcr["cases"]) == 4 and mrcr["settings"]["shapes"] == ["gdm", "openai"]
    markdown = (out / "results.md").read_text()
    # 4 of 4 cases (2 depths x 2 samples): Wilson's 95% interval is [0.51, 1.00].
    assert "| niah (needle recall) | windowpack | 1.00 [0.51, 1.00] | 1.00 [0.51, 1.00] |" in (
        markdown
    )
    assert "| mrcr (ordinal-complete) | truncation |" in markdown
    assert "| mrcr (MRCR score) | truncation |" in markdown
    assert "| mrcr-gdm-2 · 32K | windowpack | 2 |" in markdown  # the per-cell table
    assert "Where the time went" in markdown
    for name in (
        "niah-heatmap-windowpack",
        "niah-heatmap-truncation",
        "niah-needle-recall-vs-budget",
        "mrcr-score-vs-budget",
        "mrcr-ordinal-complete-vs-budget",
    ):
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
        (["niah", "--budgets", "2k", "--samples", "0"], "'samples'"),
        (["mrcr", "--budgets", "2k", "--mrcr-shapes", "gdm,anthropic"], "'mrcr-shapes'"),
        (["mrcr", "--budgets", "2k", "--mrcr-needles", "2,9"], "'mrcr-needles'"),
    ],
)
def test_bad_options_exit_2_naming_the_option(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: list[str],
    named: str,
) -> None:
    code, _, err = run_main(
        monkeypatch, capsys, "eval", *args, "--embedder", "hash", "--out", str(tmp_path / "o")
    )
    assert code == 2 and named in err and err.count("error:") == 1  # one message (rich wraps)
    assert not (tmp_path / "o").exists()  # nothing ran


def test_headline_table_has_a_row_per_task_metric_and_system() -> None:
    interval = {"needle_recall": {"low": 0.68, "high": 1.0, "method": "wilson"}}
    summary = {
        "windowpack": {"2048": {"needle_recall": 1.0, "intervals": interval}},
        "bm25": {"2048": {"needle_recall": 0.5}},
    }
    result = {"task": "niah", "settings": {"budgets": [2048]}, "summary": summary}
    lines = headline_table([result]).splitlines()
    assert lines[0] == "| task (metric) | system | 2K |"
    assert lines[2:] == [
        "| niah (needle recall) | windowpack | 1.00 [0.68, 1.00] |",
        "| niah (needle recall) | bm25 | 0.50 |",
    ]
    mrcr = {"task": "mrcr", "settings": {"budgets": [2048]}, "summary": {"bm25": {"2048": {}}}}
    assert headline_table([mrcr]).splitlines()[2:] == [
        "| mrcr (ordinal-complete) | bm25 | - |",
        "| mrcr (MRCR score) | bm25 | - |",
    ]


def test_the_llm_reader_column_appears_only_when_a_reader_ran() -> None:
    without = {"windowpack": {"2048": {"needle_recall": 1.0}}}
    result = {"task": "associative", "settings": {"budgets": [2048]}, "summary": without}
    assert "LLM score" not in headline_table([result])
    with_reader = {"windowpack": {"2048": {"needle_recall": 1.0, "llm_score": 0.5}}}
    lines = headline_table([{**result, "summary": with_reader}]).splitlines()
    assert lines[2:] == [
        "| associative (needle recall) | windowpack | 1.00 |",
        "| associative (LLM score) | windowpack | 0.50 |",
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


def test_timing_table_lists_ingest_parts_under_the_ingest_and_counts_them_once() -> None:
    from windowpack.evals.report import timing_table

    timing = {"ingest": 60.0, "ingest: embed": 40.0, "ingest: index": 15.0, "generate": 40.0}
    table = timing_table({"timing": timing, "cpu_timing": {"ingest": 30.0}})
    assert table.startswith("Where the time went (100 s in stages):")
    rows = [line.split(" | ")[0].lstrip("| ") for line in table.splitlines()[4:]]
    assert rows == ["ingest", "&nbsp;&nbsp;ingest: embed", "&nbsp;&nbsp;ingest: index", "generate"]
    assert "| ingest | 60.0 | 60.0% | 30.0 |" in table
    assert "| generate | 40.0 | 40.0% | - |" in table
