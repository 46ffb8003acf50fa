"""Unit tests for search argument checks and the query-vector LRU cache."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from windowpack.embed.embedder import HashEmbedder, Vectors
from windowpack.errors import InvalidArgumentError
from windowpack.search.hybrid import MAX_K, QueryEmbeddingCache, check_search


@pytest.mark.parametrize("query", ["", "   ", "\n\t", None, 42])
def test_a_blank_or_non_string_query_is_rejected_naming_query(query: object) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        check_search(query, 5)  # type: ignore[arg-type]
    assert caught.value.argument == "query"
    assert "'query'" in str(caught.value)


@pytest.mark.parametrize("k", [0, -1, True, False, 10_001, 2.0, "3", None])
def test_a_bad_k_is_rejected_naming_k(k: object) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        check_search("what is windowpack?", k)  # type: ignore[arg-type]
    assert caught.value.argument == "k"
    assert "'k'" in str(caught.value)


@pytest.mark.parametrize("k", [1, 10, MAX_K])
def test_valid_arguments_pass(k: int) -> None:
    assert MAX_K == 10_000
    check_search(" a question ", k)


class _CountingEmbedder:
    """An embedder that records every query it is asked to embed."""

    def __init__(self) -> None:
        self._inner = HashEmbedder(dimension=16)
        self.queries: list[str] = []

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self._inner.embed(texts)

    def embed_query(self, text: str) -> Vectors:
        self.queries.append(text)
        return self._inner.embed_query(text)


def test_a_repeated_query_is_served_from_the_cache() -> None:
    embedder = _CountingEmbedder()
    cache = QueryEmbeddingCache(embedder)
    first = cache.get("where is the lighthouse")
    second = cache.get("where is the lighthouse")
    assert embedder.queries == ["where is the lighthouse"]
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(
        first, HashEmbedder(dimension=16).embed_query("where is the lighthouse")
    )
    cache.get("another question")
    assert embedder.queries == ["where is the lighthouse", "another question"]


def test_the_least_recently_used_query_is_evicted_beyond_the_size() -> None:
    embedder = _CountingEmbedder()
    cache = QueryEmbeddingCache(embedder, size=2)
    cache.get("a")
    cache.get("b")
    cache.get("a")  # a is now the most recently used
    cache.get("c")  # evicts b
    assert embedder.queries == ["a", "b", "c"]
    cache.get("a")
    cache.get("c")
    assert embedder.queries == ["a", "b", "c"], "a and c are still cached"
    cache.get("b")  # was evicted: embedded again, which evicts a (least recent)
    assert embedder.queries == ["a", "b", "c", "b"]
    cache.get("c")
    assert embedder.queries == ["a", "b", "c", "b"]
    cache.get("a")
    assert embedder.queries == ["a", "b", "c", "b", "a"]


def test_get_soon_embeds_beside_the_caller_and_then_serves_the_cache() -> None:
    import threading

    started, release = threading.Event(), threading.Event()
    threads: list[str] = []

    class _Slow(_CountingEmbedder):
        def embed_query(self, text: str) -> Vectors:
            started.set()
            assert release.wait(300), "the caller never let the embedding finish"
            threads.append(threading.current_thread().name)
            return super().embed_query(text)

    embedder = _Slow()
    cache = QueryEmbeddingCache(embedder)
    vector_of = cache.get_soon("where is the lighthouse")
    assert started.wait(300)  # running while this thread goes on (the bound catches a hang)
    release.set()
    vector = vector_of()
    assert threads[0] != threading.current_thread().name
    np.testing.assert_array_equal(vector, cache.get_soon("where is the lighthouse")())
    assert embedder.queries == ["where is the lighthouse"]


def test_get_soon_raises_the_embedders_error_when_asked_for_the_vector() -> None:
    class _Failing(_CountingEmbedder):
        def embed_query(self, text: str) -> Vectors:
            raise RuntimeError("model gone")

    vector_of = QueryEmbeddingCache(_Failing()).get_soon("q")
    with pytest.raises(RuntimeError, match="model gone"):
        vector_of()
