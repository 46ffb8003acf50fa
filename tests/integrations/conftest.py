"""Fixtures for the framework adapters: a packed-down collection added from llama-index."""

from __future__ import annotations

import pytest
from integration_corpora import many_documents
from llama_index.core import Document as LlamaDocument

import windowpack as wp

TOPICS = ["generator", "ferry", "radar", "barometer", "rota", "fuel"]


def _llama_documents() -> list[LlamaDocument]:
    """Six documents of a few paragraphs each, with ids and metadata of their own."""
    documents = []
    for index, topic in enumerate(TOPICS):
        paragraphs = [
            f"Section {part} about the {topic}. The {topic} log number {index}{part} records "
            f"routine checks, spare parts and who signed off the work on day {part + 3}."
            for part in range(6)
        ]
        documents.append(
            LlamaDocument(
                text="\n\n".join(paragraphs),
                id_=f"{topic}-notes",
                metadata={"file_name": f"{topic}.txt", "team": "ops", "rank": index},
            )
        )
    documents[2] = LlamaDocument(
        text=documents[2].text + "\n\nThe radar mast code is 7731 and only Amira Haddad has it.",
        id_=documents[2].id_,
        metadata=documents[2].metadata,
    )
    return documents


@pytest.fixture
def llama_documents() -> list[LlamaDocument]:
    """Six documents of a few paragraphs each, with ids and metadata of their own."""
    return _llama_documents()


@pytest.fixture
def question() -> str:
    """Asks for the fact planted at the end of the radar document."""
    return "What is the radar mast code that Amira Haddad has?"


@pytest.fixture
def ops_collection(hash_store: wp.Store) -> wp.Collection:
    """A collection bigger than the budgets used here: packs hold chunks, summaries, gaps."""
    collection = hash_store.collection("ops")
    collection.add_llama_documents(_llama_documents())
    return collection


@pytest.fixture
def many_collection(hash_store: wp.Store) -> wp.Collection:
    """Twenty documents whose tree has three level-2 collection nodes under one root."""
    collection = hash_store.collection("many")
    collection.add(many_documents())
    return collection
