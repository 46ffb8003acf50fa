"""The shipped example set, examples/pgdocs: 85 pages of PostgreSQL 15's HTML documentation
(Debian's postgresql-doc-15, read where the package installs it) and questions whose
answers must be in the parsed text of their page. Skipped, with a message, when the
package is not installed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.evals import DocsEval, answer_found, load_docs_set

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "pgdocs"
PG_HTML = Path("/usr/share/doc/postgresql-doc-15/html")


@pytest.fixture(scope="module")
def pg_html() -> Path:
    if not (PG_HTML / "sql-dropdatabase.html").is_file():
        pytest.skip(
            f"PostgreSQL 15's documentation is not at {PG_HTML} "
            "(apt-get install postgresql-doc-15): the pgdocs example is not checked"
        )
    return PG_HTML


def test_the_example_lists_85_pages_and_about_two_dozen_questions() -> None:
    pages = [line for line in (EXAMPLE / "pages.txt").read_text().splitlines() if line.strip()]
    assert len(pages) == len(set(pages)) == 85
    kinds = {page.split("-")[0] for page in pages}
    assert kinds == {"sql", "runtime", "tutorial"}
    lines = (EXAMPLE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line) for line in lines if line.strip()]
    assert 20 <= len(questions) <= 30
    assert all(question["page"] in pages for question in questions)
    for kind in ("sql-", "runtime-config-", "tutorial-"):
        assert sum(question["page"].startswith(kind) for question in questions) >= 5


def test_every_answer_is_in_the_parsed_text_of_its_page(pg_html: Path) -> None:
    docs = load_docs_set(
        pg_html,
        EXAMPLE / "questions.jsonl",
        pages=EXAMPLE / "pages.txt",
        max_bytes=StoreConfig().max_file_bytes,
    )
    assert len(docs.documents) == 85
    assert [(q.line, q.page, q.answer) for q in docs.unanswerable()] == []
    # And in no other page: finding it in a window means the window holds the right page.
    texts = {document.id: document.text for document in docs.documents}
    for question in docs.questions:
        holders = [page for page, text in texts.items() if answer_found(question.answer, text)]
        assert holders == [question.page], question.question


@pytest.mark.model
def test_the_eval_runs_on_a_few_pages_with_the_real_model(pg_html: Path, tmp_path: Path) -> None:
    chosen = ["sql-dropdatabase.html", "runtime-config-locks.html", "tutorial-arch.html"]
    pages = tmp_path / "pages.txt"
    pages.write_text("\n".join(chosen) + "\n", encoding="utf-8")
    questions = tmp_path / "questions.jsonl"
    kept = [
        line
        for line in (EXAMPLE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip() and json.loads(line)["page"] in chosen
    ]
    questions.write_text("\n".join(kept) + "\n", encoding="utf-8")
    docs = load_docs_set(pg_html, questions, pages=pages, max_bytes=StoreConfig().max_file_bytes)
    assert len(docs.questions) >= 3 and not docs.unanswerable()
    with wp.open(tmp_path / "store") as store:
        result: dict[str, Any] = DocsEval(
            docs=docs, budgets=(2000, 4000), systems=("windowpack", "truncation", "dos-rag")
        )(store)
    rows = result["rows"]
    assert len(rows) == len(docs.questions) * 3 * 2
    assert all(row["within_budget"] == 1.0 for row in rows)
    # Three short pages (~2K tokens): at 4K windowpack holds every answer, and in every
    # window content outweighs the headers and markers around it.
    assert result["summary"]["windowpack"]["4000"]["needle_recall"] == 1.0
    for row in rows:
        if row["system"] == "windowpack":
            assert row["content_share"] > row["headers_share"] + row["markers_share"]
