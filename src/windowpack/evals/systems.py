"""The systems compared: windowpack's `pack` and what a user would build instead.

Every system turns (question, budget) into a context of at most `budget` tokens, counted
exactly in the run's tokenizer:
- `windowpack`: `Collection.pack`.
- `truncation`: the first B tokens of the collection's documents, in order.
- `dense`: chunks ranked by cosine to the question (FAISS exact inner product, same model and
  vectors as windowpack), taken best first while they fit, in similarity order (the plain
  top-k of a vector store).
- `dos-rag`: the same top-k put back in document order (DOS-RAG, Laitenberger et al. 2025;
  OP-RAG, Yu et al. 2024): the strongest simple baseline, which those papers found to match
  or beat RAPTOR at matched budgets.
- `bm25`: chunks ranked by BM25 (bm25s, English stop words, Snowball stems; whole chunks,
  unlike windowpack's sentence-level index), taken best first while they fit.
- `llama-index`, `llama-index-reorder` (its `LongContextReorder` over the same top-k): see
  `evals.llama_baseline`.
- `hybrid`: the simplest hybrid a user would build: the `bm25` and `dense` rankings fused
  by reciprocal rank fusion (k = 60, Cormack et al. 2009), taken best first while they fit,
  in document order.
- `windowpack-ranking`: windowpack's own ranking (`Collection.search`) with the same plain
  greedy fill: what windowpack's ranking is worth without its allocator.
- `raptor`: RAPTOR's collapsed-tree retrieval over windowpack's own summary tree (chunks and
  summaries in one index, top-k by cosine, filled to the budget in similarity order).
The retrieval baselines use windowpack's own chunks, so only the selection differs; all but
`dense`, `llama-index` and `raptor` put what they took back in document order (a "k-th"
question needs order).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from windowpack.evals.contexts import (
    SEPARATOR,
    Context,
    Target,
    choose_to_budget,
    exact_context,
    fill_to_budget,
    seconds_since,
)

if TYPE_CHECKING:
    from windowpack.embed import Vectors

SYSTEMS = (
    "windowpack",
    "truncation",
    "dense",
    "dos-rag",
    "bm25",
    "llama-index",
    "llama-index-reorder",
    "raptor",
    "hybrid",
    "windowpack-ranking",
)
RRF_K = 60
"""Reciprocal rank fusion's constant, as its paper and most libraries set it."""
_HEAD_CHARS_PER_TOKEN = 8  # English runs ~4.5 chars a token in o200k and cl100k


class System(Protocol):
    """Builds a context of at most `budget` tokens for a question over one collection."""

    name: str

    def prepare(self, target: Target) -> None: ...

    def context(self, question: str, budget: int) -> Context: ...


class WindowpackSystem:
    name = "windowpack"

    def prepare(self, target: Target) -> None:
        self._collection = target.collection
        self._tokenizer = target.counter.name

    def context(self, question: str, budget: int) -> Context:
        started = time.perf_counter()
        window = self._collection.pack(question, budget=budget, tokenizer=self._tokenizer)
        return Context(
            text=window.text, tokens=window.tokens, seconds=seconds_since(started), window=window
        )


class TruncationSystem:
    name = "truncation"

    def prepare(self, target: Target) -> None:
        collection = target.collection
        texts = [collection.get(info.id).text for info in collection.documents()]
        self._text = SEPARATOR.join(texts)
        self._counter = target.counter

    def context(self, question: str, budget: int) -> Context:
        started = time.perf_counter()
        # Only a head of the text is encoded, grown until it holds more than B tokens:
        # encoding all of a 1M-token conversation for a 2K window would cost ~100x more.
        # tiktoken's pieces are words, so only the head's last one can tokenize otherwise
        # than in the whole text, and the exact count below checks the cut anyway.
        size = budget * _HEAD_CHARS_PER_TOKEN
        while True:
            head = self._text[:size]
            cuts = self._counter.cut_points(head, budget)
            if cuts or size >= len(self._text):
                break
            size *= 2
        text = head[: cuts[0]] if cuts else head
        return exact_context(text, self._counter, started, budget)


class _RankedChunksSystem:
    """Ranks the chunks for a question, then fills the budget best first."""

    name = "ranked"

    def prepare(self, target: Target) -> None:
        self._chunks = target.chunks()
        self._counter = target.counter
        self._costs = target.counter.count_many(self._chunks.texts)
        self._separator = target.counter.count(SEPARATOR)
        self._build()

    def prepared_like(self, other: _RankedChunksSystem) -> None:
        """Prepare over what `other` read and counted already (one count of the chunks for a
        system that combines others)."""
        self._chunks, self._counter = other._chunks, other._counter
        self._costs, self._separator = other._costs, other._separator
        self._build()

    def _build(self) -> None:
        raise NotImplementedError

    def ranking(self, question: str, budget: int) -> Sequence[int]:
        raise NotImplementedError

    def context(self, question: str, budget: int) -> Context:
        started = time.perf_counter()
        ranked = self.ranking(question, budget)
        text = fill_to_budget(ranked, self._chunks.texts, self._costs, self._separator, budget)
        return exact_context(text, self._counter, started, budget)


class DocumentOrderDenseSystem(_RankedChunksSystem):
    """DOS-RAG: the dense top-k filled to the budget, in document order."""

    name = "dos-rag"

    def _build(self) -> None:
        import numpy as np

        from windowpack.index import build_vector_index

        self._query: tuple[str, Vectors] | None = None
        vectors = self._chunks.vectors
        ids = np.arange(len(vectors), dtype=np.int64)
        # Exact search at any size: the baseline should not lose recall to an ANN index.
        self._index = build_vector_index(vectors.shape[1], ids, vectors, ann_threshold=1 << 62)

    def ranking(self, question: str, budget: int) -> Sequence[int]:
        # A question asked at several budgets is embedded once, as windowpack's own query
        # vector cache does: latencies then compare alike across budgets.
        if self._query is None or self._query[0] != question:
            self._query = (question, self._chunks.embedder.embed_query(question))
        ids, _ = self._index.search(self._query[1], self._index.size)
        return [int(i) for i in ids]


class DenseTopKSystem(DocumentOrderDenseSystem):
    """The dense top-k filled to the budget, in similarity order."""

    name = "dense"

    def context(self, question: str, budget: int) -> Context:
        started = time.perf_counter()
        ranked = self.ranking(question, budget)
        chosen = choose_to_budget(ranked, self._costs, self._separator, budget)
        text = SEPARATOR.join(self._chunks.texts[index] for index in chosen)
        return exact_context(text, self._counter, started, budget)


class CollapsedTreeSystem(DocumentOrderDenseSystem):
    """RAPTOR's collapsed-tree retrieval over windowpack's own summary tree: every chunk and
    every summary node in one flat index, the most similar taken while they fit, in
    similarity order (as RAPTOR concatenates them). The summaries' vectors are the ones
    windowpack indexed them under, from the store's embedding cache."""

    name = "raptor"

    def prepare(self, target: Target) -> None:
        import numpy as np

        from windowpack.evals.chunk_view import ChunkView

        chunks = target.chunks()
        texts, vectors = target.collection.summary_vectors()
        self._first_summary = len(chunks.texts)
        self._chunks = ChunkView(
            texts=[*chunks.texts, *texts],
            vectors=np.vstack([chunks.vectors, vectors]) if texts else chunks.vectors,
            embedder=chunks.embedder,
        )
        self._counter = target.counter
        self._costs = target.counter.count_many(self._chunks.texts)
        self._separator = target.counter.count(SEPARATOR)
        self._build()

    def context(self, question: str, budget: int) -> Context:
        started = time.perf_counter()
        chosen = choose_to_budget(
            self.ranking(question, budget), self._costs, self._separator, budget
        )
        text = SEPARATOR.join(self._chunks.texts[index] for index in chosen)
        context = exact_context(text, self._counter, started, budget)
        # The summaries it took (chunks come first in the view), those an overshoot's cut left.
        summaries = [i for i in chosen if i >= self._first_summary]
        kept = sum(self._costs[i] for i in summaries if self._chunks.texts[i] in context.text)
        return replace(context, summary_tokens=kept)


class BM25TopKSystem(_RankedChunksSystem):
    name = "bm25"

    def _build(self) -> None:
        import bm25s
        import Stemmer

        self._bm25s: Any = bm25s
        self._stemmer = Stemmer.Stemmer("english")
        tokens = bm25s.tokenize(
            self._chunks.texts, stopwords="en", stemmer=self._stemmer, show_progress=False
        )
        self._retriever = bm25s.BM25()
        self._retriever.index(tokens, show_progress=False)

    def ranking(self, question: str, budget: int) -> Sequence[int]:
        tokens = self._bm25s.tokenize(
            [question], stopwords="en", stemmer=self._stemmer, show_progress=False
        )
        if not tokens.vocab:
            return []
        k = len(self._chunks.texts)
        positions, scores = self._retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        return [int(p) for p, s in zip(positions[0], scores[0], strict=True) if s > 0]


class HybridRrfSystem(_RankedChunksSystem):
    """BM25 and dense rankings fused by reciprocal rank fusion, greedy fill."""

    name = "hybrid"

    def _build(self) -> None:
        self._bm25 = BM25TopKSystem()
        self._dense = DocumentOrderDenseSystem()
        for system in (self._bm25, self._dense):
            system.prepared_like(self)

    def ranking(self, question: str, budget: int) -> Sequence[int]:
        fused: dict[int, float] = {}
        for ranked in (self._bm25.ranking(question, budget), self._dense.ranking(question, budget)):
            for rank, index in enumerate(ranked):
                fused[index] = fused.get(index, 0.0) + 1.0 / (RRF_K + rank + 1)
        return sorted(fused, key=lambda index: (-fused[index], index))


class WindowpackRankingSystem(_RankedChunksSystem):
    """`Collection.search`'s ranking of the chunks, greedy fill in document order."""

    name = "windowpack-ranking"

    def prepare(self, target: Target) -> None:
        super().prepare(target)
        self._collection = target.collection

    def _build(self) -> None:
        # A hit names its chunk by text: the view holds the collection's chunks as stored
        # (a chat's joined request and reply are found by neither half, and rank last).
        self._position: dict[str, int] = {}
        for index, text in enumerate(self._chunks.texts):
            self._position.setdefault(text, index)

    def ranking(self, question: str, budget: int) -> Sequence[int]:
        mean = max(1, sum(self._costs) // max(1, len(self._costs)))
        hits = self._collection.search(question, k=min(10_000, 4 * budget // mean + 8))
        found = (self._position.get(hit.text) for hit in hits)
        return [index for index in found if index is not None]


def make_system(name: str) -> System:
    """The system called `name` (one of `SYSTEMS`)."""
    if name in ("llama-index", "llama-index-reorder"):
        from windowpack.evals.llama_baseline import LlamaIndexReorderSystem, LlamaIndexSystem

        return LlamaIndexSystem() if name == "llama-index" else LlamaIndexReorderSystem()
    factories: dict[str, Callable[[], System]] = {
        "windowpack": WindowpackSystem,
        "truncation": TruncationSystem,
        "dense": DenseTopKSystem,
        "dos-rag": DocumentOrderDenseSystem,
        "bm25": BM25TopKSystem,
        "raptor": CollapsedTreeSystem,
        "hybrid": HybridRrfSystem,
        "windowpack-ranking": WindowpackRankingSystem,
    }
    return factories[name]()
