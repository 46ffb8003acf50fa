"""BM25 over the sentences of the chunks; a chunk scores as its best sentence. Grows in segments.

Why sentences, when the results are chunks: a 200-token chunk mixes several facts, and BM25's
length normalisation over the whole chunk dilutes a one-sentence fact, while chunks that
repeat a topic word many times win. The query's key terms meeting in *one sentence* is much
stronger evidence of an answer, so each chunk gets the score of its best sentence (the
"MaxP" aggregation of passage-level evidence). Topical, chunk-level relevance comes from the
dense index. Measured on needles planted in the ~680K-token essays (tests/test_search_model.py):
fused with dense, chunk-level BM25 put 4 of 5 needles first and one 8th; sentence-level put
all 5 first; on LOFT's NQ queries both put every gold passage first.

Why segments: bm25s has no incremental add, and rebuilding it on every write would make a write
cost the whole collection (4.6 s to delete one document from 10M tokens). Here a write adds one
segment (`index.segments`) and a delete marks the sentences of the removed chunks dead; both
update the collection-wide statistics, so scores stay those of a rebuild. Small segments are
merged as they pile up (a segment is merged into its predecessor once that one is at most
`_MERGE_RATIO` times bigger, which keeps O(log n) segments and merges each sentence O(log n)
times), and a segment that is mostly dead is rewritten without its dead sentences. On disk a
version is a folder of segment files, hard-linked from the previous version when unchanged, a
manifest and the live masks: saving a version writes only what the write changed.
"""

from __future__ import annotations

import functools
import itertools
import re
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from windowpack.errors import StorageError
from windowpack.index.base import Ids, Scores, UnitFilter
from windowpack.index.folders import (
    fresh_temporary,
    link_or_write,
    read_manifest,
    swap_in,
)
from windowpack.index.segments import (
    Segment,
    Statistics,
    build_segment,
    merge_segments,
    score_segment,
)
from windowpack.text import bm25s_stop_words, split_sentences

_FORMAT = "bm25-segments-1"
_LIVE_FILE = "live.npz"
_STEMMER_LANGUAGE = "english"
_WORD = re.compile(r"(?u)\b\w\w+\b")  # bm25s's token pattern
# Sentences fetched per wanted chunk: several top sentences often share one chunk.
_SENTENCES_PER_CHUNK = 4
# A segment is merged into the one before it once that one holds at most this many times its
# live sentences; a segment with more than this share of dead sentences is rewritten.
_MERGE_RATIO = 4
_MAX_DEAD_SHARE = 0.3

Mask = npt.NDArray[np.bool_]


def _stop_words() -> frozenset[str]:
    """bm25s's English stop words, so that this index drops what the one it replaced did."""
    return bm25s_stop_words("STOPWORDS_EN")


def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer(_STEMMER_LANGUAGE)


class Bm25Index:
    """A `LexicalIndex`: BM25 over sentences (English stop words, Snowball stemming); results
    are index ids. `add` and `remove` change this object: writers change a `copy`."""

    def __init__(self, segments: Sequence[Segment], live: Sequence[Mask]) -> None:
        self._segments = list(segments)
        self._live = list(live)
        self._words = sum(len(segment.words) for segment in segments)
        self._vocabulary = {
            word: index
            for index, word in enumerate(word for segment in segments for word in segment.words)
        }
        self._owns_vocabulary = True
        self._stats = _statistics(self._segments, self._live, self._words)
        self._saved_in: dict[str, Path] = {}  # segment name -> a file holding it
        owners = [segment.owners[mask] for segment, mask in zip(segments, live, strict=True)]
        self._size = len(np.unique(np.concatenate(owners))) if owners else 0
        self._stemmer = _stemmer()

    @classmethod
    def build(cls, chunk_ids: Sequence[int], texts: Sequence[str]) -> Bm25Index:
        index = cls([], [])
        index.add(np.asarray(chunk_ids, dtype=np.int64), texts)
        return index

    @property
    def size(self) -> int:
        """Number of chunks indexed."""
        return self._size

    @property
    def segment_count(self) -> int:
        """How many segments the index is in now (merges keep this ~log of the sentences)."""
        return len(self._segments)

    def copy(self) -> Bm25Index:
        """An independent copy sharing the immutable segments (and, until it grows, the terms)."""
        copied = Bm25Index.__new__(Bm25Index)
        copied.__dict__.update(self.__dict__)
        copied._segments = list(self._segments)
        copied._live = list(self._live)
        copied._owns_vocabulary = self._owns_vocabulary = False
        copied._saved_in = dict(self._saved_in)
        return copied

    def add(self, chunk_ids: Ids, texts: Sequence[str]) -> None:
        """Index `texts` under `chunk_ids` as one new segment, merging small segments."""
        owners, sentences = _sentences_of(chunk_ids.tolist(), texts)
        if not sentences:
            return
        first_word_id = self._words
        token_ids = [self._term_ids(tokens) for tokens in self._tokenize(sentences)]
        new_words = len(self._vocabulary) - first_word_id
        words = list(itertools.islice(reversed(self._vocabulary), new_words))[::-1]
        segment = build_segment(owners, token_ids, first_word_id=first_word_id, words=words)
        self._size += len(np.unique(chunk_ids))  # every chunk has at least one sentence
        self._segments.append(segment)
        self._live.append(np.ones(segment.count, dtype=np.bool_))
        self._words += len(words)
        self._stats = self._stats.changed(
            sign=1, sentences=segment.rows, lengths=segment.lengths, vocabulary=self._words
        )
        self._merge_small_segments()

    def remove(self, chunk_ids: Ids) -> None:
        """Mark the sentences of `chunk_ids` dead; rewrite segments that are mostly dead."""
        if not len(chunk_ids):
            return
        for position, segment in enumerate(self._segments):
            hit = np.isin(segment.owners, chunk_ids) & self._live[position]
            if not hit.any():
                continue
            rows = np.flatnonzero(hit)
            self._size -= len(np.unique(segment.owners[rows]))
            self._stats = self._stats.changed(
                sign=-1,
                sentences=segment.rows[rows],
                lengths=segment.lengths[rows],
                vocabulary=self._words,
            )
            self._live[position] = self._live[position] & ~hit
            if (~self._live[position]).mean() > _MAX_DEAD_SHARE:
                self._replace(position, position + 1)

    def search(self, query: str, k: int, *, within: UnitFilter | None = None) -> tuple[Ids, Scores]:
        """Top-k chunk ids scored by their best sentence; chunks sharing no term are left out.

        Ties are broken by chunk id, so the result depends on the indexed texts only, not on
        how they were split into segments. With `within`, only the sentences of the units it
        keeps compete (each segment's kept sentences found once per filter, a byte each),
        scored with the whole collection's statistics, as a search without it scores them.
        """
        terms = [term for term in self._query_terms(query) if term < self._words]
        if k <= 0 or not terms or not self._segments:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        wanted = k * _SENTENCES_PER_CHUNK
        owners, scores = [], []
        for segment, live in self._live_pairs():
            rows, segment_scores = score_segment(segment, live, terms, self._stats)
            if within is not None:
                # A segment never changes (a new one gets a new name): its mask keys by name.
                kept = within.derived(
                    ("bm25", segment.name), functools.partial(within.keeps, segment.owners)
                )
                segment_scores = segment_scores * kept[rows]
            # Owners are read for the few sentences kept (and ties), not for every one
            # scored: a common term lists millions over 100M tokens.
            top = _top_sentences(segment_scores, wanted, _owners_of(segment.owners, rows))
            owners.append(segment.owners[rows[top]])
            scores.append(segment_scores[top])
        # The best `wanted` of the collection are among the best `wanted` of each segment.
        return _best_chunks(np.concatenate(owners), np.concatenate(scores), k)

    def save(self, directory: Path) -> None:
        """Write to a temporary folder, linking unchanged segments, then swap it in."""
        temporary = fresh_temporary(directory)
        for segment in self._segments:
            saved = self._saved_in.get(segment.name)
            link_or_write(saved, temporary / segment.name, segment.save)
        # Any-typed: numpy's stubs read a ** mapping as possibly holding `allow_pickle`.
        masks: dict[str, Any] = {s.name: np.packbits(live) for s, live in self._live_pairs()}
        np.savez(temporary / _LIVE_FILE, **masks)
        segment_names = [segment.name for segment in self._segments]
        swap_in(temporary, directory, {"format": _FORMAT, "segments": segment_names})
        self._saved_in = {segment.name: directory / segment.name for segment in self._segments}

    def moved_to(self, directory: Path) -> None:
        self._saved_in = {name: directory / name for name in self._saved_in}

    @classmethod
    def load(cls, directory: Path) -> Bm25Index:
        """The index saved in `directory`; `StorageError` when it is missing, damaged or of an
        older format (the index store then rebuilds it from the database)."""
        try:
            manifest = read_manifest(directory, _FORMAT)
            segments = [Segment.load(directory / name) for name in manifest["segments"]]
            with np.load(directory / _LIVE_FILE, allow_pickle=False) as saved:
                live = [
                    np.unpackbits(saved[segment.name], count=segment.count).astype(np.bool_)
                    for segment in segments
                ]
        except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as error:
            raise StorageError(f"{directory}: cannot read BM25 index: {error}") from error
        index = cls(segments, live)
        index._saved_in = {segment.name: directory / segment.name for segment in segments}
        return index

    def _live_pairs(self) -> list[tuple[Segment, Mask]]:
        return list(zip(self._segments, self._live, strict=True))

    def _merge_small_segments(self) -> None:
        while len(self._segments) >= 2:
            last, before = (int(live.sum()) for live in (self._live[-1], self._live[-2]))
            if before > _MERGE_RATIO * last:
                return
            self._replace(len(self._segments) - 2, len(self._segments))

    def _replace(self, start: int, end: int) -> None:
        """Merge segments `start:end` into one holding only their live sentences."""
        merged = merge_segments(self._live_pairs()[start:end])
        self._segments[start:end] = [merged]
        self._live[start:end] = [np.ones(merged.count, dtype=np.bool_)]

    def _tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        """bm25s's tokenization (lower case, words of 2+ characters, its English stop words,
        Snowball stems), without the progress bars it creates per call even when hidden."""
        stop_words = _stop_words()
        words = [
            [word for word in _WORD.findall(text.lower()) if word not in stop_words]
            for text in texts
        ]
        unique = sorted({word for sentence in words for word in sentence})
        stems = dict(zip(unique, self._stemmer.stemWords(unique), strict=True))
        return [[stems[word] for word in sentence] for sentence in words]

    def _term_ids(self, tokens: list[str]) -> list[int]:
        """Ids of `tokens`, giving new terms the next ids (in a vocabulary of this copy's own)."""
        if not self._owns_vocabulary and any(token not in self._vocabulary for token in tokens):
            self._vocabulary = dict(self._vocabulary)
            self._owns_vocabulary = True
        vocabulary = self._vocabulary
        return [vocabulary.setdefault(token, len(vocabulary)) for token in tokens]

    def _query_terms(self, query: str) -> list[int]:
        tokens = self._tokenize([query])[0] if query.strip() else []
        return [self._vocabulary[token] for token in tokens if token in self._vocabulary]


def _statistics(segments: Sequence[Segment], live: Sequence[Mask], words: int) -> Statistics:
    stats = Statistics.empty()
    for segment, mask in zip(segments, live, strict=True):
        if mask.all():  # from the postings: a loaded segment's rows stay unread on disk
            stats = stats.with_segment(segment, words)
            continue
        rows = np.flatnonzero(mask)
        sentences, lengths = segment.rows[rows], segment.lengths[rows]
        stats = stats.changed(sign=1, sentences=sentences, lengths=lengths, vocabulary=words)
    return stats


def _sentences_of(chunk_ids: Sequence[int], texts: Sequence[str]) -> tuple[list[int], list[str]]:
    owners: list[int] = []
    sentences: list[str] = []
    for chunk_id, text in zip(chunk_ids, texts, strict=True):
        spans = split_sentences(text) or []
        pieces = [text[span.start : span.end] for span in spans] or [text]
        owners.extend([chunk_id] * len(pieces))
        sentences.extend(pieces)
    return owners, sentences


def _best_chunks(owners: Ids, scores: npt.NDArray[np.float64], k: int) -> tuple[Ids, Scores]:
    """The k chunks whose best sentences among the top `k * _SENTENCES_PER_CHUNK` score most.

    Sentences are ranked by score, then by chunk id, so which ones compete does not depend
    on the order they are stored in (segments, merges).
    """
    chosen = _top_sentences(scores, k * _SENTENCES_PER_CHUNK, owners.__getitem__)
    candidate_owners, candidate_scores = owners[chosen], scores[chosen]
    order = np.lexsort((candidate_owners, -candidate_scores))
    _, first = np.unique(candidate_owners[order], return_index=True)
    best = order[np.sort(first)[:k]]
    return candidate_owners[best].astype(np.int64), candidate_scores[best].astype(np.float32)


def _owners_of(owners: Ids, rows: Ids) -> Callable[[Ids], Ids]:
    """The owners of the sentences at some positions of `rows`."""
    return lambda positions: owners[rows[positions]]


def _top_sentences(
    scores: npt.NDArray[np.float64], wanted: int, owners_of: Callable[[Ids], Ids]
) -> Ids:
    """Positions of the `wanted` best sentences scoring above 0, by score then lower chunk id
    (`owners_of(positions)`: the chunk ids of the sentences there, asked for ties only)."""
    positive = np.flatnonzero(scores > 0)
    if len(positive) <= wanted:
        return positive
    values = scores[positive]
    cutoff = np.partition(values, len(positive) - wanted)[len(positive) - wanted]
    above = positive[values > cutoff]
    tied = positive[values == cutoff]
    room = wanted - len(above)
    if len(tied) > room:  # many short sentences score alike: keep the lowest chunk ids
        tied = tied[np.argsort(owners_of(tied), kind="stable")[:room]]
    return np.concatenate([above, tied])
