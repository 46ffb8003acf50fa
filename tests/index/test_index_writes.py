"""Indexes changed by writes equal indexes rebuilt from scratch (BM25 segments, dense tail).

Each write adds a BM25 segment and tombstones what it removes; the dense index appends to a
tail and tombstones its base. Whatever the sequence of adds, deletes, merges, compactions and
save/load round trips, search must give what a fresh build over the live texts gives.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from unittest import mock

import bm25s
import numpy as np
import numpy.typing as npt
import pytest
import Stemmer
from hypothesis import given, settings
from hypothesis import strategies as st

from windowpack.index import appendable_dense
from windowpack.index.appendable_dense import AppendableFaissIndex
from windowpack.index.base import AnnSettings
from windowpack.index.dense import FaissIndex
from windowpack.index.lexical import Bm25Index

WORDS = [
    "river",
    "orchestra",
    "garden",
    "comet",
    "lantern",
    "harbor",
    "violin",
    "meadow",
    "glacier",
    "falcon",
    "copper",
    "saddle",
    "pepper",
    "marble",
    "thunder",
    "canyon",
    "willow",
    "ember",
    "quartz",
    "lagoon",
]
QUERIES = ["river garden", "comet lantern harbor", "violin", "glacier falcon copper", "ember"]


def _text(seed: int) -> str:
    """Two or three sentences over a small shared vocabulary, so terms recur across texts."""
    rng = np.random.default_rng(seed)
    sentences = []
    for _ in range(int(rng.integers(1, 4))):
        words = rng.choice(WORDS, size=int(rng.integers(3, 9)))
        sentences.append("The " + " ".join(words) + ".")
    return " ".join(sentences)


POOL = {chunk_id: _text(chunk_id) for chunk_id in range(1, 41)}

# A write: add these pool ids (those not live yet) or remove these (those live).
writes = st.lists(
    st.tuples(st.booleans(), st.lists(st.sampled_from(sorted(POOL)), min_size=1, max_size=6)),
    min_size=1,
    max_size=12,
)


def _assert_same_lexical(changed: Bm25Index, live: set[int]) -> None:
    ids = sorted(live)
    rebuilt = Bm25Index.build(ids, [POOL[i] for i in ids], language="en")
    for query in QUERIES:
        got_ids, got_scores = changed.search(query, 8)
        want_ids, want_scores = rebuilt.search(query, 8)
        assert got_ids.tolist() == want_ids.tolist(), query
        np.testing.assert_allclose(got_scores, want_scores, rtol=1e-5)
    assert changed.size == len(live)


@settings(max_examples=40, deadline=None)
@given(first=st.sets(st.sampled_from(sorted(POOL)), max_size=15), steps=writes)
def test_bm25_after_adds_and_deletes_equals_a_rebuild(first: set[int], steps: list) -> None:
    ids = sorted(first)
    index = Bm25Index.build(ids, [POOL[i] for i in ids], language="en")
    live = set(first)
    with tempfile.TemporaryDirectory() as folder:
        for step, (is_add, chosen) in enumerate(steps):
            index = index.copy()
            if is_add:
                new = sorted(set(chosen) - live)
                index.add(np.asarray(new, dtype=np.int64), [POOL[i] for i in new])
                live |= set(new)
            else:
                index.remove(np.asarray(sorted(set(chosen)), dtype=np.int64))
                live -= set(chosen)
            if step % 3 == 2:  # a save and load between writes, as a new process would
                index.save(Path(folder) / f"v{step}")
                index = Bm25Index.load(Path(folder) / f"v{step}")
            _assert_same_lexical(index, live)


def test_bm25_scores_are_those_of_bm25s_itself() -> None:
    """One sentence per chunk, so each chunk's score is bm25s's score of that document."""
    texts = [f"The {' '.join(np.random.default_rng(s).choice(WORDS, 6))}." for s in range(30)]
    ours = Bm25Index.build(list(range(10)), texts[:10], language="en")
    ours.add(np.arange(10, 30), texts[10:])
    stemmer = Stemmer.Stemmer("english")
    reference = bm25s.BM25()
    reference.index(
        bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    for query in QUERIES:
        tokens = bm25s.tokenize([query], stopwords="en", stemmer=stemmer, show_progress=False)
        positions, scores = reference.retrieve(tokens, k=30, show_progress=False, n_threads=0)
        expected = {int(p): float(s) for p, s in zip(positions[0], scores[0], strict=True) if s > 0}
        got_ids, got_scores = ours.search(query, 30)
        assert dict(zip(got_ids.tolist(), got_scores.tolist(), strict=True)) == pytest.approx(
            expected, rel=1e-5
        )


def test_removed_chunks_leave_the_collection_statistics() -> None:
    """A deleted chunk's terms stop counting towards idf: a term gets rarer, scores rise."""
    index = Bm25Index.build([1, 2, 3], ["The comet shone.", "The comet fell.", "The river ran."])
    _, before = index.search("comet", 3)
    index.remove(np.asarray([2]))
    ids, after = index.search("comet", 3)
    assert ids.tolist() == [1]
    assert after[0] > before[0]


def test_many_small_writes_keep_few_segments() -> None:
    index = Bm25Index.build([], [])
    for chunk_id in sorted(POOL):
        index.add(np.asarray([chunk_id]), [POOL[chunk_id]])
    assert index.segment_count <= 6, "merges keep about log(n) segments"
    _assert_same_lexical(index, set(POOL))


def test_a_new_version_links_the_segments_it_did_not_change(tmp_path: Path) -> None:
    index = Bm25Index.build(list(range(1, 31)), [POOL[i] for i in range(1, 31)])
    index.save(tmp_path / "v1")
    changed = index.copy()
    changed.add(np.asarray([31]), [POOL[31]])  # a segment of its own: 1 sentence beside 30
    changed.save(tmp_path / "v2")
    (old,) = (tmp_path / "v1").glob("segment-*.npz")
    shared = tmp_path / "v2" / old.name
    assert shared.exists()
    assert shared.stat().st_ino == old.stat().st_ino, "hard-linked, not written again"
    assert len(list((tmp_path / "v2").glob("segment-*.npz"))) == 2
    assert Bm25Index.load(tmp_path / "v1").size == 30, "the old version is unchanged"


def test_a_copy_changed_by_a_writer_leaves_the_original_as_it_was() -> None:
    index = Bm25Index.build([1, 2], [POOL[1], POOL[2]])
    before = [index.search(query, 5)[0].tolist() for query in QUERIES]
    changed = index.copy()
    changed.add(np.asarray([3, 4]), [POOL[3], "Zeppelins drift."])
    changed.remove(np.asarray([1]))
    assert [index.search(query, 5)[0].tolist() for query in QUERIES] == before
    assert index.search("zeppelins", 5)[0].tolist() == []
    assert changed.search("zeppelins", 5)[0].tolist() == [4]


# --- the dense index: base, tail, tombstones --------------------------------------------------

DIMENSION = 16
VECTORS = {
    chunk_id: vector / np.linalg.norm(vector)
    for chunk_id, vector in enumerate(
        np.random.default_rng(3).normal(size=(60, DIMENSION)).astype(np.float32), start=1
    )
}
QUERY_VECTORS = np.random.default_rng(4).normal(size=(5, DIMENSION)).astype(np.float32)


def _matrix(ids: list[int]) -> npt.NDArray[np.float32]:
    return np.vstack([VECTORS[i] for i in ids]) if ids else np.zeros((0, DIMENSION), np.float32)


def _assert_same_dense(changed: AppendableFaissIndex, live: set[int]) -> None:
    ids = sorted(live)
    exact = FaissIndex.build(
        DIMENSION, np.asarray(ids, np.int64), _matrix(ids), ann_threshold=10**9
    )
    assert changed.size == len(live)
    for query in QUERY_VECTORS:
        got_ids, got_scores = changed.search(query, 7)
        want_ids, want_scores = exact.search(query, 7)
        assert got_ids.tolist() == want_ids.tolist()
        np.testing.assert_allclose(got_scores, want_scores, rtol=1e-5, atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(
    first=st.sets(st.sampled_from(sorted(VECTORS)), max_size=20),
    steps=st.lists(
        st.tuples(
            st.booleans(), st.lists(st.sampled_from(sorted(VECTORS)), min_size=1, max_size=8)
        ),
        min_size=1,
        max_size=12,
    ),
)
def test_dense_after_adds_and_deletes_equals_a_rebuild(first: set[int], steps: list) -> None:
    ids = sorted(first)
    base = FaissIndex.build(DIMENSION, np.asarray(ids, np.int64), _matrix(ids), ann_threshold=10**9)
    index = AppendableFaissIndex.build(base, np.asarray(ids, np.int64))
    live = set(first)
    # Compact after a few changes, so that folding into a new base is exercised too.
    with mock.patch.object(appendable_dense, "_COMPACT_MIN", 6), tempfile.TemporaryDirectory() as d:
        for step, (is_add, chosen) in enumerate(steps):
            index = index.copy()
            if is_add:
                new = sorted(set(chosen) - live)
                index.add(np.asarray(new, dtype=np.int64), _matrix(new))
                live |= set(new)
            else:
                index.remove(np.asarray(sorted(set(chosen)), dtype=np.int64))
                live -= set(chosen)
            if step % 3 == 2:
                index.save(Path(d) / f"v{step}")
                index = AppendableFaissIndex.load(Path(d) / f"v{step}")
            _assert_same_dense(index, live)


def test_a_dense_version_links_its_unchanged_base(tmp_path: Path) -> None:
    ids = list(range(1, 41))
    base = FaissIndex.build(DIMENSION, np.asarray(ids), _matrix(ids), ann_threshold=10**9)
    index = AppendableFaissIndex.build(base, np.asarray(ids))
    index.save(tmp_path / "v1")
    changed = index.copy()
    changed.add(np.asarray([41]), _matrix([41]))
    changed.remove(np.asarray([3]))
    changed.save(tmp_path / "v2")
    (old,) = (tmp_path / "v1").glob("*.faiss")
    assert (tmp_path / "v2" / old.name).stat().st_ino == old.stat().st_ino
    assert changed.pending == (1, 1)
    assert AppendableFaissIndex.load(tmp_path / "v1").size == 40
    assert AppendableFaissIndex.load(tmp_path / "v2").size == 40


def test_tombstones_on_an_ivf_base_exclude_deleted_ids_inside_the_search() -> None:
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(800, DIMENSION)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = np.arange(800, dtype=np.int64)
    index = AppendableFaissIndex.build(
        FaissIndex.build(DIMENSION, ids, vectors, ann_threshold=100, ann=AnnSettings(kind="ivf")),
        ids,
    )
    assert index.kind == "ivf"
    nearest = index.search(vectors[17], 10)[0]
    assert nearest[0] == 17
    index.remove(nearest[:5])
    after = index.search(vectors[17], 10)[0]
    assert not set(after.tolist()) & set(nearest[:5].tolist())
    assert len(after) == 10, "the search still fills k from the live vectors"


def test_an_hnsw_base_takes_deletes_as_tombstones_and_folds_them_by_a_rebuild() -> None:
    rng = np.random.default_rng(6)
    vectors = rng.normal(size=(600, DIMENSION)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = np.arange(100, 700, dtype=np.int64)
    hnsw = AnnSettings(kind="hnsw", neighbours=16, ef_search=64)
    base = FaissIndex.build(DIMENSION, ids, vectors, ann_threshold=100, ann=hnsw)
    index = AppendableFaissIndex.build(base, ids)
    assert index.kind == "hnsw"
    index.remove(ids[:30])
    assert index.pending == (0, 30)
    assert not set(index.search(vectors[5], 20)[0].tolist()) & set(ids[:30].tolist())
    index.compact()  # HNSW has no remove_ids: a new graph over the live vectors
    assert index.pending == (0, 0)
    assert index.kind == "hnsw"
    assert index.size == 570
    assert index.search(vectors[40], 1)[0].tolist() == [ids[40]]
    assert ids[5] not in index.search(vectors[5], 20)[0].tolist()


def test_an_hnsw_base_folds_additions_alone_into_its_graph_and_keeps_the_old_base(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(8)
    vectors = rng.normal(size=(700, DIMENSION)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = np.arange(700, dtype=np.int64)
    hnsw = AnnSettings(kind="hnsw", neighbours=16, ef_search=64)
    FaissIndex.build(DIMENSION, ids[:600], vectors[:600], ann_threshold=100, ann=hnsw).save(
        tmp_path / "base.faiss"
    )
    base = FaissIndex.load(tmp_path / "base.faiss", hnsw)  # mapped: FAISS aborts on growing it
    grown = base.rewritten(
        removed=np.zeros(0, dtype=np.int64), added_ids=ids[600:], added_vectors=vectors[600:]
    )
    assert grown.kind == "hnsw" and grown.size == 700 and base.size == 600
    assert grown.search(vectors[650], 1)[0].tolist() == [650]
    assert grown.search(vectors[40], 1)[0].tolist() == [40]
    assert 650 not in base.search(vectors[650], 5)[0].tolist()


def test_a_growing_hnsw_base_takes_its_tail_into_the_graph_and_keeps_few_tombstones() -> None:
    rng = np.random.default_rng(9)
    vectors = rng.normal(size=(3_000, DIMENSION)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = np.arange(3_000, dtype=np.int64)
    hnsw = AnnSettings(kind="hnsw", neighbours=16, ef_search=64)
    base = FaissIndex.build(DIMENSION, ids[:500], vectors[:500], ann_threshold=100, ann=hnsw)
    index = AppendableFaissIndex.build(base, ids[:500])
    index.remove(ids[:10])  # a few tombstones, as every write leaves
    with mock.patch.object(
        FaissIndex, "_stored", side_effect=AssertionError("the graph was rebuilt")
    ):
        index.add(ids[500:], vectors[500:])  # past the compaction share: folded in
    assert index.pending == (0, 10)
    assert index.size == 2_990
    assert index.search(vectors[2_500], 1)[0].tolist() == [2_500]
    assert not set(index.search(vectors[5], 20)[0].tolist()) & set(ids[:10].tolist())
    # A tombstoned id coming back (a reused id) must not stay hidden: that fold rebuilds.
    index.remove(ids[600:2_700])
    index.add(ids[5:6], vectors[5:6])
    assert index.pending[1] == 0
    assert index.search(vectors[5], 1)[0].tolist() == [5]
