"""Tests for the BM25 lexical index: ranking, stop words, chunk ids, files."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windowpack.errors import StorageError
from windowpack.index import segments as bm25_segments
from windowpack.index.lexical import Bm25Index
from windowpack.index.segments import CompressedArrays, Segment

# Non-contiguous, unordered chunk ids, as after deletes and upserts.
IDS = [904, 12, 5077, 33, 1_000_001, 8]
TEXTS = [
    "The orchestra tuned their instruments before the evening concert began.",
    "Music lessons teach children rhythm, and the concert hall hosts music every week.",
    "A single xylophone solo closed the music festival to loud applause.",
    "The music critic wrote about the concert and the orchestra for the newspaper.",
    "Gardeners prune roses in early spring to encourage healthy growth.",
    "Music streaming services changed how listeners discover new music.",
]


@pytest.fixture
def index() -> Bm25Index:
    return Bm25Index.build(IDS, TEXTS)


def test_the_chunk_with_a_rare_query_term_ranks_first(index: Bm25Index) -> None:
    ids, scores = index.search("music xylophone", 10)
    assert ids[0] == 5077
    assert scores[0] > scores[1]
    assert np.all(np.diff(scores) <= 0), "best first"
    assert 8 in ids.tolist(), "chunks sharing only the common term still score"


def test_chunks_sharing_no_term_with_the_query_are_left_out(index: Bm25Index) -> None:
    ids, scores = index.search("roses", 10)
    assert ids.tolist() == [1_000_001]
    assert scores[0] > 0


def test_stemming_matches_other_forms_of_a_word(index: Bm25Index) -> None:
    ids, _ = index.search("pruning", 10)
    assert ids.tolist() == [1_000_001]


@pytest.mark.parametrize("query", ["the and of", "The, THE; a an!", "?!...", "   "])
def test_a_query_of_only_stop_words_or_punctuation_returns_nothing(
    index: Bm25Index, query: str
) -> None:
    ids, scores = index.search(query, 10)
    assert ids.shape == (0,)
    assert scores.shape == (0,)
    assert ids.dtype == np.int64


def test_a_query_of_unknown_words_returns_nothing(index: Bm25Index) -> None:
    ids, _ = index.search("zeppelin quasar", 10)
    assert ids.shape == (0,)


def test_ids_map_back_to_the_given_chunk_ids(index: Bm25Index) -> None:
    distinctive = {
        904: "instruments",
        12: "rhythm",
        5077: "xylophone",
        33: "newspaper",
        1_000_001: "gardeners",
        8: "streaming",
    }
    for chunk_id, word in distinctive.items():
        ids, _ = index.search(word, 3)
        assert ids.tolist() == [chunk_id], word
        assert ids.dtype == np.int64
    assert index.size == len(IDS)


def test_k_limits_the_results(index: Bm25Index) -> None:
    ids, scores = index.search("music", 2)
    assert len(ids) == 2
    assert len(scores) == 2
    every, _ = index.search("music", 100)
    assert every[:2].tolist() == ids.tolist()
    assert set(every.tolist()) == {12, 5077, 33, 8}


def test_save_then_load_gives_identical_results(index: Bm25Index, tmp_path: Path) -> None:
    folder = tmp_path / "lexical-v3"
    index.save(folder)
    assert folder.is_dir()
    assert not (tmp_path / "lexical-v3.tmp").exists()
    loaded = Bm25Index.load(folder)
    assert loaded.size == index.size
    for query in ["music xylophone", "concert orchestra", "spring roses", "newspaper music"]:
        ids_a, scores_a = index.search(query, 10)
        ids_b, scores_b = loaded.search(query, 10)
        np.testing.assert_array_equal(ids_a, ids_b)
        np.testing.assert_allclose(scores_a, scores_b, rtol=1e-6)
        assert len(ids_a) > 0


def test_a_saved_segment_loads_mapped_from_its_file_with_the_same_matrices(
    index: Bm25Index, tmp_path: Path
) -> None:
    (segment,) = index._segments
    path = tmp_path / segment.name
    segment.save(path)
    loaded = Segment.load(path)
    for matrix in ("rows", "columns"):
        mine, theirs = getattr(segment, matrix), getattr(loaded, matrix)
        assert _mapped(theirs.data) and _mapped(theirs.indices)  # the file's pages, no copy
        _assert_same_arrays(mine, theirs)
    assert loaded.words == segment.words and np.array_equal(loaded.owners, segment.owners)


def _assert_same_arrays(mine: Any, theirs: Any) -> None:
    """Two compressed matrices (scipy's, or `CompressedArrays`) hold the same arrays."""
    assert tuple(mine.shape) == tuple(theirs.shape)
    for name in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(getattr(mine, name), getattr(theirs, name))


@settings(max_examples=80, deadline=None)
@given(
    matrix=st.lists(st.lists(st.integers(0, 3), min_size=5, max_size=5), min_size=1, max_size=9),
    picks=st.lists(st.integers(0, 8), max_size=12),
)
def test_compressed_arrays_take_rows_as_scipy_does(
    matrix: list[list[int]], picks: list[int]
) -> None:
    from scipy import sparse

    dense = np.asarray(matrix, dtype=np.float32)
    rows = np.asarray([pick % len(matrix) for pick in picks], dtype=np.intp)
    csr = sparse.csr_matrix(dense)
    arrays = CompressedArrays(csr.data, csr.indices, csr.indptr, csr.shape)
    _assert_same_arrays(arrays[rows], csr[rows])


def _mapped(array: np.ndarray) -> bool:
    """Whether `array` is (a view of) an array mapped from a file."""
    while array is not None:
        if isinstance(array, np.memmap):
            return True
        array = array.base
    return False


def test_a_segment_file_without_columns_still_loads(index: Bm25Index, tmp_path: Path) -> None:
    (segment,) = index._segments
    path = tmp_path / "old-layout.npz"  # as segments were saved before the columns were
    rows = segment.rows
    np.savez(
        path,
        owners=segment.owners,
        lengths=segment.lengths,
        data=rows.data,
        indices=rows.indices,
        indptr=rows.indptr,
        shape=np.asarray(rows.shape, dtype=np.int64),
        first_word_id=np.asarray(segment.first_word_id, dtype=np.int64),
        words=np.asarray(segment.words, dtype=str),
    )
    loaded = Segment.load(path)
    _assert_same_arrays(loaded.columns, segment.columns)


def test_a_segment_file_cut_short_is_refused(index: Bm25Index, tmp_path: Path) -> None:
    (segment,) = index._segments
    path = tmp_path / segment.name
    segment.save(path)
    path.write_bytes(path.read_bytes()[:-200])
    with pytest.raises((ValueError, OSError, zipfile.BadZipFile)):
        Segment.load(path)


def test_save_replaces_an_existing_folder(index: Bm25Index, tmp_path: Path) -> None:
    folder = tmp_path / "lexical"
    Bm25Index.build([1], ["only gardeners here"]).save(folder)
    index.save(folder)
    loaded = Bm25Index.load(folder)
    assert loaded.size == len(IDS)
    assert loaded.search("xylophone", 5)[0].tolist() == [5077]


def test_an_empty_index_saves_loads_and_returns_nothing(tmp_path: Path) -> None:
    empty = Bm25Index.build([], [])
    assert empty.size == 0
    assert empty.search("anything at all", 5)[0].shape == (0,)
    folder = tmp_path / "lexical-v0"
    empty.save(folder)
    loaded = Bm25Index.load(folder)
    assert loaded.size == 0
    ids, scores = loaded.search("anything at all", 5)
    assert ids.shape == (0,)
    assert scores.shape == (0,)


def test_loading_a_missing_folder_raises_storage_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError):
        Bm25Index.load(tmp_path / "absent")


def test_loading_a_damaged_folder_raises_storage_error(index: Bm25Index, tmp_path: Path) -> None:
    folder = tmp_path / "lexical"
    index.save(folder)
    for path in folder.iterdir():
        path.write_bytes(b"\x00garbage")
    with pytest.raises(StorageError) as caught:
        Bm25Index.load(folder)
    assert str(folder) in str(caught.value)


@pytest.mark.parametrize("texts", [["To be, or not to be."], ["x"], ["?!", "the and of"]])
def test_chunks_without_an_indexable_word_make_a_valid_index_that_finds_nothing(
    texts: list[str], tmp_path: Path
) -> None:
    # bm25s cannot index an empty vocabulary, yet chunks with no word to index are valid.
    index = Bm25Index.build(list(range(len(texts))), texts)
    assert index.size == len(texts), "the chunks are counted even with no word to index"
    assert index.search("to be", 5)[0].shape == (0,)
    folder = tmp_path / "lexical-v1"
    index.save(folder)
    loaded = Bm25Index.load(folder)
    assert loaded.size == len(texts)
    ids, scores = loaded.search("be or not", 5)
    assert ids.shape == (0,) and scores.shape == (0,)


@pytest.mark.parametrize("sort_cost", [0, 16, 10**9])
def test_a_segment_is_scored_from_its_postings_as_a_dense_pass_would(
    index: Bm25Index, monkeypatch: pytest.MonkeyPatch, sort_cost: int
) -> None:
    """Whichever way the sentences are summed (sorted postings, or one pass over every
    sentence), each sentence holding a query term gets the dense pass's score, in ascending
    order, and the others are left out; a dead sentence scores 0."""
    monkeypatch.setattr(bm25_segments, "_SORT_COST", sort_cost)
    segment, live = index._segments[0], index._live[0].copy()
    live[1] = False
    words = index.terms("music concert orchestra xylophone")
    terms = [index._vocabulary[word] for word in words if word in index._vocabulary]
    rows, scores = bm25_segments.score_segment(segment, live, terms, index._stats)
    dense = np.zeros(segment.count)
    columns = segment.columns
    for term, idf in zip(terms, index._stats.idf(terms), strict=True):
        for posting in range(columns.indptr[term], columns.indptr[term + 1]):
            row, frequency = columns.indices[posting], columns.data[posting]
            norm = bm25_segments.K1 * (
                1
                - bm25_segments.B
                + bm25_segments.B * segment.lengths[row] / index._stats.average_length
            )
            dense[row] += idf * frequency / (norm + frequency) * live[row]
    assert list(rows) == sorted(set(rows))
    assert set(rows) >= set(np.flatnonzero(dense))
    np.testing.assert_array_equal(scores, dense[rows])  # the same floats, not just close


class _Unread:
    """Stands for a segment's rows where a test asserts they are never read."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"the rows were read ({name})")


def test_whole_segments_give_their_statistics_from_the_postings_without_the_rows() -> None:
    index = Bm25Index.build(IDS, TEXTS)
    index.add(np.asarray([71]), ["Tapirs browse on river plants."])  # words of its own
    expected = index._stats
    assert len(index._segments) == 2
    # Counted from the rows, as deletes do: the reference.
    counted = bm25_segments.Statistics.empty()
    for segment in index._segments:
        counted = counted.changed(
            sign=1, sentences=segment.rows, lengths=segment.lengths, vocabulary=index._words
        )
    unread = [
        Segment(
            owners=segment.owners,
            lengths=segment.lengths,
            rows=_Unread(),  # type: ignore[arg-type]
            first_word_id=segment.first_word_id,
            words=segment.words,
            name=segment.name,
            columns=segment.columns,
        )
        for segment in index._segments
    ]
    loaded = Bm25Index(unread, index._live)
    for stats in (expected, loaded._stats):
        assert (stats.documents, stats.total_length) == (counted.documents, counted.total_length)
        np.testing.assert_array_equal(stats.term_documents, counted.term_documents)
    for query in ("music concert", "orchestra newspaper", "tapirs and roses"):
        np.testing.assert_array_equal(loaded.search(query, 5)[0], index.search(query, 5)[0])


def test_compact_lengths_hold_every_length_in_the_smallest_type() -> None:
    """Sentences longer than a byte's range take two bytes each; every length is kept."""
    long = "tapir " + " ".join(f"word{i}" for i in range(400))  # one sentence of 401 terms
    index = Bm25Index.build([1, 2], ["A short line about a tapir.", long])
    segment = index._segments[0]
    assert segment.compact_lengths.dtype == np.uint16
    np.testing.assert_array_equal(segment.compact_lengths, segment.lengths)
    small = Bm25Index.build(IDS, TEXTS)._segments[0]
    assert small.compact_lengths.dtype == np.uint8
    ids, _ = index.search("tapir", 2)
    assert ids.tolist() == [1, 2], "the short sentence first: its one tapir weighs more"


def _counted(index: Bm25Index, text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for term in index.terms(text):
        counts[term] = counts.get(term, 0) + 1
    return counts


def test_term_counts_are_the_counted_terms_of_each_text_as_indexed(
    index: Bm25Index, tmp_path: Path
) -> None:
    # Grown in several writes (segments merged), one chunk written again, one removed,
    # then saved and loaded (rows mapped from the files).
    index.add(np.asarray([70, 71], dtype=np.int64), ["os.path.join twice: os.path.join", "a b"])
    index.remove(np.asarray([33, 71], dtype=np.int64))
    index.add(np.asarray([33], dtype=np.int64), ["The critic's second music review."])
    index.save(tmp_path / "bm25")
    loaded = Bm25Index.load(tmp_path / "bm25")
    texts = dict(zip(IDS, TEXTS, strict=True))
    texts.update({70: "os.path.join twice: os.path.join", 33: "The critic's second music review."})
    wanted = [8, 70, 33, 904, 5077]
    for source in (index, loaded):
        assert source.term_counts(wanted) == [_counted(index, texts[i]) for i in wanted]
    assert loaded.term_counts([70])[0]["os.path.join"] == 2  # type: ignore[index]


def test_term_counts_cannot_say_for_an_unknown_unit_or_sentence_rows(index: Bm25Index) -> None:
    assert index.term_counts([904, 999]) is None  # 999 was never indexed
    assert index.term_counts([]) == []
    by_sentence = Bm25Index.build(IDS, TEXTS, row_unit="sentence")
    assert by_sentence.term_counts([904]) is None
