"""Tests for the FAISS dense index: exact and IVF search, removal, copies, files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windowpack.errors import StorageError
from windowpack.index.base import AnnSettings
from windowpack.index.dense import FaissIndex

Matrix = npt.NDArray[np.float32]

NEVER_ANN = 10**9
# The IVF kind, still available though HNSW is the default ANN (index_kinds.DEFAULT_ANN).
IVF = AnnSettings(kind="ivf")


def _normalised(rows: np.ndarray) -> Matrix:
    return np.asarray(rows / np.linalg.norm(rows, axis=1, keepdims=True), dtype=np.float32)


def _random_vectors(rng: np.random.Generator, count: int, dimension: int) -> Matrix:
    return _normalised(rng.normal(size=(count, dimension)))


def _clustered(
    rng: np.random.Generator, count: int, dimension: int, clusters: int = 20
) -> tuple[Matrix, Matrix]:
    """Vectors around random centres, and the centres (to draw queries near them)."""
    centres = rng.normal(size=(clusters, dimension))
    assignment = rng.integers(0, clusters, count)
    vectors = _normalised(centres[assignment] + 0.3 * rng.normal(size=(count, dimension)))
    return vectors, centres


def _sparse_ids(rng: np.random.Generator, count: int) -> npt.NDArray[np.int64]:
    """Unique, non-contiguous, unordered ids, as chunk ids become after deletes."""
    return rng.choice(10**9, size=count, replace=False).astype(np.int64)


def _ivf_fixture(seed: int = 7) -> tuple[FaissIndex, FaissIndex, Matrix, npt.NDArray[np.int64]]:
    rng = np.random.default_rng(seed)
    vectors, centres = _clustered(rng, 1000, 32)
    ids = _sparse_ids(rng, 1000)
    ivf = FaissIndex.build(32, ids, vectors, ann_threshold=500, ann=IVF)
    exact = FaissIndex.build(32, ids, vectors, ann_threshold=NEVER_ANN)
    queries = _normalised(
        centres[rng.integers(0, len(centres), 40)] + 0.3 * rng.normal(size=(40, 32))
    )
    return ivf, exact, queries, ids


# --- exact search ---------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    count=st.integers(1, 300),
    dimension=st.sampled_from([4, 16, 48]),
    k=st.integers(1, 40),
)
def test_flat_top_k_equals_brute_force_cosine_ranking(
    seed: int, count: int, dimension: int, k: int
) -> None:
    rng = np.random.default_rng(seed)
    vectors = _random_vectors(rng, count, dimension)
    ids = _sparse_ids(rng, count)
    index = FaissIndex.build(dimension, ids, vectors, ann_threshold=NEVER_ANN)
    assert index.kind == "flat"
    assert index.size == count
    query = _random_vectors(rng, 1, dimension)[0]

    found, scores = index.search(query, k)

    cosine = vectors @ query
    expected_order = np.argsort(-cosine, kind="stable")[: min(k, count)]
    assert found.dtype == np.int64
    assert scores.dtype == np.float32
    assert len(found) == min(k, count)
    assert len(set(found.tolist())) == len(found)
    # The scores are the true cosines of the ids returned, and they are the k best ones.
    by_id = dict(zip(ids.tolist(), cosine.tolist(), strict=True))
    np.testing.assert_allclose(scores, [by_id[i] for i in found.tolist()], atol=1e-5)
    np.testing.assert_allclose(scores, cosine[expected_order], atol=1e-5)
    assert np.all(np.diff(scores) <= 1e-6), "best first"


def test_flat_top_k_ids_match_numpy_exactly_on_a_seeded_case() -> None:
    rng = np.random.default_rng(2024)
    vectors = _random_vectors(rng, 500, 64)
    ids = _sparse_ids(rng, 500)
    index = FaissIndex.build(64, ids, vectors, ann_threshold=NEVER_ANN)
    for query in _random_vectors(rng, 10, 64):
        found, _ = index.search(query, 10)
        expected = ids[np.argsort(-(vectors @ query))[:10]]
        np.testing.assert_array_equal(found, expected)


def test_kind_switches_to_ivf_at_the_threshold() -> None:
    rng = np.random.default_rng(1)
    vectors = _random_vectors(rng, 100, 8)
    ids = np.arange(100, dtype=np.int64)
    assert FaissIndex.build(8, ids, vectors, ann_threshold=101).kind == "flat"
    assert FaissIndex.build(8, ids, vectors, ann_threshold=100, ann=IVF).kind == "ivf"
    assert FaissIndex.build(8, ids, vectors, ann_threshold=100).kind == "hnsw"


# --- ANN recall -----------------------------------------------------------------------------


def test_ivf_recall_at_10_against_exact_search_is_at_least_0_9() -> None:
    ivf, exact, queries, _ = _ivf_fixture()
    assert ivf.kind == "ivf"
    assert exact.kind == "flat"
    assert ivf.size == exact.size == 1000
    recalls = []
    for query in queries:
        approximate, _ = ivf.search(query, 10)
        truth, _ = exact.search(query, 10)
        assert len(approximate) == 10
        recalls.append(len(set(approximate.tolist()) & set(truth.tolist())) / 10)
    assert float(np.mean(recalls)) >= 0.9


# --- removal --------------------------------------------------------------------------------


@pytest.mark.parametrize("threshold", [NEVER_ANN, 500])
def test_removed_ids_are_never_returned(threshold: int) -> None:
    rng = np.random.default_rng(3)
    vectors, _ = _clustered(rng, 1000, 32)
    ids = _sparse_ids(rng, 1000)
    index = FaissIndex.build(32, ids, vectors, ann_threshold=threshold, ann=IVF)
    removed = ids[::3]
    index.remove(removed)
    assert index.size == 1000 - len(removed)
    gone = set(removed.tolist())
    # Query with the removed vectors themselves: each would otherwise be its own best match.
    for row in range(0, 1000, 3 * 25):
        found, _ = index.search(vectors[row], 50)
        assert len(found) > 0
        assert not gone & set(found.tolist())
    everything, _ = index.search(vectors[1], index.size)
    assert not gone & set(everything.tolist())


def test_removing_nothing_changes_nothing() -> None:
    rng = np.random.default_rng(4)
    vectors = _random_vectors(rng, 20, 8)
    index = FaissIndex.build(8, np.arange(20, dtype=np.int64), vectors, ann_threshold=NEVER_ANN)
    index.remove(np.zeros(0, dtype=np.int64))
    assert index.size == 20


# --- files ----------------------------------------------------------------------------------


def _assert_same_results(a: FaissIndex, b: FaissIndex, queries: Matrix, k: int) -> None:
    for query in queries:
        ids_a, scores_a = a.search(query, k)
        ids_b, scores_b = b.search(query, k)
        np.testing.assert_array_equal(ids_a, ids_b)
        np.testing.assert_array_equal(scores_a, scores_b)


def test_flat_save_then_load_gives_identical_results(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    vectors = _random_vectors(rng, 200, 16)
    ids = _sparse_ids(rng, 200)
    index = FaissIndex.build(16, ids, vectors, ann_threshold=NEVER_ANN)
    path = tmp_path / "nested" / "dense.faiss"
    index.save(path)
    assert path.exists()
    assert sorted(p.name for p in path.parent.iterdir()) == ["dense.faiss"], "no temp file left"
    loaded = FaissIndex.load(path)
    assert loaded.kind == "flat"
    assert loaded.size == 200
    assert loaded.dimension == 16
    _assert_same_results(index, loaded, _random_vectors(rng, 10, 16), 15)


def test_ivf_save_then_load_gives_identical_results(tmp_path: Path) -> None:
    ivf, _, queries, _ = _ivf_fixture(seed=11)
    path = tmp_path / "ivf.faiss"
    ivf.save(path)
    loaded = FaissIndex.load(path)
    assert loaded.kind == "ivf"
    assert loaded.size == ivf.size
    _assert_same_results(ivf, loaded, queries, 10)


def test_save_replaces_an_existing_file(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    path = tmp_path / "dense.faiss"
    FaissIndex.build(8, np.arange(5), _random_vectors(rng, 5, 8), ann_threshold=NEVER_ANN).save(
        path
    )
    bigger = FaissIndex.build(
        8, np.arange(50), _random_vectors(rng, 50, 8), ann_threshold=NEVER_ANN
    )
    bigger.save(path)
    assert FaissIndex.load(path).size == 50


@pytest.mark.parametrize("content", [b"", b"not a faiss index at all", "half"])
def test_loading_a_corrupt_file_raises_storage_error(tmp_path: Path, content: bytes | str) -> None:
    path = tmp_path / "dense.faiss"
    if content == "half":
        rng = np.random.default_rng(8)
        FaissIndex.build(
            8, np.arange(30), _random_vectors(rng, 30, 8), ann_threshold=NEVER_ANN
        ).save(path)
        whole = path.read_bytes()
        path.write_bytes(whole[: len(whole) // 2])
    else:
        assert isinstance(content, bytes)
        path.write_bytes(content)
    with pytest.raises(StorageError) as caught:
        FaissIndex.load(path)
    assert str(path) in str(caught.value)


def test_loading_a_missing_file_raises_storage_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError):
        FaissIndex.load(tmp_path / "absent.faiss")


# --- copies and empty indexes ---------------------------------------------------------------


@pytest.mark.parametrize("threshold", [NEVER_ANN, 500])
def test_copy_is_independent_of_the_original(threshold: int) -> None:
    rng = np.random.default_rng(9)
    vectors, _ = _clustered(rng, 1000, 16)
    ids = np.arange(1000, dtype=np.int64) * 2
    original = FaissIndex.build(16, ids, vectors, ann_threshold=threshold, ann=IVF)
    copy = original.copy()
    assert copy.kind == original.kind
    assert copy.size == original.size

    copy.remove(ids[:10])
    assert copy.size == 990
    assert original.size == 1000
    found, _ = original.search(vectors[0], 1)
    assert found.tolist() == [0]

    extra = _random_vectors(rng, 1, 16)
    original.add(np.asarray([7777], dtype=np.int64), extra)
    assert original.size == 1001
    assert copy.size == 990
    found_original, _ = original.search(extra[0], 1)
    found_copy, _ = copy.search(extra[0], 5)
    assert found_original.tolist() == [7777]
    assert 7777 not in found_copy.tolist()


@pytest.mark.parametrize("k", [1, 10])
def test_search_on_an_empty_index_returns_empty_arrays(k: int) -> None:
    index = FaissIndex.build(
        8, np.zeros(0, dtype=np.int64), np.zeros((0, 8), dtype=np.float32), ann_threshold=100
    )
    assert index.kind == "flat"
    assert index.size == 0
    ids, scores = index.search(np.ones(8, dtype=np.float32) / np.sqrt(8), k)
    assert ids.shape == (0,)
    assert scores.shape == (0,)
    assert ids.dtype == np.int64
    assert scores.dtype == np.float32


def test_search_asking_for_more_than_the_index_holds_returns_all() -> None:
    rng = np.random.default_rng(10)
    vectors = _random_vectors(rng, 3, 8)
    index = FaissIndex.build(8, np.asarray([5, 9, 2]), vectors, ann_threshold=NEVER_ANN)
    ids, scores = index.search(vectors[1], 100)
    assert sorted(ids.tolist()) == [2, 5, 9]
    assert ids[0] == 9
    assert scores[0] == pytest.approx(1.0, abs=1e-5)


def test_empty_index_saves_and_loads(tmp_path: Path) -> None:
    index = FaissIndex.build(
        8, np.zeros(0, dtype=np.int64), np.zeros((0, 8), dtype=np.float32), ann_threshold=100
    )
    index.save(tmp_path / "empty.faiss")
    loaded = FaissIndex.load(tmp_path / "empty.faiss")
    assert loaded.size == 0
    assert loaded.search(np.ones(8, dtype=np.float32), 3)[0].shape == (0,)


@pytest.mark.parametrize("count", [2, 10])
def test_ivf_builds_and_searches_for_fewer_vectors_than_its_lists(count: int) -> None:
    # ann_threshold is any positive integer (StoreConfig only checks > 0), so IVF may be asked
    # for with very few vectors; it must still build and find a stored vector.
    rng = np.random.default_rng(12)
    vectors = _random_vectors(rng, count, 8)
    index = FaissIndex.build(8, np.arange(count, dtype=np.int64), vectors, ann_threshold=1, ann=IVF)
    assert index.size == count
    found, _ = index.search(vectors[-1], 1)
    assert found.tolist() == [count - 1]


def test_a_search_leaves_the_openmp_thread_count_as_it_was() -> None:
    """Searches run on one thread, but must not leave torch's embedding on one thread too."""
    import faiss

    index = FaissIndex.build(
        8, np.arange(50, dtype=np.int64), _random_vectors(np.random.default_rng(1), 50, 8),
        ann_threshold=1000,
    )  # fmt: skip
    before = faiss.omp_get_max_threads()
    index.search(_random_vectors(np.random.default_rng(2), 1, 8)[0], 5)
    assert faiss.omp_get_max_threads() == before


@pytest.mark.parametrize(
    ("threshold", "ann"),
    [(NEVER_ANN, AnnSettings()), (1, IVF), (1, AnnSettings())],
    ids=["flat", "ivf", "hnsw"],
)
def test_a_loaded_index_is_mapped_and_can_still_change_and_be_copied(
    tmp_path: Path, threshold: int, ann: AnnSettings
) -> None:
    rng = np.random.default_rng(7)
    vectors = _random_vectors(rng, 600, 16)
    ids = np.arange(600, dtype=np.int64) * 2
    built = FaissIndex.build(16, ids, vectors, ann_threshold=threshold, ann=ann)
    built.save(tmp_path / "base.faiss")
    loaded = FaissIndex.load(tmp_path / "base.faiss", ann)
    assert loaded.mapped and loaded.kind == built.kind
    query = vectors[5]
    assert np.array_equal(loaded.search(query, 10)[0], built.search(query, 10)[0])
    # FAISS aborts the process on growing a mapped index or its clone_index: these must not.
    copy = loaded.copy()
    extra = _random_vectors(rng, 3, 16)
    copy.add(np.asarray([1, 3, 5], dtype=np.int64), extra)
    assert copy.size == 603 and loaded.size == 600 and loaded.mapped
    assert copy.search(extra[1], 1)[0].tolist() == [3]
    rewritten = loaded.rewritten(
        removed=np.asarray([10], dtype=np.int64),
        added_ids=np.asarray([7], dtype=np.int64),
        added_vectors=extra[:1],
    )
    assert rewritten.size == 600 and 10 not in rewritten.search(vectors[5], 600)[0]
    loaded.add(np.asarray([9], dtype=np.int64), extra[2:])
    assert not loaded.mapped and loaded.search(extra[2], 1)[0].tolist() == [9]


def test_flat_search_is_the_exact_ranking_with_exclusions_before_and_after_a_change(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(11)
    vectors = _random_vectors(rng, 300, 16)
    ids = rng.permutation(np.arange(1000, 1300, dtype=np.int64))  # not in insertion order
    FaissIndex.build(16, ids, vectors, ann_threshold=10_000).save(tmp_path / "flat.faiss")
    index = FaissIndex.load(tmp_path / "flat.faiss")
    assert index.kind == "flat" and index.mapped
    query = vectors[7]
    excluded = np.sort(ids[:40])
    found, scores = index.search(query, 25, excluded=excluded)
    exact = vectors @ query
    exact[:40] = -np.inf
    expected = np.lexsort((ids, -exact))[:25]
    assert found.tolist() == ids[expected].tolist()
    np.testing.assert_allclose(scores, exact[expected], rtol=1e-5)
    extra = _random_vectors(rng, 1, 16)
    index.add(np.asarray([5], dtype=np.int64), extra)  # FAISS may move its vectors
    assert index.search(extra[0], 1)[0].tolist() == [5]
    assert index.search(query, 300, excluded=excluded)[0].shape == (261,)
