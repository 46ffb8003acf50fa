"""The associative needle set: its questions reach the needles by knowledge, never by words."""

from __future__ import annotations

from collections import Counter

import pytest

from windowpack.evals.associative_set import ASSOCIATIVE_NEEDLES, AssociativeNeedle
from windowpack.pack.repeats import content_terms


def test_there_are_at_least_forty_across_the_four_kinds() -> None:
    kinds = Counter(item.kind for item in ASSOCIATIVE_NEEDLES)
    assert len(ASSOCIATIVE_NEEDLES) >= 40
    assert set(kinds) == {"place-landmark", "object-use", "person-role", "cause-effect"}
    assert min(kinds.values()) >= 10


@pytest.mark.parametrize("item", ASSOCIATIVE_NEEDLES, ids=lambda item: item.answer)
def test_the_question_shares_no_content_word_and_the_control_does(
    item: AssociativeNeedle,
) -> None:
    needle = content_terms(item.needle)
    assert needle & content_terms(item.question) == frozenset(), item.question
    assert len(needle & content_terms(item.control)) >= 2, item.control
    assert item.needle.startswith(item.answer)


def test_answers_and_needles_are_unique() -> None:
    assert len({item.answer for item in ASSOCIATIVE_NEEDLES}) == len(ASSOCIATIVE_NEEDLES)
    assert len({item.needle for item in ASSOCIATIVE_NEEDLES}) == len(ASSOCIATIVE_NEEDLES)
