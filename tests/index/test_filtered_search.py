"""Searches limited to the units a filter keeps (`within=`): inside the search, not after.

Each index is checked against the brute-force answer over the kept units alone: the exact
kinds (flat, HNSW by position, the tail, BM25) must give exactly its top k, an HNSW limited
by a selector most of it, and none may return a unit the filter drops, however few it keeps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windowpack.index import KeptCache, KeptUnits, SentenceIndex, node_index_id
from windowpack.index import dense as dense_module
from windowpack.index.appendable_dense import AppendableFaissIndex
from windowpack.index.dense import FaissIndex
from windowpack.index.factory import build_vector_index, load_vector_index
from windowpack.index.lexical import Bm25Index
from windowpack.index.sentences import SLOTS

Matrix = npt.NDArray[np.float32]
NEVER_ANN = 10**9


def _normalised(rows: np.ndarray) -> Matrix:
    return np.asarray(rows / np.linalg.norm(rows, axis=1, keepdims=True), dtype=np.float32)


def _corpus(seed: int, count: int, dimension: int = 16) -> tuple[npt.NDArray[np.int64], Matrix]:
    rng = np.random.default_rng(seed)
    ids = rng.choice(10**6, size=count, replace=False).astype(np.int64)
    return ids, _normalised(rng.normal(size=(count, dimension)))


def _brute_force(ids: np.ndarray, vectors: Matrix, query: Matrix, k: int) -> list[int]:
    scores = vectors @ query
    order = np.lexsort((ids, -scores))[:k]
    return [int(i) for i in ids[order]]


def _query(seed: int, dimension: int = 16) -> Matrix:
    return _normalised(np.random.default_rng(seed).normal(size=(1, dimension)))[0]


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    share=st.sampled_from([0.0, 0.01, 0.1, 0.5, 0.9, 1.0]),
    k=st.integers(1, 80),
    ann=st.booleans(),
)
def test_a_dense_search_within_kept_units_is_the_exact_top_k_of_those_units(
    seed: int, share: float, k: int, ann: bool
) -> None:
    ids, vectors = _corpus(seed, 300)
    rng = np.random.default_rng(seed + 1)
    kept_ids = np.sort(rng.choice(ids, size=int(share * len(ids)), replace=False))
    index = build_vector_index(16, ids, vectors, ann_threshold=100 if ann else NEVER_ANN)
    query = _query(seed)
    found, scores = index.search(query, k, within=KeptUnits(kept_ids))
    keep = np.isin(ids, kept_ids)
    assert found.tolist() == _brute_force(ids[keep], vectors[keep], query, k)
    assert len(found) == min(k, len(kept_ids))  # filled from the kept units, whatever the share
    assert np.all(np.diff(scores) <= 1e-6)


def test_the_tail_and_the_tombstones_are_searched_within_the_kept_units_too() -> None:
    ids, vectors = _corpus(3, 400)
    index = build_vector_index(16, ids[:300], vectors[:300], ann_threshold=NEVER_ANN)
    index.add(ids[300:], vectors[300:])  # the tail
    index.remove(ids[:50])  # tombstones
    assert isinstance(index, AppendableFaissIndex) and index.pending == (100, 50)
    kept_ids = np.sort(ids[::3])  # some dead, some in the base, some in the tail
    live = np.isin(ids, kept_ids) & ~np.isin(ids, ids[:50])
    query = _query(4)
    found, _ = index.search(query, 40, within=KeptUnits(kept_ids))
    assert found.tolist() == _brute_force(ids[live], vectors[live], query, 40)


def test_a_reused_id_tombstoned_in_the_base_and_alive_in_the_tail_is_found_once() -> None:
    ids, vectors = _corpus(5, 200)
    index = build_vector_index(16, ids, vectors, ann_threshold=NEVER_ANN)
    index.remove(ids[:1])
    replacement = _normalised(np.ones((1, 16)))
    index.add(ids[:1], replacement)  # SQLite gave the deleted row's id to a new one
    found, scores = index.search(replacement[0], 5, within=KeptUnits(ids[:1]))
    assert found.tolist() == [int(ids[0])]
    assert scores[0] == pytest.approx(1.0, abs=1e-5)


def test_a_loaded_mapped_base_is_searched_in_place_within_the_kept_units(
    tmp_path: Path,
) -> None:
    ids, vectors = _corpus(8, 300)
    for threshold in (NEVER_ANN, 100):  # flat, HNSW
        built = build_vector_index(16, ids, vectors, ann_threshold=threshold)
        built.save(tmp_path / f"v{threshold}")
        loaded = load_vector_index(tmp_path / f"v{threshold}")
        kept_ids = np.sort(ids[:37])
        query = _query(9)
        found, _ = loaded.search(query, 10, within=KeptUnits(kept_ids))
        keep = np.isin(ids, kept_ids)
        assert found.tolist() == _brute_force(ids[keep], vectors[keep], query, 10)


@pytest.mark.parametrize("kind", ["hnsw", "flat"])
def test_past_the_exact_pass_a_large_share_is_searched_with_a_selector_or_a_mask(
    monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    monkeypatch.setattr(dense_module, "BY_POSITION_MAX", 10)
    ids, vectors = _corpus(11, 2000)
    threshold = 100 if kind == "hnsw" else NEVER_ANN
    base = FaissIndex.build(16, ids, vectors, ann_threshold=threshold)
    kept_ids = np.sort(ids[:1400])  # 70%: over half of a flat base, a mask
    selection = base.select(kept_ids)
    assert selection.positions is None
    assert (selection.selector is not None) is (kind == "hnsw")
    assert (selection.mask is not None) is (kind == "flat")
    keep = np.isin(ids, kept_ids)
    recalls = []
    for seed in range(10):
        query = _query(100 + seed)
        found, _ = base.search(query, 50, selection=selection)
        assert set(found.tolist()) <= set(kept_ids.tolist())
        expected = _brute_force(ids[keep], vectors[keep], query, 50)
        recalls.append(len(set(found.tolist()) & set(expected)) / 50)
    assert min(recalls) >= (0.9 if kind == "hnsw" else 1.0)


def test_a_kept_unit_set_keeps_exactly_its_ids_and_tells_chunks_from_nodes() -> None:
    kept = KeptUnits.of([5, 3, 9], [2])
    assert kept.ids.tolist() == [3, 5, 9, node_index_id(2)]
    assert kept.keeps(np.asarray([3, 4, 9, node_index_id(2), node_index_id(3)])).tolist() == [
        True,
        False,
        True,
        True,
        False,
    ]
    assert kept.chunk_count == 3 and len(kept) == 4
    assert not KeptUnits.of([], []).keeps(np.asarray([1, 2])).any()
    calls = []
    assert kept.derived("x", lambda: calls.append(1) or 7) == 7
    assert kept.derived("x", lambda: calls.append(1) or 8) == 7
    assert calls == [1]


def test_the_cache_of_kept_units_stays_within_its_bound_in_bytes() -> None:
    cache = KeptCache(max_bytes=10_000)
    for number in range(20):
        built = cache.get(("c", 1, str(number)), lambda: KeptUnits(np.arange(500, dtype=np.int64)))
        built.derived("mask", lambda: np.zeros(1000, dtype=np.bool_))
        cache.trim(keep=("c", 1, str(number)))
    assert len(cache) == 2  # 5,000 bytes each
    assert cache.get(("c", 1, "19"), lambda: KeptUnits(np.zeros(0, dtype=np.int64))).ids.size
    cache.discard_if(lambda key: True)
    assert len(cache) == 0


def test_bm25_within_kept_units_ranks_them_as_the_whole_index_does() -> None:
    rng = np.random.default_rng(2)
    words = ["otter", "lantern", "glacier", "meadow", "falcon", "quarry", "ember", "tundra"]
    texts = [
        ". ".join(" ".join(rng.choice(words, size=rng.integers(3, 9))) for _ in range(3)) + "."
        for _ in range(200)
    ]
    ids = np.arange(1, 201, dtype=np.int64) * 3
    index = Bm25Index.build(ids.tolist(), texts)
    everything, scores = index.search("otter glacier ember", 200)
    for share in (0.02, 0.3):
        kept_ids = np.sort(rng.choice(ids, size=int(share * 200), replace=False))
        found, found_scores = index.search("otter glacier ember", 10, within=KeptUnits(kept_ids))
        expected = everything[np.isin(everything, kept_ids)][:10]
        assert found.tolist() == expected.tolist()
        assert np.allclose(found_scores, scores[np.isin(everything, kept_ids)][:10])


def test_the_sentence_index_keeps_the_pieces_of_the_kept_chunks() -> None:
    rng = np.random.default_rng(6)
    chunk_ids = np.arange(1, 61, dtype=np.int64)
    piece_ids = np.concatenate([chunk * SLOTS + np.arange(3) for chunk in chunk_ids])
    vectors = _normalised(rng.normal(size=(len(piece_ids), 16)))
    index = SentenceIndex.build(16, piece_ids, vectors, ann_threshold=NEVER_ANN)
    kept = KeptUnits.of([4, 17], [])
    query = _query(7)
    found, _ = index.search(query, 5, within=kept)
    assert set(found.tolist()) == {4, 17}
    pieces, _ = index.search_pieces(query, 50, within=kept)
    assert sorted(pieces.tolist()) == sorted(
        [4 * SLOTS + o for o in range(3)] + [17 * SLOTS + o for o in range(3)]
    )
