"""Immutable BM25 segments: term frequencies of sentences, scored with collection-wide stats.

bm25s bakes idf and the average length into the scores it stores at index time, so an index
built per write would score each new segment against its own statistics, and adding one
document would change the stored scores of every other. A segment here keeps the raw
material instead (a sentence x term matrix of term frequencies, each sentence's length and
owner), and a query scores every segment with the *collection's* live document count, average
length and document frequencies. The scores are then exactly those of one index built from
scratch over the live sentences, whatever the segmentation (tests/index/test_index_writes.py
checks it against a rebuild and against bm25s itself).

The formula is bm25s's default ("lucene" idf, Robertson term-frequency saturation, k1 = 1.5,
b = 0.75), so a segment ranks as one bm25s index over the same sentences would.

A segment's file (an uncompressed .npz) holds both the CSR rows and the CSC columns, and a
load maps its arrays from the file (`_mapped_arrays`) instead of reading them into memory: a
large collection's BM25 would take ~150 MB of heap at 10M tokens, most of it the columns,
which a query reads only for its own terms. A file that holds only the rows (the first layout) still
loads, and its columns are computed from the rows on load, so a store written by an older
windowpack need not be rebuilt.

A loaded segment holds its arrays as they are (`CompressedArrays`), not as scipy matrices:
a query reads them directly, and importing scipy.sparse was ~0.15 s of a ~1.2 s cold CLI
`pack`. scipy is imported by what writes (a new segment, a merge), and by the load of a file
of the first layout.
"""

from __future__ import annotations

import functools
import struct
import uuid
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from scipy import sparse

K1 = 1.5
B = 0.75

Ids = npt.NDArray[np.int64]
Lengths = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class CompressedArrays:
    """A compressed sparse matrix as its three arrays and shape (CSR: `indptr` per row;
    CSC: per column), what a query and the statistics read, without scipy."""

    data: npt.NDArray[Any]
    indices: npt.NDArray[Any]
    indptr: npt.NDArray[Any]
    shape: tuple[int, int]

    def __getitem__(self, rows: npt.NDArray[np.intp]) -> CompressedArrays:
        """The rows (of a CSR matrix) at positions `rows`, in that order, as scipy's
        `matrix[rows]` gives them."""
        starts, ends = self.indptr[rows], self.indptr[np.asarray(rows) + 1]
        counts = (ends - starts).astype(np.int64)
        indptr = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        # Each kept entry's position: its row's start plus its offset within the row.
        offsets = np.arange(indptr[-1], dtype=np.int64) - np.repeat(indptr[:-1], counts)
        taken = np.repeat(starts.astype(np.int64), counts) + offsets
        return CompressedArrays(
            self.data[taken], self.indices[taken], indptr, (len(counts), self.shape[1])
        )


@dataclass(frozen=True, eq=False)
class Segment:
    """Sentences of one write (or of a merge): who owns them and their terms.

    `rows` is a CSR matrix of term frequencies (sentence x term id); `columns` is the same in
    CSC, for reading one term's postings at query time: scipy matrices when built here, the
    arrays mapped from the file (`CompressedArrays`) when loaded. `words` are the vocabulary
    entries this segment introduced, with ids from `first_word_id` on: the vocabulary is the
    concatenation of the segments' words, in segment order. `name` names its file, shared by
    every version.
    """

    owners: Ids
    lengths: Lengths
    rows: sparse.csr_matrix | CompressedArrays
    first_word_id: int
    words: tuple[str, ...]
    name: str = field(default_factory=lambda: f"segment-{uuid.uuid4().hex}.npz")
    columns: Any = None
    """`rows` in CSC; computed from them when not given (a load gives the saved ones)."""

    def __post_init__(self) -> None:
        if self.columns is None:
            rows = self.rows
            if isinstance(rows, CompressedArrays):  # a file of the first layout
                rows = _sparse().csr_matrix((rows.data, rows.indices, rows.indptr), rows.shape)
            object.__setattr__(self, "columns", rows.tocsc())

    @property
    def count(self) -> int:
        return len(self.owners)

    @functools.cached_property
    def compact_lengths(self) -> npt.NDArray[np.unsignedinteger[Any]]:
        """`lengths` in the smallest unsigned type that holds them, in memory: a query reads
        the length of every sentence in a term's postings, and over 100M tokens a common
        term's run over most of the eight-byte mapped array took most of its BM25 time."""
        largest = int(self.lengths.max()) if self.count else 0
        kind = next(t for t in (np.uint8, np.uint16, np.uint32) if largest <= np.iinfo(t).max)
        return self.lengths.astype(kind)

    @functools.cached_property
    def rows_by_owner(self) -> tuple[Ids, npt.NDArray[np.intp]]:
        """The owners sorted, and the row of each: where a unit's rows are, by bisection."""
        order = np.argsort(self.owners, kind="stable")
        return self.owners[order], order

    def row_terms(self, row: int) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
        """The term ids of one row and their counts."""
        start, end = int(self.rows.indptr[row]), int(self.rows.indptr[row + 1])
        return self.rows.indices[start:end], self.rows.data[start:end]

    def save(self, path: Path) -> None:
        np.savez(
            path,
            owners=self.owners,
            lengths=self.lengths,
            data=self.rows.data,
            indices=self.rows.indices,
            indptr=self.rows.indptr,
            column_data=self.columns.data,
            column_indices=self.columns.indices,
            column_indptr=self.columns.indptr,
            shape=np.asarray(self.rows.shape, dtype=np.int64),
            first_word_id=np.asarray(self.first_word_id, dtype=np.int64),
            words=np.asarray(self.words, dtype=str),
        )

    @classmethod
    def load(cls, path: Path) -> Segment:
        """The segment saved at `path`, its matrices mapped from the file (which a segment's
        name keeps unchanged: a new segment is a new file)."""
        saved = _mapped_arrays(path)
        rows_count, terms = (int(n) for n in saved["shape"])
        rows = CompressedArrays(
            saved["data"], saved["indices"], saved["indptr"], (rows_count, terms)
        )
        columns = None
        if "column_data" in saved:
            columns = CompressedArrays(
                saved["column_data"],
                saved["column_indices"],
                saved["column_indptr"],
                (rows_count, terms),
            )
        return cls(
            owners=np.asarray(saved["owners"], dtype=np.int64),
            lengths=np.asarray(saved["lengths"], dtype=np.int64),
            rows=rows,
            first_word_id=int(saved["first_word_id"]),
            words=tuple(str(word) for word in saved["words"]),
            name=path.name,
            columns=columns,
        )


_HEADERS = {
    (1, 0): np.lib.format.read_array_header_1_0,
    (2, 0): np.lib.format.read_array_header_2_0,
}


def _mappable(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bool:
    """Whether the member is an .npy of a header version read here (else it is read)."""
    with archive.open(info) as member:
        return info.filename.endswith(".npy") and np.lib.format.read_magic(member) in _HEADERS


def _mapped_arrays(path: Path) -> dict[str, npt.NDArray[Any]]:
    """The arrays of an uncompressed .npz (what `np.savez` writes), each mapped read-only
    from where its bytes lie in the file; a compressed member is read instead. Raises
    ValueError, OSError or zipfile.BadZipFile for a damaged file, as `np.load` does."""
    arrays: dict[str, npt.NDArray[Any]] = {}
    with zipfile.ZipFile(path) as archive, path.open("rb") as file:
        for info in archive.infolist():
            name = info.filename.removesuffix(".npy")
            if info.compress_type != zipfile.ZIP_STORED or not _mappable(archive, info):
                with archive.open(info) as member:
                    arrays[name] = np.lib.format.read_array(member, allow_pickle=False)
                continue
            # The local header's name and extra field may differ in length from the
            # central directory's: read it to find where the member's bytes start.
            file.seek(info.header_offset)
            local = file.read(30)
            if local[:4] != b"PK\x03\x04":
                raise ValueError(f"{path}: damaged member {info.filename}")
            name_length, extra_length = struct.unpack("<HH", local[26:30])
            file.seek(info.header_offset + 30 + name_length + extra_length)
            version = np.lib.format.read_magic(file)
            shape, fortran, dtype = _HEADERS[version](file)
            if dtype.hasobject:
                raise ValueError(f"{path}: {info.filename} holds objects")
            count = int(np.prod(shape, dtype=np.int64))
            if not count:
                arrays[name] = np.zeros(shape, dtype=dtype)
                continue
            arrays[name] = np.memmap(
                path,
                dtype=dtype,
                mode="r",
                offset=file.tell(),
                shape=shape,
                order="F" if fortran else "C",
            )
    return arrays


def build_segment(
    owners: Sequence[int],
    token_ids: Sequence[Sequence[int]],
    *,
    first_word_id: int,
    words: Sequence[str],
) -> Segment:
    """A segment of sentences given as term-id lists; `words` are the terms new with it."""
    vocabulary = first_word_id + len(words)
    indptr = np.zeros(len(token_ids) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(ids) for ids in token_ids])
    indices = np.fromiter((i for ids in token_ids for i in ids), dtype=np.int32, count=indptr[-1])
    data = np.ones(len(indices), dtype=np.float32)
    rows = _sparse().csr_matrix((data, indices, indptr), shape=(len(token_ids), vocabulary))
    rows.sum_duplicates()  # repeated terms of a sentence become its term frequencies
    lengths = np.asarray([len(ids) for ids in token_ids], dtype=np.int64)
    return Segment(
        owners=np.asarray(owners, dtype=np.int64),
        lengths=lengths,
        rows=rows,
        first_word_id=first_word_id,
        words=tuple(words),
    )


def merge_segments(parts: Sequence[tuple[Segment, npt.NDArray[np.bool_]]]) -> Segment:
    """One segment of the live sentences of adjacent `parts` (segment, live mask), in order."""
    vocabulary = parts[-1][0].first_word_id + len(parts[-1][0].words)
    blocks = [_widened(segment.rows[np.flatnonzero(live)], vocabulary) for segment, live in parts]
    return Segment(
        owners=np.concatenate([segment.owners[live] for segment, live in parts]),
        lengths=np.concatenate([segment.lengths[live] for segment, live in parts]),
        rows=_sparse().csr_matrix(_sparse().vstack(blocks, format="csr")),
        first_word_id=parts[0][0].first_word_id,
        words=tuple(word for segment, _ in parts for word in segment.words),
    )


def _widened(rows: Any, columns: int) -> sparse.csr_matrix:
    """The same rows over a wider vocabulary (terms added by later segments)."""
    shape = (rows.shape[0], columns)
    return _sparse().csr_matrix((rows.data, rows.indices, rows.indptr), shape=shape)


def _sparse() -> Any:
    """scipy.sparse, imported by what writes (see the module's docstring)."""
    from scipy import sparse

    return sparse


@dataclass(frozen=True, kw_only=True)
class Statistics:
    """Collection-wide BM25 statistics over the live sentences."""

    documents: int
    total_length: int
    term_documents: Lengths

    @property
    def average_length(self) -> float:
        # Only sentences of stop words (length 0) leave no length to average: no term matches.
        return self.total_length / self.documents if self.total_length else 1.0

    @classmethod
    def empty(cls) -> Statistics:
        return cls(documents=0, total_length=0, term_documents=np.zeros(0, dtype=np.int64))

    def changed(
        self, *, sign: int, sentences: Any, lengths: Lengths, vocabulary: int
    ) -> Statistics:
        """The statistics with `sentences` (term-frequency rows) added (sign 1) or removed (-1)."""
        holding = np.bincount(sentences.indices, minlength=sentences.shape[1])
        return self.added(
            term_documents=sign * holding,
            documents=sign * sentences.shape[0],
            total_length=sign * int(lengths.sum()),
            vocabulary=vocabulary,
        )

    def with_segment(self, segment: Segment, vocabulary: int) -> Statistics:
        """The statistics with every sentence of `segment` added, read from its postings:
        the number of sentences holding a term is the length of that term's column, so the
        rows (the largest arrays of a mapped segment) are not read, nor paged in."""
        return self.added(
            term_documents=np.diff(segment.columns.indptr),
            documents=segment.count,
            total_length=int(segment.lengths.sum()),
            vocabulary=vocabulary,
        )

    def added(
        self, *, term_documents: Lengths, documents: int, total_length: int, vocabulary: int
    ) -> Statistics:
        """These statistics plus the given (negative to remove) counts."""
        counts = np.zeros(vocabulary, dtype=np.int64)
        counts[: len(self.term_documents)] = self.term_documents
        counts[: len(term_documents)] += term_documents
        return Statistics(
            documents=self.documents + documents,
            total_length=self.total_length + total_length,
            term_documents=counts,
        )

    def idf(self, term_ids: Sequence[int]) -> Floats:
        counts = self.term_documents[np.asarray(term_ids, dtype=np.int64)].astype(np.float64)
        return np.log(1.0 + (self.documents - counts + 0.5) / (counts + 0.5))


def score_segment(
    segment: Segment,
    live: npt.NDArray[np.bool_],
    term_ids: Sequence[int],
    stats: Statistics,
    weights: Sequence[float] | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """The sentences of `segment` holding a query term (each term's weight times `weights`'
    entry for it, when given) (ascending positions) and the BM25
    score of each (0 for dead sentences); sentences holding none score 0 and are not listed.

    The cost follows the postings the terms have, not the segment's size, unless they hold
    a good share of it: a dense array over every sentence of a 100M-token collection, and
    the scan for its non-zero entries, cost each query ~10 ms per segment.
    """
    columns = segment.columns
    width = columns.shape[1]
    sentences: list[npt.NDArray[np.int32]] = []
    contributions: list[npt.NDArray[np.float64]] = []
    factors = [1.0] * len(term_ids) if weights is None else weights
    for term_id, idf, factor in zip(term_ids, stats.idf(term_ids), factors, strict=True):
        if term_id >= width:
            continue  # a term this segment's sentences cannot contain
        start, end = columns.indptr[term_id], columns.indptr[term_id + 1]
        rows = columns.indices[start:end]
        frequencies = columns.data[start:end]
        sentences.append(rows)
        contribution = _contributions(segment, rows, frequencies, idf, stats)
        contributions.append(contribution if factor == 1.0 else contribution * factor)
    if not sentences:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    listed, scores = _summed(segment, sentences, contributions)
    # Dead sentences score 0: applied to the sums, once, not to each term's weights (the
    # same floats: a sum times 1.0 is itself, times 0.0 is 0).
    if not live.all():
        scores *= live[listed]
    return listed, scores


def _summed(
    segment: Segment,
    sentences: list[npt.NDArray[np.int32]],
    contributions: list[npt.NDArray[np.float64]],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Each sentence in the postings (ascending) and the sum of its terms' weights."""
    postings = np.concatenate(sentences).astype(np.int64)
    weights = np.concatenate(contributions)
    # bincount adds each sentence's terms in query order, however the postings were split.
    if len(sentences) == 1 and _ascending(postings):
        return postings, weights  # one term: nothing to add
    if len(postings) * _SORT_COST < segment.count:
        listed, slots = np.unique(postings, return_inverse=True)
        summed = np.bincount(slots, weights, minlength=len(listed))
        return listed, np.asarray(summed, dtype=np.float64)  # float64 already: no copy
    scores = np.bincount(postings, weights, minlength=segment.count)
    # The sentences listed from a mask of one byte each, not from the scores (eight): the
    # scan was most of a query's BM25 time over 100M tokens.
    holding = np.zeros(segment.count, dtype=np.bool_)
    holding[postings] = True
    listed = np.asarray(np.flatnonzero(holding), dtype=np.int64)
    return listed, np.asarray(scores[listed], dtype=np.float64)


def _contributions(
    segment: Segment,
    rows: npt.NDArray[np.int32],
    frequencies: npt.NDArray[np.float32],
    idf: np.float64,
    stats: Statistics,
) -> npt.NDArray[np.float64]:
    """A term's BM25 weight in each sentence of its postings:
    idf * f / (f + K1 * ((1 - B) + B * length / average)), the same floats as the formula
    written out, computed in place: a common term's postings over 100M tokens run to
    millions, and each temporary array was a fresh allocation the kernel had to map. Only
    the postings' lengths are read: a query reads few sentences."""
    norms = np.multiply(segment.compact_lengths[rows], B, dtype=np.float64)
    norms /= stats.average_length
    norms += 1 - B
    norms *= K1
    norms += frequencies
    weights = np.multiply(frequencies, idf, dtype=np.float64)
    weights /= norms
    return weights


# Sorting the postings (np.unique) costs about this many times a pass over every sentence.
_SORT_COST = 16


def _ascending(values: npt.NDArray[np.int64]) -> bool:
    return bool(len(values) < 2 or (values[1:] > values[:-1]).all())
