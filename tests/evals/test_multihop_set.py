"""The multi-hop set: the second fact is reachable only through the first one's bridge."""

from __future__ import annotations

import pytest

from windowpack.evals.multihop_set import MULTIHOP_NEEDLES, MultiHopNeedle
from windowpack.pack.repeats import content_terms


@pytest.mark.parametrize("item", MULTIHOP_NEEDLES, ids=lambda item: item.answer)
def test_the_question_reaches_the_first_fact_and_only_the_bridge_reaches_the_second(
    item: MultiHopNeedle,
) -> None:
    question, first, second = map(content_terms, (item.question, item.first, item.second))
    assert len(question & first) >= 2
    assert question & second == frozenset()
    assert first & second  # the bridge
    assert item.answer in item.second and item.answer not in item.first


def test_there_are_enough_distinct_chains() -> None:
    assert len(MULTIHOP_NEEDLES) >= 12
    assert len({item.answer for item in MULTIHOP_NEEDLES}) == len(MULTIHOP_NEEDLES)
