"""`fit`: the most items whose rendered answer fits, never over, by exact counts alone."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from windowpack.errors import InvalidArgumentError
from windowpack.mcp_server.fit import fit
from windowpack.text import get_token_counter


class CharCounter:
    """A tokenizer of one token per character: counts grow with every item, exactly."""

    name = "chars"

    def count(self, text: str) -> int:
        return len(text)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [len(text) for text in texts]

    def cut_points(self, text: str, max_tokens: int) -> list[int]:
        return list(range(max_tokens, len(text), max_tokens))


def _render(items: list[str]) -> Callable[[int], str]:
    return lambda shown: json.dumps({"items": items[:shown], "left_out": len(items) - shown})


@given(st.lists(st.text(max_size=40), max_size=60), st.integers(min_value=30, max_value=2000))
def test_the_most_items_that_fit_and_never_over(items: list[str], max_tokens: int) -> None:
    render = _render(items)
    fitted = fit(render, len(items), counter=CharCounter(), max_tokens=max_tokens)
    assert fitted.text == render(fitted.shown) and fitted.tokens == len(fitted.text)
    assert fitted.tokens <= max_tokens
    if fitted.shown < len(items):  # one more item would not have fitted
        assert len(render(fitted.shown + 1)) > max_tokens


@given(st.lists(st.integers(min_value=0, max_value=50), max_size=40), st.integers(0, 200))
def test_counts_that_fall_as_items_are_added_never_give_an_answer_over(
    sizes: list[int], max_tokens: int
) -> None:
    # A count that is not monotone in the items (BPE merges at a join can do this a little)
    # may make the answer shorter than it could be; it never makes it longer than allowed.
    texts = ["x" * size for size in [0, *sizes]]
    fitted = fit(
        lambda shown: texts[shown], len(sizes), counter=CharCounter(), max_tokens=max_tokens
    )
    assert fitted.tokens <= max_tokens and fitted.text == texts[fitted.shown]


def test_an_answer_too_large_with_nothing_in_it_names_max_tokens() -> None:
    counter = get_token_counter("o200k_base")
    with pytest.raises(InvalidArgumentError, match=r"'max_tokens'.*o200k_base tokens"):
        fit(lambda shown: "frame " * 50, 3, counter=counter, max_tokens=10)


def test_exact_counts_in_a_real_tokenizer() -> None:
    counter = get_token_counter("cl100k_base")
    items = [f"passage {index}: " + "the ferry leaves at seven " * index for index in range(30)]
    fitted = fit(_render(items), len(items), counter=counter, max_tokens=500)
    assert counter.count(fitted.text) == fitted.tokens <= 500
    assert counter.count(_render(items)(fitted.shown + 1)) > 500
