"""The associative, multi-hop and aggregation tasks: seeded, planting exactly what they
claim, graded by whether the facts a question needs are in the window."""

from __future__ import annotations

from pathlib import Path

import pytest

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.errors import InvalidArgumentError
from windowpack.evals import Haystack
from windowpack.evals.associative_set import ASSOCIATIVE_NEEDLES
from windowpack.evals.cases import Case
from windowpack.evals.fact_evals import AggregationEval, AssociativeEval, MultiHopEval
from windowpack.evals.facts import (
    aggregation_case,
    associative_case,
    associative_order,
    multihop_case,
)
from windowpack.evals.multihop_set import MULTIHOP_NEEDLES
from windowpack.evals.readers import DeterministicReader, score_reply
from windowpack.text.tokens import TokenCounter

LENGTH = 6000


def _text(case: Case) -> str:
    return " ".join(document.text for document in case.documents)


def _plants_each_once(case: Case) -> None:
    text = _text(case)
    assert [text.count(needle) for needle in case.needles] == [1] * len(case.needles)


def test_associative_plants_its_needle_once_and_control_shares_documents(
    small_haystack: Haystack, counter: TokenCounter
) -> None:
    case = associative_case(small_haystack, counter, length=LENGTH, seed=5)
    control = associative_case(small_haystack, counter, length=LENGTH, seed=5, control=True)
    _plants_each_once(case)
    item = associative_order()[5]
    assert case.needles == (item.needle,) and case.answers == (item.answer,)
    assert (case.question, control.question) == (item.question, item.control)
    assert control.documents == case.documents  # one ingest serves the pair
    assert LENGTH - 60 <= case.tokens <= LENGTH
    assert case == associative_case(small_haystack, counter, length=LENGTH, seed=5)


def test_associative_seeds_take_the_four_kinds_in_turn_and_every_item() -> None:
    order = associative_order()
    assert sorted(order, key=id) == sorted(ASSOCIATIVE_NEEDLES, key=id)
    for start in range(0, len(order), 4):
        assert len({needle.kind for needle in order[start : start + 4]}) == 4


def test_multihop_plants_both_facts_a_quarter_apart(
    small_haystack: Haystack, counter: TokenCounter
) -> None:
    for seed in range(6):
        case = multihop_case(small_haystack, counter, length=LENGTH, seed=seed)
        _plants_each_once(case)
        item = MULTIHOP_NEEDLES[seed]
        assert case.needles == (item.first, item.second) and case.answers == (item.answer,)
        first, second = case.params["depths"]
        assert abs(first - second) >= 0.25
        text = _text(case)
        apart = abs(text.index(item.first) - text.index(item.second)) / len(text)
        assert apart > 0.15  # sentence boundaries move a planted fact a little


def test_aggregation_spreads_distinct_facts_over_the_haystack(
    small_haystack: Haystack, counter: TokenCounter
) -> None:
    case = aggregation_case(small_haystack, counter, length=12_000, seed=2, facts=10)
    _plants_each_once(case)
    assert len(set(case.answers)) == 10
    firm = case.params["firm"]
    assert firm in case.question
    assert all(
        firm in needle and city in needle
        for needle, city in zip(case.needles, case.answers, strict=True)
    )
    text = _text(case)
    positions = [text.index(needle) / len(text) for needle in case.needles]
    assert positions == sorted(positions)  # one fact per slice, in slice order
    assert positions[0] < 0.1 and positions[-1] > 0.9
    with pytest.raises(InvalidArgumentError, match="aggregation-facts"):
        aggregation_case(small_haystack, counter, length=12_000, seed=2, facts=0)


def test_reader_answers_a_fact_only_when_all_its_sentences_are_in_the_window(
    small_haystack: Haystack, counter: TokenCounter
) -> None:
    reader = DeterministicReader()
    chain = multihop_case(small_haystack, counter, length=LENGTH, seed=0)
    one_fact = f"filler. {chain.needles[0]}  more filler."
    assert score_reply(chain, reader.answer(chain, one_fact)) == 0.0
    assert chain.needle_recall(one_fact) == 0.5
    both = f"{chain.needles[1]}\n\nfiller\n{chain.needles[0]}"
    assert score_reply(chain, reader.answer(chain, both)) == 1.0
    spread = aggregation_case(small_haystack, counter, length=12_000, seed=2, facts=4)
    half = " ".join(spread.needles[:2])
    assert score_reply(spread, reader.answer(spread, half)) == 0.5
    assert spread.needle_recall(half) == 0.5


def test_fact_evals_run_on_one_store(tmp_path: Path, small_haystack: Haystack) -> None:
    common = {
        "haystack": small_haystack,
        "budgets": (1024, 8192),
        "lengths": (LENGTH,),
        "systems": ("windowpack", "bm25"),
        "samples": 2,
    }
    with wp.open(tmp_path / "store", config=StoreConfig(embedder="hash")) as store:
        associative = AssociativeEval(**common)(store)
        multihop = MultiHopEval(**common)(store)
        aggregation = AggregationEval(**common, facts=6)(store)
    # Both variants of a seed ran on one ingest, and every cell has its samples.
    assert [draw["cells"] for draw in associative["cases"]] == [
        ["associative · 6,000", "control · 6,000"]
    ] * 2
    assert set(associative["cells"]) == {"associative · 6,000", "control · 6,000"}
    for result in (associative, multihop, aggregation):
        assert all(0 <= row["tokens"] <= row["budget"] for row in result["rows"])
        # BM25 may find no word of an associative question: an empty context is fair.
        # A budget over the whole haystack holds every fact, and the reader answers.
        top = result["summary"]["windowpack"]["8192"]
        assert top["needle_recall"] == 1.0 and top["score"] == 1.0
    assert aggregation["settings"]["facts"] == 6


def test_cli_runs_the_fact_tasks_with_their_own_lengths(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from windowpack.cli import main

    out = tmp_path / "report"
    args = "eval associative multihop aggregation --budgets 1k --lengths 4k --multihop-lengths 5k"
    args += " --aggregation-facts 3 --systems windowpack --embedder hash --out"
    monkeypatch.setattr("sys.argv", ["windowpack", *args.split(), str(out)])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code in (0, None)
    report = (out / "results.md").read_text(encoding="utf-8")
    assert "| associative (needle recall) | windowpack |" in report
    assert "| multihop (both facts) | windowpack |" in report
    assert "| aggregation (coverage) | windowpack |" in report
    assert "multihop · 5K" in report and "aggregation-3 · 4K" in report
    capsys.readouterr()


@pytest.mark.model
@pytest.mark.shared
def test_real_model_keeps_the_control_needle_and_bm25_misses_by_association(
    tmp_path: Path, essay_haystack: Haystack
) -> None:
    """The bundled model on 8K tokens of the real essays, one needle of each kind: asked in
    its own words, windowpack and BM25 hold every needle in 2K; asked by association, BM25
    (which sees no shared word) holds fewer."""
    with wp.open(tmp_path / "store") as store:
        result = AssociativeEval(
            haystack=essay_haystack,
            budgets=(2048,),
            lengths=(8192,),
            systems=("windowpack", "bm25"),
            samples=4,
        )(store)
    recall = {
        (cell, system): figures["2048"]["needle_recall"]
        for cell, systems in result["cells"].items()
        for system, figures in systems.items()
    }
    assert recall[("control · 8K", "windowpack")] == 1.0
    assert recall[("control · 8K", "bm25")] == 1.0
    assert recall[("associative · 8K", "bm25")] < 1.0
