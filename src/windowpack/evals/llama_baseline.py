"""The llama-index path a user would pick instead of windowpack, as an eval baseline.

A `VectorStoreIndex` on `FaissVectorStore(faiss.IndexFlatIP(dim))` whose nodes are
windowpack's own chunks. To keep a run affordable the nodes are given the vectors windowpack
already computed for the same chunks (same model, same text; `agreement` spot-checks them
against llama-index's own embedding), and llama-index embeds only the question, with the
same model through `HuggingFaceEmbedding`. The retriever asks for K = 1.25 x B / mean chunk
tokens nodes, and the budget is filled best first as for the other retrieval baselines.
"""

from __future__ import annotations

import math
import os
import random
import time
from typing import Any

from windowpack.config import DEFAULT_EMBEDDER
from windowpack.embed import HASH_EMBEDDER, Embedder, bundled_model_path
from windowpack.errors import MissingDependencyError
from windowpack.evals.chunk_view import ChunkView
from windowpack.evals.contexts import (
    SEPARATOR,
    Context,
    Target,
    choose_to_budget,
    exact_context,
    fill_to_budget,
)
from windowpack.text import TokenCounter

TOP_K_OVER_BUDGET = 1.25


class LlamaIndexRetriever:
    """A llama-index `VectorStoreIndex` over FAISS holding the chunks of one `ChunkView`."""

    def __init__(self, chunks: ChunkView, counter: TokenCounter, embedder_name: str) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model is local; never call the hub
        try:
            import faiss
            from llama_index.core import StorageContext, VectorStoreIndex
            from llama_index.core.schema import TextNode
            from llama_index.vector_stores.faiss import FaissVectorStore
        except ImportError as error:
            raise MissingDependencyError("llama-index", "llama-index") from error

        started = time.perf_counter()
        self.chunks = chunks
        self.embed_model = _embed_model(embedder_name, chunks.embedder)
        nodes = [
            TextNode(text=text, id_=str(position), embedding=vector.tolist())
            for position, (text, vector) in enumerate(
                zip(chunks.texts, chunks.vectors, strict=True)
            )
        ]
        vector_store = FaissVectorStore(faiss_index=faiss.IndexFlatIP(chunks.vectors.shape[1]))
        context = StorageContext.from_defaults(vector_store=vector_store)
        self.index = VectorStoreIndex(nodes, storage_context=context, embed_model=self.embed_model)
        self.counter = counter
        self.costs = counter.count_many(chunks.texts)
        self.separator = counter.count(SEPARATOR)
        self.mean_tokens = sum(self.costs) / max(1, len(self.costs))
        self.build_seconds = time.perf_counter() - started
        self._query: Any = None  # the last question's QueryBundle, vector included

    @property
    def nodes(self) -> int:
        return len(self.costs)

    def top_k(self, budget: int) -> int:
        return max(1, min(self.nodes, math.ceil(TOP_K_OVER_BUDGET * budget / self.mean_tokens)))

    def ranking(self, question: str, budget: int) -> list[int]:
        """Chunk positions best first, as llama-index's retriever returns them."""
        return [int(hit.node.node_id) for hit in self.hits(question, budget)]

    def hits(self, question: str, budget: int) -> list[Any]:
        """llama-index's `NodeWithScore` hits, best first. A question asked at several
        budgets is embedded once (llama-index takes the vector in its `QueryBundle`), as
        windowpack's query vector cache does."""
        from llama_index.core.schema import QueryBundle

        if self._query is None or self._query.query_str != question:
            embedding = self.embed_model.get_query_embedding(question)
            self._query = QueryBundle(query_str=question, embedding=embedding)
        retriever = self.index.as_retriever(similarity_top_k=self.top_k(budget))
        return list(retriever.retrieve(self._query))

    def reordered(self, question: str, budget: int) -> str:
        """The hits that fit the budget, best first, laid out by llama-index's
        `LongContextReorder` (best at the start and the end, weakest in the middle)."""
        from llama_index.core.postprocessor import LongContextReorder

        hits = self.hits(question, budget)
        positions = [int(hit.node.node_id) for hit in hits]
        chosen = set(choose_to_budget(positions, self.costs, self.separator, budget))
        fitting = [hit for hit, at in zip(hits, positions, strict=True) if at in chosen]
        ordered = LongContextReorder().postprocess_nodes(fitting)
        return SEPARATOR.join(self.chunks.texts[int(hit.node.node_id)] for hit in ordered)

    def fill(self, question: str, budget: int) -> tuple[str, bool]:
        """The context for `question`, and whether the hits ran out before the budget did."""
        ranked = self.ranking(question, budget)
        text = fill_to_budget(ranked, self.chunks.texts, self.costs, self.separator, budget)
        used = sum(self.costs[i] for i in ranked) + self.separator * max(0, len(ranked) - 1)
        return text, used <= budget

    def agreement(self, samples: int = 16) -> float:
        """Least cosine between stored vectors and llama-index's own embedding of the text."""
        import numpy as np

        texts = self.chunks.texts
        picked = random.Random(0).sample(range(len(texts)), min(samples, len(texts)))
        fresh = self.embed_model.get_text_embedding_batch([texts[i] for i in picked])
        vectors = self.chunks.vectors
        return min(float(np.dot(vectors[i], f)) for i, f in zip(picked, fresh, strict=True))


class LlamaIndexSystem:
    """The eval system over `LlamaIndexRetriever`, rebuilt for each eval collection."""

    name = "llama-index"

    def prepare(self, target: Target) -> None:
        self._retriever = LlamaIndexRetriever(
            target.chunks(), target.counter, target.store.config.embedder
        )

    def context(self, question: str, budget: int) -> Context:
        started = time.perf_counter()
        text, _ = self._retriever.fill(question, budget)
        return exact_context(text, self._retriever.counter, started, budget)


class LlamaIndexReorderSystem(LlamaIndexSystem):
    """The llama-index top-k filled to the budget, then in `LongContextReorder`'s order
    instead of document order: what the same chunks look like to a reader laid out the way
    llama-index recommends against "lost in the middle"."""

    name = "llama-index-reorder"

    def context(self, question: str, budget: int) -> Context:
        started = time.perf_counter()
        text = self._retriever.reordered(question, budget)
        return exact_context(text, self._retriever.counter, started, budget)


def _embed_model(name: str, embedder: Embedder) -> Any:
    if name == HASH_EMBEDDER or name.startswith(f"{HASH_EMBEDDER}-"):
        return _adapter(embedder)  # tests: the same model-free vectors as the store
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding

    path = bundled_model_path() if name == DEFAULT_EMBEDDER else name
    return HuggingFaceEmbedding(model_name=path, device="cpu")


def _adapter(embedder: Embedder) -> Any:
    """A llama-index embedding model over a windowpack embedder (for model-free test runs)."""
    from llama_index.core.embeddings import BaseEmbedding

    class WindowpackEmbedding(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return [float(x) for x in embedder.embed_query(query).reshape(-1)]

        def _get_text_embedding(self, text: str) -> list[float]:
            return [float(x) for x in embedder.embed([text])[0]]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return [[float(x) for x in row] for row in embedder.embed(texts)]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

    return WindowpackEmbedding(model_name=embedder.model_id)
