"""The eval grid as the CLI takes it, and errors that name the argument."""

from __future__ import annotations

import pytest

from windowpack.errors import InvalidArgumentError
from windowpack.evals.options import parse_budgets, parse_depths, parse_names, parse_token_sizes


def test_budgets_take_binary_k_and_m() -> None:
    assert parse_budgets("2k, 8K,1M,3000") == [2048, 8192, 1 << 20, 3000]


def test_lengths_accept_full() -> None:
    assert parse_token_sizes("8k,full", "lengths", allow_full=True) == [8192, None]


@pytest.mark.parametrize("text", ["", "8x", "0", "11M", "2M", "full"])
def test_bad_budgets_are_named(text: str) -> None:
    with pytest.raises(InvalidArgumentError, match="'budgets'"):
        parse_budgets(text)


def test_depths_are_percentages() -> None:
    assert parse_depths("0,25%,100") == [0.0, 0.25, 1.0]
    with pytest.raises(InvalidArgumentError, match="'depths'"):
        parse_depths("120")
    with pytest.raises(InvalidArgumentError, match="'depths'"):
        parse_depths("half")


def test_unknown_names_are_listed() -> None:
    with pytest.raises(InvalidArgumentError, match=r"'systems'.*rag"):
        parse_names("windowpack,rag", "systems", ("windowpack", "bm25"))
