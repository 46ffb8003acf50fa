"""The MRCR grader against hand-checked cases and OpenAI's published rule."""

from __future__ import annotations

from difflib import SequenceMatcher

import pytest

from windowpack.evals import grade_mrcr
from windowpack.evals.mrcr import ordinal

PREFIX = "mWEa9DrPT3"
REPLY = "In a world so vast and wide,\nWe walk on paths unknown.\nTwo souls meeting eye to eye."


def test_exact_copy_scores_one() -> None:
    assert grade_mrcr(PREFIX + REPLY, PREFIX + REPLY, PREFIX) == 1.0


def test_missing_prefix_scores_zero_even_with_the_right_text() -> None:
    assert grade_mrcr(REPLY, PREFIX + REPLY, PREFIX) == 0.0
    assert grade_mrcr(" " + PREFIX + REPLY, PREFIX + REPLY, PREFIX) == 0.0  # must *start* with it


def test_half_the_text_scores_two_thirds() -> None:
    # ratio = 2M / T: M = n/2 matching chars, T = n + n/2, so 2/3.
    answer = "abcdefghij" * 10
    score = grade_mrcr(PREFIX + answer[:50], PREFIX + answer, PREFIX)
    assert score == pytest.approx(2 / 3, abs=0.001)


def test_prefix_alone_scores_zero_and_other_text_scores_low() -> None:
    assert grade_mrcr(PREFIX, PREFIX + REPLY, PREFIX) == 0.0
    assert grade_mrcr(PREFIX + "Something else entirely.", PREFIX + REPLY, PREFIX) < 0.3


def test_matches_the_official_rule_on_a_sample() -> None:
    # openai/mrcr's README: strip the prefix from both, then SequenceMatcher(None, a, b).ratio().
    response = PREFIX + REPLY.replace("vast", "big")
    expected = SequenceMatcher(None, REPLY.replace("vast", "big"), REPLY).ratio()
    assert grade_mrcr(response, PREFIX + REPLY, PREFIX) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("number", "text"), [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (22, "22nd")]
)
def test_ordinals(number: int, text: str) -> None:
    assert ordinal(number) == text
