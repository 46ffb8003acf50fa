"""Small end-to-end evals: every system side by side on one store, exact budgets kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.evals import SYSTEMS, Haystack, MrcrEval, NiahEval, RulerEval
from windowpack.evals.contexts import fill_to_budget
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
            haystack=small_haystack,
            budgets=(4096,),
            lengths=(6000,),
            systems=systems,
            keep_collections=True,
        )
        mrcr = MrcrEval(
            haystack=small_haystack,
            budgets=(8192,),
            lengths=(6000,),
            systems=systems,
            shapes=("openai",),
            keep_collections=True,
        )
        ruler_result, mrcr_result = ruler(store), mrcr(store)
        assert len(store.collections()) == 4 + 3  # one collection per case, kept as asked
    # A budget holding the whole haystack holds every needle and the whole conversation.
    assert mrcr_result["summary"]["windowpack"]["8192"]["needle_recall"] == 1.0
    assert mrcr_result["summary"]["windowpack"]["8192"]["score"] == 1.0
    assert mrcr_result["summary"]["windowpack"]["8192"]["ordinal_complete"] == 1.0
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


@pytest.fixture(scope="module")
def sampled_mrcr(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """GDM-shaped MRCR, 2 and 4 needles at 16K tokens, 3 samples per cell, two systems."""
    from windowpack.evals import generated_haystack

    folder = tmp_path_factory.mktemp("mrcr") / "store"
    with wp.open(folder, config=StoreConfig(embedder="hash")) as store:
        evaluation = MrcrEval(
            haystack=generated_haystack(seed=3),
            budgets=(2048, 32768),
            lengths=(16_384,),
            needles=(2, 4),
            systems=("windowpack", "truncation"),
            samples=3,
            seed=5,
        )
        result = evaluation(store)
        result["collections_after"] = {
            name: len(store.collection(name).documents()) for name in store.collections()
        }
    return result


def test_samples_draw_seeded_cases_per_cell(sampled_mrcr: dict[str, Any]) -> None:
    rows = sampled_mrcr["rows"]
    assert len(rows) == 2 * 3 * 2 * 2  # cells x samples x systems x budgets
    assert sorted({row["seed"] for row in rows}) == [5, 6, 7]
    assert len({row["case"] for row in rows}) == 6
    assert set(sampled_mrcr["cells"]) == {"mrcr-gdm-2 · 16K", "mrcr-gdm-4 · 16K"}
    assert sampled_mrcr["settings"]["samples"] == 3
    # The cells of 2 and 4 needles share each seed's conversation: one ingest per seed.
    draws = sampled_mrcr["cases"]
    assert [draw["seed"] for draw in draws] == [5, 6, 7]
    assert [draw["cells"] for draw in draws] == [["mrcr-gdm-2 · 16K", "mrcr-gdm-4 · 16K"]] * 3
    assert {row["case"] for row in rows} == {name for draw in draws for name in draw["cases"]}


def test_every_cell_has_means_with_intervals(sampled_mrcr: dict[str, Any]) -> None:
    for cells in sampled_mrcr["cells"].values():
        figures = cells["windowpack"]["32768"]
        assert figures["cases"] == 3.0
        # The whole conversation fits in 32K: every case is ordinal-complete and graded 1.
        assert figures["ordinal_complete"] == 1.0 and figures["score"] == 1.0
        interval = figures["intervals"]["ordinal_complete"]
        assert interval["method"] == "wilson" and 0.4 < interval["low"] < 1.0 == interval["high"]
    pooled = sampled_mrcr["summary"]["truncation"]["2048"]
    assert pooled["cases"] == 6.0
    low, high = pooled["intervals"]["score"]["low"], pooled["intervals"]["score"]["high"]
    assert low <= pooled["score"] <= high


def test_cases_share_one_collection_left_empty_and_the_time_is_accounted(
    sampled_mrcr: dict[str, Any],
) -> None:
    assert sampled_mrcr["collections_after"] == {}  # the shared collection went at the end
    stages = set(sampled_mrcr["timing"])
    assert {"generate", "ingest", "delete", "prepare windowpack", "contexts truncation"} <= stages
    assert {"ingest: chunk", "ingest: summarize", "ingest: embed", "ingest: index"} <= stages
    ingest = sampled_mrcr["timing"]["ingest"]
    parts = [sampled_mrcr["timing"][s] for s in stages if s.startswith("ingest: ")]
    assert sum(parts) <= ingest and sampled_mrcr["timing"]["ingest: chunk"] > 0
    assert all(case["embedded"] >= 0 for case in sampled_mrcr["cases"])
    assert all(seconds >= 0 for seconds in sampled_mrcr["timing"].values())
    assert all("ingest" in case["seconds"] for case in sampled_mrcr["cases"])


def test_the_embedding_cache_outlives_a_deleted_case(
    tmp_path: Path, small_haystack: Haystack
) -> None:
    """A case ingested again after its collection was deleted embeds nothing."""
    from windowpack.evals.mrcr import mrcr_case

    case = mrcr_case(
        small_haystack, get_token_counter("o200k_base"), length=6000, needles=2, seed=0
    )
    with wp.open(tmp_path / "store", config=StoreConfig(embedder="hash")) as store:
        evaluation = MrcrEval(
            haystack=small_haystack,
            budgets=(1024,),
            lengths=(6000,),
            needles=(2,),
            shapes=("openai",),
            systems=("bm25",),
        )
        evaluation(store)
        assert "eval-mrcr-o200k_base" not in store.collections()  # deleted with its case
        report = store.collection("again").add(case.documents)
    assert report.chunks > 0 and report.embedded == 0


def test_a_leftover_of_an_interrupted_run_does_not_leak_into_cases(
    tmp_path: Path, small_haystack: Haystack
) -> None:
    with wp.open(tmp_path / "store", config=StoreConfig(embedder="hash")) as store:
        leftover = "One of the special magic numbers for amber-anchor-111 is: 4242."
        store.collection("eval-niah-o200k_base").add([wp.Document(text=leftover, id="stale")])
        evaluation = NiahEval(
            haystack=small_haystack,
            budgets=(16_384,),
            lengths=(4000,),
            depths=(0.5,),
            systems=("truncation",),
        )
        result = evaluation(store)
        assert "eval-niah-o200k_base" not in store.collections()  # the leftover went too
    # The whole case fits: truncation's context is exactly the case's passages, no more.
    from windowpack.evals import niah_case

    counter = get_token_counter("o200k_base")
    case = niah_case(small_haystack, counter, length=4000, depth=0.5, seed=0)
    expected = counter.count("\n\n".join(document.text for document in case.documents))
    assert result["rows"][0]["tokens"] == expected
    assert result["summary"]["truncation"]["16384"]["needle_recall"] == 1.0


@pytest.mark.model
@pytest.mark.shared
def test_real_model_gdm_mrcr_on_the_essays(tmp_path: Path, essay_haystack: Haystack) -> None:
    """The bundled model on a 16K-token v2-shaped conversation cut from the essays: every
    cell runs, and windowpack's 8K window holds every instance up to the asked one."""
    with wp.open(tmp_path / "store") as store:
        evaluation = MrcrEval(
            haystack=essay_haystack,
            budgets=(8192,),
            lengths=(16_384,),
            needles=(2, 4),
            systems=("windowpack", "bm25"),
        )
        result = evaluation(store)
    assert set(result["cells"]) == {"mrcr-gdm-2 · 16K", "mrcr-gdm-4 · 16K"}
    assert len(result["cases"]) == 1 and result["cases"][0]["embedded"] > 0
    windowpack = result["summary"]["windowpack"]["8192"]
    assert windowpack["ordinal_complete"] == 1.0 and windowpack["score"] > 0.99
    assert result["summary"]["bm25"]["8192"]["max_tokens"] <= 8192
