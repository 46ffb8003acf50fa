"""A question's path imports no torch: `windowpack pack` and `windowpack search` over a store
built with the real model, each in a new process under `python -X importtime`.

The store is ingested by a process of its own, with a cache folder of the test's: the ONNX
query model that the question processes use is the one that ingest exported and checked,
and they trust it as it was recorded, without torch, transformers or sentence-transformers.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.model

CONSOLE_SCRIPT = "from windowpack.cli import main; main()"
TORCH = {"torch", "transformers", "sentence_transformers"}
# Nor anything else a question does not need: scipy and bm25s write BM25 segments, alembic
# migrates, FastAPI serves.
OTHER_HEAVY = {
    *("llama_index", "langchain", "ray", "pandas", "sklearn"),
    *("scipy", "bm25s", "alembic", "fastapi"),
}
QUESTION = "Which night do the harbour seals rest on the sandbanks?"


@pytest.fixture(scope="module")
def model_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    """A store ingested with the bundled model by `windowpack ingest`, and the environment
    (its own cache folder) its processes run in."""
    folder = tmp_path_factory.mktemp("model-store")
    notes = folder / "notes"
    notes.mkdir()
    (notes / "seals.md").write_text(
        "# Seals\n\nHarbour seals rest on the sandbanks on Tuesday nights at low tide.\n\n"
        "Grey seals prefer the rocky northern shore."
    )
    (notes / "owls.txt").write_text("Barn owls hunt voles in the meadow at night.")
    # More than the budgets below: a pack that has to choose embeds its question.
    log = [f"Day {day}: the tide gauge read {day * 7 % 31} cm; nets mended." for day in range(80)]
    (notes / "harbour-log.txt").write_text("\n\n".join(log))
    env = dict(os.environ, WINDOWPACK_CACHE_DIR=str(folder / "cache"))
    store = str(folder / "store")
    _windowpack(["ingest", str(notes), "--store", store], env)
    records = list((folder / "cache" / "query-models").glob("*[0-9a-f].json"))
    assert len(records) == 1  # ingest made the question model while its model was loaded
    return store, env


def _windowpack(args: list[str], env: dict[str, str], *options: str) -> tuple[str, str]:
    done = subprocess.run(
        [sys.executable, *options, "-c", CONSOLE_SCRIPT, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout, done.stderr


def _imported(importtime: str) -> set[str]:
    """The top-level packages of every module an `-X importtime` report lists."""
    return {
        line.split("|")[2].strip().split(".")[0]
        for line in importtime.splitlines()
        if line.startswith("import time:") and "[us]" not in line
    }


@pytest.mark.parametrize(
    "command",
    [["pack", QUESTION, "--budget", "300"], ["search", QUESTION, "-k", "2"]],
    ids=["pack", "search"],
)
def test_a_question_imports_no_torch(
    model_store: tuple[str, dict[str, str]], command: list[str]
) -> None:
    store, env = model_store
    out, importtime = _windowpack([*command, "--store", store], env, "-X", "importtime")
    assert "Tuesday nights" in out  # the question was answered, through the model's vectors
    imported = _imported(importtime)
    assert {"onnxruntime", "tokenizers"} <= imported  # the question went through ONNX Runtime
    assert imported & TORCH == set()
    assert imported & OTHER_HEAVY == set()


def test_many_questions_in_one_process_import_no_torch(
    model_store: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    store, env = model_store
    questions = tmp_path / "questions.txt"
    questions.write_text(f"{QUESTION}\nWho hunts voles in the meadow?\n")
    args = ["pack", "--questions", str(questions), "--budget", "200", "--store", store]
    out, importtime = _windowpack(args, env, "-X", "importtime")
    assert len(out.splitlines()) == 2 and "Barn owls" in out.splitlines()[1]
    imported = _imported(importtime)
    assert "onnxruntime" in imported and imported & TORCH == set()
