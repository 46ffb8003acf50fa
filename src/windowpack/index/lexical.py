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
from windowpack.text import LanguageRules, detect_language, language_rules, split_sentences

_FORMAT = "bm25-segments-2"
_LIVE_FILE = "live.npz"
# Sentences fetched per wanted chunk: several top sentences often share one chunk.
_SENTENCES_PER_CHUNK = 4
# A segment is merged into the one before it once that one holds at most this many times its
# live sentences; a segment with more than this share of dead sentences is rewritten.
_MERGE_RATIO = 4
_MAX_DEAD_SHARE = 0.3

Mask = npt.NDArray[np.bool_]


ROW_UNITS = ("chunk", "sentence")
"""What one BM25 row is: a whole chunk (the default), or each sentence of one (a chunk then
scores as its best sentence)."""
DEFAULT_ROW_UNIT = "chunk"


class Bm25Index:
    """A `LexicalIndex`: BM25 over chunks (or their sentences, `ROW_UNITS`), cut into terms by
    a language's rules (`text.language`); results are index ids. `add` and `remove` change
    this object: writers change a `copy`.

    `language`: the ISO 639-1 code whose rules cut texts and questions into terms; None: the
    language is detected from the first texts added to the empty index (`detect_language`),
    and kept with the index from then on."""

    def __init__(
        self,
        segments: Sequence[Segment],
        live: Sequence[Mask],
        *,
        language: str | None = None,
        row_unit: str = DEFAULT_ROW_UNIT,
    ) -> None:
        if row_unit not in ROW_UNITS:
            raise ValueError(f"row_unit must be one of {ROW_UNITS}, got {row_unit!r}")
        self._segments = list(segments)
        self._live = list(live)
        self._words = sum(len(segment.words) for segment in segments)
        self._vocabulary = {
            word: index
            for index, word in enumerate(word for segment in segments for word in segment.words)
        }
        self._owns_vocabulary = True
        self._word_list: list[str] = []  # the vocabulary by term id, as `_words_by_id` last made it
        self._stats = _statistics(self._segments, self._live, self._words)
        self._saved_in: dict[str, Path] = {}  # segment name -> a file holding it
        owners = [segment.owners[mask] for segment, mask in zip(segments, live, strict=True)]
        self._size = len(np.unique(np.concatenate(owners))) if owners else 0
        self._configured = language
        self._rules: LanguageRules | None = language_rules(language) if language else None
        self.row_unit = row_unit

    @classmethod
    def build(
        cls,
        chunk_ids: Sequence[int],
        texts: Sequence[str],
        *,
        language: str | None = None,
        row_unit: str = DEFAULT_ROW_UNIT,
    ) -> Bm25Index:
        index = cls([], [], language=language, row_unit=row_unit)
        index.add(np.asarray(chunk_ids, dtype=np.int64), texts)
        return index

    @property
    def language(self) -> str | None:
        """The code of the language rules the index cuts texts with (None: none added yet)."""
        return self._rules.code if self._rules is not None else None

    def terms(self, text: str) -> list[str]:
        """`text` cut into terms as this index cuts what it holds (see `text.language`)."""
        return self._language_rules().terms(text)

    def idf(self, terms: Sequence[str]) -> npt.NDArray[np.float64]:
        """The inverse document frequency of each of `terms` (0 for one never indexed)."""
        ids = [self._vocabulary.get(term, -1) for term in terms]
        known = [term_id for term_id in ids if 0 <= term_id < self._words]
        values = dict(zip(known, self._stats.idf(known).tolist(), strict=True)) if known else {}
        return np.asarray([values.get(term_id, 0.0) for term_id in ids], dtype=np.float64)

    def term_counts(self, ids: Sequence[int]) -> list[dict[str, int]] | None:
        """The terms of each of `ids` as indexed, with their counts, read from the rows (no
        text cut again); None for an index of sentence rows or when an id has no live row."""
        if self.row_unit != "chunk":
            return None
        words = self._words_by_id()
        found = []
        for unit in ids:
            place = self._live_row(int(unit))
            if place is None:
                return None
            segment, row = place
            term_ids, counts = segment.row_terms(row)
            found.append(
                {words[t]: int(c) for t, c in zip(term_ids.tolist(), counts.tolist(), strict=True)}
            )
        return found

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
        if self._rules is None or (self._configured is None and self._size == 0):
            self._rules = language_rules(self._configured or detect_language(texts))
        owners, sentences = _rows_of(chunk_ids.tolist(), texts, self.row_unit)
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
        """Top-k chunk ids for `query`, cut into terms by the index's language rules (see
        `search_terms`)."""
        return self.search_terms(self.terms(query) if query.strip() else [], k, within=within)

    def search_terms(
        self,
        terms: Sequence[str],
        k: int,
        *,
        weights: Sequence[float] | None = None,
        within: UnitFilter | None = None,
    ) -> tuple[Ids, Scores]:
        """Top-k chunk ids for `terms` (each counted as often as it is listed, times its
        weight when `weights` are given); chunks sharing no term are left out. A chunk
        indexed by sentences scores as its best sentence.

        Ties are broken by chunk id, so the result depends on the indexed texts only, not on
        how they were split into segments. With `within`, only the rows of the units it
        keeps compete (each segment's kept rows found once per filter, a byte each),
        scored with the whole collection's statistics, as a search without it scores them.
        """
        weighted: dict[int, float] = {}
        for position, term in enumerate(terms):
            term_id = self._vocabulary.get(term)
            if term_id is not None and term_id < self._words:
                weight = 1.0 if weights is None else float(weights[position])
                weighted[term_id] = weighted.get(term_id, 0.0) + weight
        if k <= 0 or not weighted or not self._segments:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        term_ids, term_weights = list(weighted), list(weighted.values())
        wanted = k * _SENTENCES_PER_CHUNK if self.row_unit == "sentence" else k
        owners, scores = [], []
        for segment, live in self._live_pairs():
            rows, segment_scores = score_segment(segment, live, term_ids, self._stats, term_weights)
            if within is not None:
                # A segment never changes (a new one gets a new name): its mask keys by name.
                kept = within.derived(
                    ("bm25", segment.name), functools.partial(within.keeps, segment.owners)
                )
                segment_scores = segment_scores * kept[rows]
            # Owners are read for the few rows kept (and ties), not for every one
            # scored: a common term lists millions over 100M tokens.
            top = _top_sentences(segment_scores, wanted, _owners_of(segment.owners, rows))
            owners.append(segment.owners[rows[top]])
            scores.append(segment_scores[top])
        # The best `wanted` of the collection are among the best `wanted` of each segment.
        return _best_chunks(np.concatenate(owners), np.concatenate(scores), k, wanted)

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
        manifest = {
            "format": _FORMAT,
            "segments": segment_names,
            "language": self.language,
            "configured_language": self._configured,
            "row_unit": self.row_unit,
        }
        swap_in(temporary, directory, manifest)
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
            index = cls(
                segments,
                live,
                language=manifest.get("configured_language"),
                row_unit=manifest.get("row_unit", DEFAULT_ROW_UNIT),
            )
            if manifest.get("language"):
                index._rules = language_rules(manifest["language"])
        except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as error:
            raise StorageError(f"{directory}: cannot read BM25 index: {error}") from error
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

    def _live_row(self, unit: int) -> tuple[Segment, int] | None:
        """The segment and row holding `unit` live (a whole-unit index has one such row)."""
        for segment, live in self._live_pairs():
            owners, rows = segment.rows_by_owner
            at = int(np.searchsorted(owners, unit))
            while at < len(owners) and owners[at] == unit:
                if live[rows[at]]:
                    return segment, int(rows[at])
                at += 1
        return None

    def _words_by_id(self) -> list[str]:
        """The vocabulary by term id (ids were handed out in insertion order), made again
        only once the vocabulary has grown."""
        if len(self._word_list) != len(self._vocabulary):
            self._word_list = list(self._vocabulary)
        return self._word_list

    def _tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        rules = self._language_rules()
        return [rules.terms(text) for text in texts]

    def _language_rules(self) -> LanguageRules:
        """The rules texts are cut by: the index's, or (before any text was added to an
        index whose language is detected) English's, whose stop words and stems a question
        to an empty index cannot miss."""
        return self._rules if self._rules is not None else language_rules("en")

    def _term_ids(self, tokens: list[str]) -> list[int]:
        """Ids of `tokens`, giving new terms the next ids (in a vocabulary of this copy's own)."""
        if not self._owns_vocabulary and any(token not in self._vocabulary for token in tokens):
            self._vocabulary = dict(self._vocabulary)
            self._owns_vocabulary = True
        vocabulary = self._vocabulary
        return [vocabulary.setdefault(token, len(vocabulary)) for token in tokens]


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


def _rows_of(
    chunk_ids: Sequence[int], texts: Sequence[str], row_unit: str
) -> tuple[list[int], list[str]]:
    """The BM25 rows of the chunks: each chunk whole, or each of its sentences."""
    if row_unit == "chunk":
        return list(chunk_ids), list(texts)
    owners: list[int] = []
    sentences: list[str] = []
    for chunk_id, text in zip(chunk_ids, texts, strict=True):
        spans = split_sentences(text) or []
        pieces = [text[span.start : span.end] for span in spans] or [text]
        owners.extend([chunk_id] * len(pieces))
        sentences.extend(pieces)
    return owners, sentences


def _best_chunks(
    owners: Ids, scores: npt.NDArray[np.float64], k: int, wanted: int
) -> tuple[Ids, Scores]:
    """The k chunks whose best rows among the top `wanted` score most.

    Rows are ranked by score, then by chunk id, so which ones compete does not depend
    on the order they are stored in (segments, merges).
    """
    chosen = _top_sentences(scores, wanted, owners.__getitem__)
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
