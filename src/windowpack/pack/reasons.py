"""Why each chunk of a window is in it, in words (`types.Why`), from what the packer knew.

The first look-up (`scoring`) ranks chunks in three lists: BM25 (the question's *words*),
the chunk vectors and the sentence vectors (its *meaning*). A list *found* a chunk when it
ranked it at or above the list's mean: the z-score the fusion gives it there is not negative,
so that list raised it. Membership alone would not do: over a collection of a few hundred
chunks the vector lists hold every chunk, and "matched its meaning" would be said of all of
them; the mean is also the one threshold every list's best chunk always passes.

A chosen chunk is then, in this order:

- found by a list: `words`, `meaning` or `words_and_meaning`;
- raised by the second hop (a bridge from a hit, `evidence`): `linked`;
- in the unit (section, turn, record) of a chunk found or linked, or next to one outside
  units: `context` (the verbatim phase grows context there first, `verbatim`);
- else `room`: ranked below the mean of every list, or in none, it came in because the
  budget had room left (the verbatim phase reaches those last, in document order).

A passage holding several chunks says the strongest of their reasons. A pinned instance of a
repeated request is `repeat` (its label says so, `rendering`); a lossless window's chunks are
`whole` (it is shared by every question); a session's follow-up tiers are `follow_up` (they
render again without their question).

The cost follows the window, not the corpus: the lists are read once per pack (a few
thousand ids), and each chosen chunk is looked up in them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from windowpack.index import split_index_ids
from windowpack.pack.corpus import Corpus, IntArray
from windowpack.pack.state import PackingState
from windowpack.pack.verbatim import unit_runs
from windowpack.types import Why

Ranked = tuple[npt.NDArray[np.int64], npt.NDArray[np.floating]]
"""One retriever's ranked list: index ids and their scores."""

_NO_CHUNKS = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True, kw_only=True)
class RankedLists:
    """The first look-up's lists the fusion used (those of weight 0 left out), by what they
    match: the question's words (BM25), its meaning (chunk and sentence vectors)."""

    words: Sequence[Ranked] = ()
    meaning: Sequence[Ranked] = ()


@dataclass(frozen=True, kw_only=True)
class Found:
    """One state's chunks (positions, sorted) that the word lists found, that the meaning
    lists found, and that the second hop raised (`linked`)."""

    words: IntArray
    meaning: IntArray
    linked: IntArray


def found_in(state: PackingState, lists: RankedLists, linked: IntArray) -> Found:
    """`lists` read for `state`'s chunks, and the chunks the second hop raised (`linked`). A
    chunk repeating an earlier document's text counts for the chunk it repeats, as its score
    does (`twins.folded`)."""
    return Found(
        words=_found_by(state, lists.words),
        meaning=_found_by(state, lists.meaning),
        linked=_folded(state, linked),
    )


def _found_by(state: PackingState, lists: Sequence[Ranked]) -> IntArray:
    """The positions in `state` of the chunks the lists rank at or above their mean (their
    z-score, as the fusion standardises the list, is not negative; a list of equal scores is
    membership, so all of it)."""
    found = [ids[_at_or_above_mean(scores)] for ids, scores in lists if len(ids)]
    ids = np.sort(np.concatenate([_NO_CHUNKS, *found]).astype(np.int64))
    ids = ids[split_index_ids(ids)[0]]  # chunks; the lists hold summary nodes too
    keys = state.chunk_keys
    if not len(keys) or not len(ids):
        return _NO_CHUNKS
    # Sorted needles: the look-up walks the keys once.
    slots = np.minimum(np.searchsorted(keys, ids), len(keys) - 1)
    positions = state.chunk_positions[slots[keys[slots] == ids]]
    return _folded(state, positions.astype(np.int64))


def _at_or_above_mean(scores: npt.NDArray[np.floating]) -> npt.NDArray[np.bool_]:
    values = scores.astype(np.float64)
    if values.max() == values.min():  # membership (a mean of equal values may round above)
        return np.ones(len(values), dtype=bool)
    return np.asarray(values >= values.mean())


def _folded(state: PackingState, positions: IntArray) -> IntArray:
    """`positions` with each chunk repeating an earlier document's text as the chunk it
    repeats, sorted (not unique: np.unique costs several times more, and a repeat does no
    harm to a look-up; a stable sort, as positions read in id order are mostly in order
    already, and timsort merges such runs in linear time)."""
    twin = state.corpus.chunk_twin
    if twin is not None and len(positions):
        positions = np.where(twin[positions] >= 0, twin[positions], positions)
    return np.sort(positions, kind="stable").astype(np.int64)


# Each chunk's reason as flags, and what a passage of chunks with these flags says: found by
# words and by meaning, then either, then linked, context; nothing at all is room.
_WORDS, _MEANING, _LINKED, _CONTEXT = 1, 2, 4, 8


def chunk_reasons(corpus: Corpus, found: Found, chunks: IntArray) -> dict[int, int]:
    """Why each of `chunks` (positions in `corpus`, chosen verbatim) is in the window, as
    flags that `passage_reason` reads (a passage may hold several chunks)."""
    if not len(chunks):
        return {}
    flags = _WORDS * _members(found.words, chunks) + _MEANING * _members(found.meaning, chunks)
    flags += _LINKED * _members(found.linked, chunks)
    rest = flags == 0  # neither found nor linked: context around a hit, or room
    if rest.any():
        # Three sorted runs: a stable sort (timsort) merges them in linear time.
        hits = np.sort(np.concatenate((found.words, found.meaning, found.linked)), kind="stable")
        flags[rest] = _CONTEXT * _near_a_hit(corpus, chunks[rest], hits)
    return dict(zip(chunks.tolist(), flags.tolist(), strict=True))


def passage_reason(reasons: Mapping[int, int], first: int, last: int) -> Why:
    """Why the chunks `first` to `last` are in: the strongest reason of any of them (one found
    by words and one by meaning: both)."""
    flags = reasons.get(first, 0)
    for chunk in range(first + 1, last + 1):
        flags |= reasons.get(chunk, 0)
    if flags & (_WORDS | _MEANING):
        found = flags & (_WORDS | _MEANING)
        return "words_and_meaning" if found == _WORDS | _MEANING else _BY_LIST[found]
    if flags & _LINKED:
        return "linked"
    return "context" if flags & _CONTEXT else "room"


_BY_LIST: dict[int, Why] = {_WORDS: "words", _MEANING: "meaning"}


def _members(sorted_positions: IntArray, chunks: IntArray) -> npt.NDArray[np.int64]:
    """1 where a chunk is among `sorted_positions`, else 0."""
    if not len(sorted_positions):
        return np.zeros(len(chunks), dtype=np.int64)
    slots = np.minimum(np.searchsorted(sorted_positions, chunks), len(sorted_positions) - 1)
    members: npt.NDArray[np.int64] = (sorted_positions[slots] == chunks).astype(np.int64)
    return members


def _near_a_hit(corpus: Corpus, chunks: IntArray, hits: IntArray) -> npt.NDArray[np.int64]:
    """1 where a chunk lies in the unit of one of `hits` (positions, sorted), or, outside
    units, next to one in its document: where the verbatim phase grows context; else 0."""
    if not len(hits):
        return np.zeros(len(chunks), dtype=np.int64)
    units = unit_runs(corpus)
    run = units.of_chunk[chunks]
    in_unit = np.searchsorted(hits, units.start[run]) < np.searchsorted(hits, units.end[run])
    document, unit = corpus.chunk_document, corpus.chunk_unit
    beside = np.zeros(len(chunks), dtype=bool)
    for step in (-1, 1):
        other = np.clip(chunks + step, 0, corpus.chunks - 1)
        hit = _members(hits, other).astype(bool) & (other != chunks)
        beside |= hit & (document[other] == document[chunks]) & (unit[other] < 0)
    near: npt.NDArray[np.int64] = np.where(unit[chunks] < 0, beside, in_unit).astype(np.int64)
    return near
