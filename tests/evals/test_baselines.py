"""The retrieval baselines embed a question once however many budgets it is asked at, and
rank exactly as they would with a fresh embedding."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.embed.embedder import Embedder, Vectors
from windowpack.evals.chunk_view import ChunkView, _requests_joined, chunk_view
from windowpack.evals.contexts import Target
from windowpack.evals.systems import DenseTopKSystem, DocumentOrderDenseSystem
from windowpack.text.tokens import get_token_counter

TEXTS = [
    f"Note {i}: the {word} was checked on day {i} and found {state}."
    for i, (word, state) in enumerate(
        [("boiler", "clean"), ("ferry", "late"), ("generator", "loud"), ("boiler", "cold")] * 6
    )
]


class _CountingEmbedder:
    """The store's embedder, counting the questions it embeds."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.queries: list[str] = []
        self.model_id, self.dimension = inner.model_id, inner.dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self.inner.embed(texts)

    def embed_query(self, text: str) -> Vectors:
        self.queries.append(text)
        return self.inner.embed_query(text)


@pytest.fixture
def view(tmp_path: Path) -> tuple[wp.Store, wp.Collection, ChunkView, _CountingEmbedder]:
    store = wp.open(tmp_path / "store", config=StoreConfig(embedder="hash"))
    collection = store.collection("notes")
    collection.add([wp.Document(text=text, id=f"n{i}") for i, text in enumerate(TEXTS)])
    chunks = chunk_view(store, collection)
    counting = _CountingEmbedder(chunks.embedder)
    return (
        store,
        collection,
        ChunkView(texts=chunks.texts, vectors=chunks.vectors, embedder=counting),
        counting,
    )


def test_dense_embeds_a_question_once_across_budgets(
    view: tuple[wp.Store, wp.Collection, ChunkView, _CountingEmbedder],
) -> None:
    store, collection, chunks, counting = view
    target = Target(
        store=store,
        collection=collection,
        counter=get_token_counter("o200k_base"),
        chunks=lambda: chunks,
    )
    system = DenseTopKSystem()
    system.prepare(target)
    first = system.ranking("when was the boiler checked?", 100)
    assert system.ranking("when was the boiler checked?", 400) == first
    assert counting.queries == ["when was the boiler checked?"]
    system.ranking("is the ferry late?", 100)
    assert len(counting.queries) == 2  # a new question is embedded
    fresh = DenseTopKSystem()
    fresh.prepare(target)
    assert fresh.ranking("when was the boiler checked?", 100) == first
    store.close()


def test_llama_index_embeds_a_question_once_and_ranks_as_with_a_string(
    view: tuple[wp.Store, wp.Collection, ChunkView, _CountingEmbedder],
) -> None:
    from windowpack.evals.llama_baseline import LlamaIndexRetriever

    store, _, chunks, counting = view
    retriever = LlamaIndexRetriever(chunks, get_token_counter("o200k_base"), "hash")
    question = "when was the boiler checked?"
    first = retriever.ranking(question, 200)
    assert retriever.ranking(question, 200) == first
    assert counting.queries == [question]  # the adapter embeds through the counting embedder
    hits = retriever.index.as_retriever(similarity_top_k=retriever.top_k(200)).retrieve(question)
    assert [int(hit.node.node_id) for hit in hits] == first
    store.close()


def test_baselines_see_a_chat_request_joined_to_its_reply_as_a_generic_chunker_would() -> None:
    texts = ["user: write a poem about tapirs", "assistant: Tapirs roam.", "More lines.", "x"]
    vectors = np.eye(4, dtype=np.float32)
    joined, pooled = _requests_joined(texts, vectors)
    assert joined == [
        "user: write a poem about tapirs\n\nassistant: Tapirs roam.",
        "More lines.",
        "x",
    ]
    assert np.allclose(pooled[0], (vectors[0] + vectors[1]) / np.sqrt(2))
    assert np.allclose(pooled[1:], vectors[2:])


def _target(store: wp.Store, collection: wp.Collection, chunks: ChunkView) -> Target:
    counter = get_token_counter("o200k_base")
    return Target(store=store, collection=collection, counter=counter, chunks=lambda: chunks)


def test_raptor_ranks_chunks_and_summaries_in_one_index_in_similarity_order(
    view: tuple[wp.Store, wp.Collection, ChunkView, _CountingEmbedder],
) -> None:
    from windowpack.evals.systems import CollapsedTreeSystem

    store, collection, chunks, _ = view
    summaries, vectors = collection.summary_vectors()
    assert summaries and vectors.shape == (len(summaries), chunks.vectors.shape[1])
    system = CollapsedTreeSystem()
    system.prepare(_target(store, collection, chunks))
    question = "when was the boiler checked?"
    ranked = system.ranking(question, 10_000)
    assert sorted(ranked) == list(range(len(chunks.texts) + len(summaries)))
    context = system.context(question, 60)
    assert 0 < context.tokens <= 60
    # The window is the top of the ranking, in that order (not document order).
    items = [*chunks.texts, *summaries]
    assert context.text.split("\n\n") == [
        items[i] for i in ranked[: context.text.count("\n\n") + 1]
    ]
    whole = system.context(question, 100_000).text
    assert all(summary in whole for summary in summaries)  # the tree's levels are in it
    store.close()


def test_long_context_reorder_keeps_the_top_k_and_puts_the_best_at_the_ends(
    view: tuple[wp.Store, wp.Collection, ChunkView, _CountingEmbedder],
) -> None:
    from windowpack.evals.llama_baseline import LlamaIndexReorderSystem, LlamaIndexSystem

    store, collection, chunks, _ = view
    target = _target(store, collection, chunks)
    plain, reorder = LlamaIndexSystem(), LlamaIndexReorderSystem()
    plain.prepare(target)
    reorder.prepare(target)
    question = "is the ferry late?"
    in_order = plain.context(question, 120).text.split("\n\n")
    reordered = reorder.context(question, 120).text.split("\n\n")
    assert sorted(in_order) == sorted(reordered) and len(reordered) >= 3
    score = {
        chunks.texts[int(hit.node.node_id)]: float(hit.score)
        for hit in reorder._retriever.hits(question, 120)
    }
    ends, middle = [reordered[0], reordered[-1]], reordered[1:-1]
    assert min(score[text] for text in ends) >= max(score[text] for text in middle)
    assert reordered != in_order  # document order is not kept
    store.close()


def test_dense_fills_in_similarity_order_and_dos_rag_in_document_order(
    view: tuple[wp.Store, wp.Collection, ChunkView, _CountingEmbedder],
) -> None:
    store, collection, chunks, _ = view
    target = Target(
        store=store,
        collection=collection,
        counter=get_token_counter("o200k_base"),
        chunks=lambda: chunks,
    )
    question = "when was the generator checked and found loud?"
    dense, dos_rag = DenseTopKSystem(), DocumentOrderDenseSystem()
    dense.prepare(target)
    dos_rag.prepare(target)
    ranked = dense.ranking(question, 200)
    by_similarity = dense.context(question, 200).text.split("\n\n")
    in_order = dos_rag.context(question, 200).text.split("\n\n")
    assert sorted(by_similarity) == sorted(in_order)  # the same top-k, filled to B
    assert by_similarity == [chunks.texts[i] for i in ranked[: len(by_similarity)]]
    assert in_order == [t for t in chunks.texts if t in set(in_order)]
    assert by_similarity != in_order
    store.close()


def test_the_cli_compares_every_system_by_default() -> None:
    import inspect

    from windowpack.cli.eval_command import eval_
    from windowpack.evals.systems import SYSTEMS

    default = inspect.signature(eval_).parameters["systems"].default
    assert default.split(",") == list(SYSTEMS)
