"""The docs eval end to end on a small synthetic manual: every system at every budget, the
rows, the pooled figures, the report, and `windowpack eval docs` (its default budgets,
its bad options)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from docs_corpus import write_corpus

import windowpack as wp
from cli_main import run_main
from windowpack.config import StoreConfig
from windowpack.evals import DocsEval, load_docs_set
from windowpack.evals.report import markdown_report

SYSTEMS = ("windowpack", "truncation", "bm25", "raptor")
BUDGETS = (150, 4000)  # the second holds the whole manual
SHARES = ("content_share", "summaries_share", "headers_share", "markers_share", "unused_share")


@pytest.fixture(scope="module")
def docs_result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("docs")
    corpus, pages, questions = write_corpus(root)
    docs = load_docs_set(corpus, questions, pages=pages, max_bytes=StoreConfig().max_file_bytes)
    with wp.open(root / "store", config=StoreConfig(embedder="hash", chunk_tokens=64)) as store:
        return DocsEval(docs=docs, budgets=BUDGETS, systems=SYSTEMS)(store)


def test_a_row_per_question_system_and_budget_within_budget(docs_result: dict[str, Any]) -> None:
    rows = docs_result["rows"]
    assert len(rows) == 4 * len(SYSTEMS) * len(BUDGETS)
    assert all(row["within_budget"] == 1.0 and row["tokens"] <= row["budget"] for row in rows)
    for row in rows:
        assert sum(row[share] for share in SHARES) == pytest.approx(1.0)
    truncation = [row for row in rows if row["system"] == "truncation"]
    assert all(
        row["content_share"] + row["unused_share"] == pytest.approx(1.0) for row in truncation
    )
    assert {row["page"] for row in rows} == {
        "guide/config.md",
        "ref/drop.html",
        None,
        "tutorial.txt",
    }


def test_recall_is_the_answer_in_the_window(docs_result: dict[str, Any]) -> None:
    rows = docs_result["rows"]
    absent = [row for row in rows if row["line"] == 4]
    assert absent and all(row["needle_recall"] == 0.0 for row in absent)
    whole = [row for row in rows if row["budget"] == 4000 and row["line"] != 4]
    assert all(row["needle_recall"] == 1.0 for row in whole if row["system"] != "raptor")
    # Truncation's 150 tokens are the start of the first page: its answer only.
    small = {
        r["line"]: r["needle_recall"]
        for r in rows
        if r["system"] == "truncation" and r["budget"] == 150
    }
    assert small == {1: 1.0, 2: 0.0, 3: 0.0, 4: 0.0}
    summary = docs_result["summary"]["windowpack"]["4000"]
    assert summary["needle_recall"] == 0.75 and summary["within_budget"] == 1.0
    assert 0.0 < summary["content_share"] < 1.0 and "content_share" in summary["intervals"]


def test_the_settings_name_the_corpus_and_the_unanswerable_questions(
    docs_result: dict[str, Any],
) -> None:
    settings = docs_result["settings"]
    assert settings["documents"] == 3 and settings["questions"] == 4
    assert settings["budgets"] == list(BUDGETS)
    assert [entry["line"] for entry in settings["unanswerable"]] == [4]
    assert settings["corpus"].endswith("manual") and settings["pages"].endswith("pages.txt")


def test_the_report_shows_recall_budget_and_the_windows_composition(
    docs_result: dict[str, Any],
) -> None:
    markdown = markdown_report([docs_result], command="windowpack eval docs")
    assert "| docs (window recall) | windowpack |" in markdown
    assert "| docs (within budget) | truncation | 1.00" in markdown
    assert "| system | budget | content | summaries | headers | markers | unused |" in markdown
    assert "What colour is the sky on the moon?" in markdown  # unanswerable, and missed


def test_eval_docs_runs_at_the_default_budgets(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    corpus, pages, questions = write_corpus(tmp_path)
    out = tmp_path / "report"
    code, stdout, err = run_main(
        monkeypatch,
        capsys,
        "eval",
        "docs",
        "--corpus",
        str(corpus),
        "--pages",
        str(pages),
        "--questions",
        str(questions),
        "--systems",
        "windowpack,truncation",
        "--embedder",
        "hash",
        "--out",
        str(out),
    )
    assert code == 0, err
    (result,) = json.loads((out / "results.json").read_text())["results"]
    assert result["task"] == "docs" and result["settings"]["budgets"] == [2000, 4000, 8000]
    assert "| docs (window recall) | windowpack |" in stdout


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["docs"], "'corpus'"),
        (["docs", "--corpus", "{corpus}"], "'questions'"),
        (["niah"], "'budgets'"),
        (["niah", "--budgets", "2k", "--corpus", "{corpus}"], "'corpus'"),
        (
            ["docs", "--corpus", "{corpus}", "--questions", "{corpus}/nothing.jsonl"],
            "nothing.jsonl",
        ),
    ],
)
def test_bad_docs_options_exit_2_naming_them(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    args: list[str],
    named: str,
) -> None:
    corpus, _, _ = write_corpus(tmp_path)
    given = [arg.replace("{corpus}", str(corpus)) for arg in args]
    code, _, err = run_main(
        monkeypatch, capsys, "eval", *given, "--embedder", "hash", "--out", str(tmp_path / "o")
    )
    assert code == 2 and named in err
    assert not (tmp_path / "o").exists()  # nothing ran
