"""The window cache is bounded in bytes: many distinct large windows never hold more than
`StoreConfig.window_cache_bytes` between them."""

from __future__ import annotations

from pathlib import Path

import pytest

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.errors import InvalidArgumentError
from windowpack.pack.request import PackRequest
from windowpack.pack.window_cache import WindowCache, WindowKey, window_bytes

WORDS = ["harbour", "seals", "rest", "on", "sandbanks", "while", "barn", "owls", "voles"]


def _corpus() -> list[wp.Document]:
    return [
        wp.Document(
            id=f"d{i}",
            text=" ".join(f"{WORDS[(i + j) % len(WORDS)]}{j % 7}." for j in range(400)),
        )
        for i in range(12)
    ]


def test_distinct_windows_never_weigh_more_than_the_bound(tmp_path: Path) -> None:
    bound = 200_000
    config = StoreConfig(embedder="hash", chunk_tokens=64, window_cache_bytes=bound)
    with wp.open(tmp_path / "store", config=config) as store:
        col = store.collection("docs")
        col.add(_corpus())
        cache = store.packer._windows
        weights = []
        for budget in range(2000, 6000, 250):  # distinct requests, ~10-30 KB each
            window = col.pack(f"seals {budget}", budget=budget)
            weights.append(window_bytes(window))
            assert cache.bytes <= bound
        assert sum(weights) > 2 * bound  # the bound was tested, not merely not reached
        assert 0 < len(cache) < len(weights)
        # The most recent window is still answered from the cache.
        hits = store.window_cache_hits
        col.pack("seals 5750", budget=5750)
        assert store.window_cache_hits == hits + 1


def test_least_recently_used_goes_first_and_an_oversized_window_is_not_kept(
    tmp_path: Path,
) -> None:
    with wp.open(tmp_path / "store", config=StoreConfig(embedder="hash")) as store:
        col = store.collection("docs")
        col.add(_corpus()[:3])
        small = col.pack("seals", budget=300)
        cache = WindowCache(max_bytes=window_bytes(small) * 2 + 10)
        a, b, c, huge = (_key(version) for version in range(4))
        cache.put(a, small)
        cache.put(b, small)
        assert cache.get(a) is small  # a is now the most recent
        cache.put(c, small)
        assert cache.get(b) is None and cache.get(a) is small and cache.get(c) is small
        assert cache.bytes == 2 * window_bytes(small)
        cache.put(huge, col.pack("seals", budget=100_000))
        assert cache.get(huge) is None and cache.bytes <= cache.max_bytes
        cache.put(a, col.pack("seals", budget=100_000))  # too heavy: the old one goes too
        assert cache.get(a) is None and len(cache) == 1


def test_keys_of_a_request_and_of_the_lossless_window_differ_and_name_their_collections() -> None:
    request = PackRequest(query="seals", budget=300)
    versions = ((1, 4), (2, 7))
    assert WindowKey.of_request(versions, request) == WindowKey.of_request(versions, request)
    assert WindowKey.of_request(versions, request) != WindowKey.lossless(versions, "o200k_base")
    assert WindowKey.lossless(versions, "o200k_base") != WindowKey.lossless(versions, "cl100k_base")
    assert WindowKey.lossless(versions, "o200k_base").names(2)
    assert not WindowKey.of_request(versions, request).names(3)


def _key(version: int) -> WindowKey:
    return WindowKey.of_request(((1, version),), PackRequest(query="seals", budget=300))


def test_the_bound_must_be_positive() -> None:
    with pytest.raises(InvalidArgumentError, match="window_cache_bytes"):
        StoreConfig(window_cache_bytes=0)
