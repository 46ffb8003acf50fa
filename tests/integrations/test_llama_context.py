"""The llama-index engine at any budget: `WindowpackRetriever` sizes the window to one call of
the LLM, so that `RetrieverQueryEngine` with MockLLM (3,900 tokens of context, replying with
the prompt it got) answers at 8K, 32K and 128K; it crashed past ~3.5K ("Calculated available
context size -63 was not non-negative") when the window was split over calls.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from llama_index.core import Settings
from llama_index.core.base.llms.types import LLMMetadata
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine

import windowpack as wp
from windowpack.integrations import WindowpackRetriever
from windowpack.integrations.llama_context import context_room, llama_tokens

QUESTION = "Which harbour keeps the grey seals?"


class _CountingLLM(MockLLM):
    """MockLLM (the prompt back as the answer) that counts its calls, with a context window of
    the test's choosing."""

    calls: int = 0
    window: int = 3_900

    def __init__(self, window: int = 3_900) -> None:
        super().__init__()
        self.window = window

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=self.window, num_output=-1)

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        self.calls += 1
        return super().complete(prompt, formatted=formatted, **kwargs)


@pytest.fixture
def harbours(hash_store: wp.Store) -> wp.Collection:
    """~30K tokens: far more than MockLLM's context window, less than the largest budget."""
    collection = hash_store.collection("harbours")
    collection.add(
        [
            wp.Document(
                id=f"harbour-{number}",
                text="\n\n".join(
                    f"Harbour {number} log {line}: the crew counted {line * number} grey seals "
                    f"on the north sandbank and mended net {line}."
                    for line in range(120)
                ),
            )
            for number in range(12)
        ]
    )
    return collection


@pytest.fixture
def settings_llm() -> Iterator[None]:
    """Settings.llm as a test leaves it: the one llama-index had before."""
    before = Settings._llm
    try:
        yield
    finally:
        Settings._llm = before


@pytest.mark.parametrize("budget", [8_000, 32_000, 128_000])
def test_the_engine_answers_in_one_call_at_any_budget_with_settings_llm(
    harbours: wp.Collection, budget: int, settings_llm: None
) -> None:
    llm = _CountingLLM()
    Settings.llm = llm
    retriever = WindowpackRetriever(harbours, budget=budget)

    answer = str(RetrieverQueryEngine.from_args(retriever).query(QUESTION))
    window = retriever.pack(QUESTION)

    assert llm.calls == 1  # the window was not split over calls
    assert window.text in answer  # MockLLM's answer is the prompt: the whole window
    room = context_room(llm, QUESTION)
    assert 0 < llama_tokens(window.text) <= room < budget
    assert window.tokens > room // 2  # the room is used, not a token-starved window


def test_the_llm_given_to_the_retriever_sizes_it(harbours: wp.Collection) -> None:
    small, large = _CountingLLM(window=6_000), _CountingLLM(window=200_000)

    fitted = WindowpackRetriever(harbours, budget=8_000, llm=small).pack(QUESTION)
    unchanged = WindowpackRetriever(harbours, budget=8_000, llm=large).pack(QUESTION)
    engine = RetrieverQueryEngine.from_args(
        WindowpackRetriever(harbours, budget=8_000, llm=small), llm=small
    )

    assert llama_tokens(fitted.text) <= context_room(small, QUESTION) < 8_000
    assert unchanged.text == harbours.pack(QUESTION, budget=8_000).text  # budget as given
    assert unchanged.tokens > context_room(small, QUESTION)
    assert fitted.text in str(engine.query(QUESTION)) and small.calls == 1


def test_a_context_with_no_room_names_the_llm(harbours: wp.Collection) -> None:
    retriever = WindowpackRetriever(harbours, budget=8_000, llm=_CountingLLM(window=300))
    with pytest.raises(wp.InvalidArgumentError, match="llm") as raised:
        retriever.pack(QUESTION)
    assert "300 tokens" in str(raised.value)
    with pytest.raises(wp.InvalidArgumentError, match="llm"):
        WindowpackRetriever(harbours, budget=8_000, llm="gpt-4")  # type: ignore[arg-type]
