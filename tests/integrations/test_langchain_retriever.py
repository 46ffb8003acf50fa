"""The LangChain adapter: a real langchain-core retriever over a windowpack collection."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.documents import Document as LangChainDocument
from langchain_core.retrievers import BaseRetriever

import windowpack as wp
from windowpack.integrations import WindowpackLangChainRetriever


def test_documents_are_the_window_in_order_with_provenance(
    ops_collection: wp.Collection, question: str
) -> None:
    retriever = WindowpackLangChainRetriever(collection=ops_collection, budget=600)
    window = ops_collection.pack(question, budget=600)

    documents = retriever.invoke(question)

    assert isinstance(retriever, BaseRetriever)
    assert all(isinstance(d, LangChainDocument) for d in documents)
    assert "\n\n".join(d.page_content for d in documents) == window.text
    assert [d.metadata["kind"] for d in documents] == [i.kind for i in window.items]
    assert [d.metadata["document_id"] for d in documents] == [i.document_id for i in window.items]
    chunk = next(d for d in documents if d.metadata["kind"] == "chunk")
    assert chunk.metadata["team"] == "ops" and chunk.id is not None


def test_the_async_path_matches(ops_collection: wp.Collection, question: str) -> None:
    retriever = WindowpackLangChainRetriever(
        collection=ops_collection, budget=600, tokenizer="cl100k_base"
    )

    sync = retriever.invoke(question)
    async_ = asyncio.run(retriever.ainvoke(question))

    assert [d.page_content for d in async_] == [d.page_content for d in sync]


def test_a_bad_budget_fails_at_construction(ops_collection: wp.Collection) -> None:
    with pytest.raises(wp.InvalidArgumentError, match="budget"):
        WindowpackLangChainRetriever(collection=ops_collection, budget=-5)
