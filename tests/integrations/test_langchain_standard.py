"""LangChain's own standard tests for retrievers (`langchain-tests`), run on our retriever.

The collection lives in a temporary store for the class; each test builds its retriever
from `retriever_constructor_params`, as the standard tests do.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from integration_corpora import many_documents
from langchain_tests.integration_tests import RetrieversIntegrationTests

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.integrations import WindowpackLangChainRetriever

_COLLECTION: dict[str, wp.Collection] = {}


@pytest.fixture(scope="module", autouse=True)
def _collection() -> Iterator[None]:
    with (
        tempfile.TemporaryDirectory() as folder,
        wp.open(Path(folder), config=StoreConfig(embedder="hash", chunk_tokens=64)) as store,
    ):
        collection = store.collection("standard")
        collection.add(many_documents())
        _COLLECTION["standard"] = collection
        yield
        _COLLECTION.clear()


class TestWindowpackLangChainRetriever(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[WindowpackLangChainRetriever]:
        return WindowpackLangChainRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"collection": _COLLECTION["standard"], "budget": 2000}

    @property
    def retriever_query_example(self) -> str:
        return "who signed off the radar work?"
