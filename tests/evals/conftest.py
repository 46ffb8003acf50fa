"""Fixtures of the eval tests: small haystacks and a tokenizer."""

from __future__ import annotations

import pytest

from windowpack.evals import Haystack, generated_haystack
from windowpack.evals.haystack import split_passage
from windowpack.text.tokens import TokenCounter, get_token_counter


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    return get_token_counter("o200k_base")


@pytest.fixture(scope="session")
def small_haystack() -> Haystack:
    """~15K tokens of seeded filler prose in ~20K-character passages."""
    return generated_haystack(seed=7, chars=60_000)


@pytest.fixture(scope="session")
def essay_haystack(essays_text: str) -> Haystack:
    """The RULER essays as passages (skipped, with a message, when ../shared is absent)."""
    return Haystack(passages=tuple(split_passage(essays_text)), source="PaulGrahamEssays.json")
