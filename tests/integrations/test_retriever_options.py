"""The retrievers' options: `k`, one-node mode, unknown arguments, with the real frameworks."""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.base.llms.types import CompletionResponse
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine

import windowpack as wp
from windowpack.integrations import WindowpackLangChainRetriever, WindowpackRetriever

QUESTION = "who signed off the radar work?"


def test_the_prompt_holds_the_window_byte_for_byte_with_collection_summaries(
    many_collection: wp.Collection,
) -> None:
    retriever = WindowpackRetriever(
        many_collection, budget=2000, tokenizer="cl100k_base", overview_tokens=250
    )
    window = retriever.pack(QUESTION)
    summaries = [i for i in window.items if i.kind == "summary" and i.document_id is None]

    prompt = str(RetrieverQueryEngine.from_args(retriever, llm=MockLLM()).query(QUESTION))

    assert len({i.document_range for i in summaries}) >= 2
    assert window.text in prompt
    for item in summaries:  # each collection-level summary, header and text, in the prompt
        assert item.text in prompt


def _best(window: wp.Window, k: int) -> list[wp.WindowItem]:
    ranked = sorted(
        (i for i, item in enumerate(window.items) if item.kind != "gap"),
        key=lambda i: (-window.items[i].score, i),
    )
    return [window.items[i] for i in sorted(ranked[:k])]


@pytest.mark.parametrize("k", [1, 3, 5])
def test_k_keeps_the_best_items_in_window_order(many_collection: wp.Collection, k: int) -> None:
    window = many_collection.pack(QUESTION, budget=2000, overview_tokens=250)
    expected = [item.offset for item in _best(window, k)]

    llama = WindowpackRetriever(many_collection, budget=2000, k=k, overview_tokens=250).retrieve(
        QUESTION
    )
    langchain = WindowpackLangChainRetriever(
        collection=many_collection, budget=2000, k=k, overview_tokens=250
    )

    assert [n.node.metadata["window_offset"] for n in llama] == expected
    assert [d.metadata["window_offset"] for d in langchain.invoke(QUESTION)] == expected
    assert expected == sorted(expected) and len(expected) == k
    # The best item for this question is the radar document's chunk that says so.
    assert any("radar" in n.node.get_content() for n in llama)


def test_k_in_invoke_overrides_the_constructor(many_collection: wp.Collection) -> None:
    retriever = WindowpackLangChainRetriever(collection=many_collection, budget=2000, k=5)

    assert len(retriever.invoke(QUESTION, k=2)) == 2
    assert len(retriever.invoke(QUESTION)) == 5


def test_unknown_arguments_are_refused_naming_them(many_collection: wp.Collection) -> None:
    with pytest.raises(wp.InvalidArgumentError, match="'top_k'"):
        WindowpackLangChainRetriever(collection=many_collection, budget=2000, top_k=3)
    retriever = WindowpackLangChainRetriever(collection=many_collection, budget=2000)
    with pytest.raises(wp.InvalidArgumentError, match="'kk'"):
        retriever.invoke(QUESTION, kk=1)
    with pytest.raises(TypeError, match="top_k"):
        WindowpackRetriever(many_collection, budget=2000, top_k=3)  # type: ignore[call-arg]


@pytest.mark.parametrize("k", [0, -1, True, 2.5])
def test_a_bad_k_is_named(many_collection: wp.Collection, k: object) -> None:
    with pytest.raises(wp.InvalidArgumentError, match="'k'"):
        WindowpackRetriever(many_collection, budget=2000, k=k)  # type: ignore[arg-type]
    with pytest.raises(wp.InvalidArgumentError, match="'k'"):
        WindowpackLangChainRetriever(collection=many_collection, budget=2000, k=k)


def test_one_node_is_the_whole_window(many_collection: wp.Collection) -> None:
    retriever = WindowpackRetriever(many_collection, budget=2000, one_node=True)

    nodes = retriever.retrieve(QUESTION)
    again = retriever.retrieve(QUESTION)

    window = retriever.pack(QUESTION)
    assert len(nodes) == 1 and nodes[0].node.get_content() == window.text
    assert nodes[0].node.metadata["tokens"] == window.tokens
    assert nodes[0].node.node_id == again[0].node.node_id
    with pytest.raises(wp.InvalidArgumentError, match="'k'"):
        WindowpackRetriever(many_collection, budget=2000, one_node=True, k=3)


class CountingLLM(MockLLM):
    """llama-index's MockLLM (it answers with the prompt), counting its completions."""

    calls: int = 0

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.calls += 1
        return super().complete(prompt, formatted=formatted, **kwargs)


def _llm_calls(retriever: WindowpackRetriever, mode: str) -> tuple[int, str]:
    llm = CountingLLM()
    engine = RetrieverQueryEngine.from_args(retriever, llm=llm, response_mode=mode)
    response = str(engine.query(QUESTION))
    return llm.calls, response


@pytest.mark.parametrize("mode", ["refine", "accumulate", "compact", "tree_summarize"])
def test_one_node_mode_makes_one_llm_call_in_every_synthesizer(
    many_collection: wp.Collection, mode: str
) -> None:
    # Below MockLLM's 3,900-token context with the prompt around it, also in refine mode,
    # where the mock's answer (the prompt echoed) grows with each item it refines (compact
    # headers fit more items in a budget than 1500's did with full ones).
    window_budget = 1200
    per_item = WindowpackRetriever(many_collection, budget=window_budget)
    whole = WindowpackRetriever(many_collection, budget=window_budget, one_node=True)

    calls, response = _llm_calls(whole, mode)

    assert calls == 1
    assert whole.pack(QUESTION).text in response
    if mode in ("refine", "accumulate"):  # one call per item without it
        assert _llm_calls(per_item, mode)[0] == len(per_item.pack(QUESTION).items)
