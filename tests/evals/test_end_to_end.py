"""Small end-to-end evals: every system side by side on one store, exact budgets kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.evals import SYSTEMS, Haystack, MrcrEval, NiahEval, RulerEval
from windowpack.evals.systems import fill_to_budget
from windowpack.text.tokens import get_token_counter

BUDGETS = (1024, 4096)


@pytest.fixture(scope="module")
def niah_result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """NIAH on an 8K-token generated haystack at three depths, two budgets, all systems."""
    from windowpack.evals import generated_haystack

    haystack = generated_haystack(seed=7, chars=60_000)
    folder = tmp_path_factory.mktemp("niah") / "store"
    with wp.open(folder, config=StoreConfig(embedder="hash")) as store:
        evaluation = NiahEval(
            haystack=haystack, budgets=BUDGETS, lengths=(8192,), depths=(0.0, 0.5, 1.0)
        )
        return evaluation(store)


def test_windowpack_recall_is_one_where_the_needle_fits(niah_result: dict[str, Any]) -> None:
    summary = niah_result["summary"]
    for budget in BUDGETS:
        assert summary["windowpack"][str(budget)]["needle_recall"] == 1.0
        assert summary["windowpack"][str(budget)]["score"] == 1.0


def test_every_system_ran_every_cell_within_budget(niah_result: dict[str, Any]) -> None:
    rows = niah_result["rows"]
    assert {row["system"] for row in rows} == set(SYSTEMS)
    assert len(rows) == 3 * len(SYSTEMS) * len(BUDGETS)
    counter = get_token_counter("o200k_base")
    assert all(0 < row["tokens"] <= row["budget"] for row in rows)
    assert all(row["latency_ms"] > 0 for row in rows)
    assert counter.name == niah_result["settings"]["tokenizer"]


def test_truncation_finds_only_the_needle_at_the_start(niah_result: dict[str, Any]) -> None:
    rows = [r for r in niah_result["rows"] if r["system"] == "truncation" and r["budget"] == 1024]
    assert {row["depth"]: row["needle_recall"] for row in rows} == {0.0: 1.0, 0.5: 0.0, 1.0: 0.0}


def test_ruler_and_mrcr_run_on_one_store(tmp_path: Path, small_haystack: Haystack) -> None:
    with wp.open(tmp_path / "store", config=StoreConfig(embedder="hash")) as store:
        systems = ("windowpack", "bm25")
        ruler = RulerEval(
            haystack=small_haystack, budgets=(4096,), lengths=(6000,), systems=systems
        )
        mrcr = MrcrEval(haystack=small_haystack, budgets=(8192,), lengths=(6000,), systems=systems)
        ruler_result, mrcr_result = ruler(store), mrcr(store)
        assert len(store.collections()) == 4 + 3  # one collection per case
    # A budget holding the whole haystack holds every needle and the whole conversation.
    assert mrcr_result["summary"]["windowpack"]["8192"]["needle_recall"] == 1.0
    assert mrcr_result["summary"]["windowpack"]["8192"]["score"] == 1.0
    assert ruler_result["summary"]["windowpack"]["4096"]["needle_recall"] > 0.5
    assert {row["task"] for row in ruler_result["rows"]} == {
        "multikey-number",
        "multikey-uuid",
        "multivalue",
        "multiquery",
    }


def test_fill_to_budget_takes_best_first_and_restores_order() -> None:
    texts = ["zero", "one", "two", "three"]
    text = fill_to_budget([2, 0, 3, 1], texts, [5, 5, 5, 5], separator=1, budget=11)
    assert text == "zero\n\ntwo"  # 5 + 1 + 5 = 11; the third would overflow


@pytest.mark.model
@pytest.mark.shared
def test_real_model_on_the_essays_finds_every_needle(
    tmp_path: Path, essay_haystack: Haystack
) -> None:
    """The bundled model on 8K tokens of the real essays: windowpack misses no needle."""
    with wp.open(tmp_path / "store") as store:
        evaluation = NiahEval(
            haystack=essay_haystack,
            budgets=(2048, 8192),
            lengths=(8192,),
            depths=(0.5, 0.9),
            systems=("windowpack", "truncation"),
        )
        result = evaluation(store)
    for budget in ("2048", "8192"):
        assert result["summary"]["windowpack"][budget]["needle_recall"] == 1.0
    # Both needles lie past the first 2K tokens; at 8K the whole haystack fits.
    assert result["summary"]["truncation"]["2048"]["needle_recall"] == 0.0
    assert result["summary"]["truncation"]["8192"]["needle_recall"] == 1.0
