"""One version of a collection's indexes, and what a write changes in them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from windowpack.embed import Vectors
from windowpack.index.base import Ids, LexicalIndex, VectorIndex
from windowpack.index.kept import KeptUnits
from windowpack.index.sentences import SentenceIndex
from windowpack.index.unit_keys import UnitKeys


@dataclass(frozen=True, kw_only=True)
class CollectionIndexes:
    """The dense, lexical and sentence index of one collection at one index version."""

    version: int
    dense: VectorIndex
    lexical: LexicalIndex
    sentences: SentenceIndex | None = None
    """The chunks' sentence vectors (`index.sentences`); None in a store opened without."""
    keys: UnitKeys | None = None
    """What the indexes hold, for catching up with a later version (None: not known)."""
    kept: KeptUnits | None = None
    """The units a metadata filter keeps: callers search `within=` it (None: every unit)."""

    def within(self, kept: KeptUnits | None) -> CollectionIndexes:
        """These indexes for a search limited to `kept` (the same indexes for None)."""
        return self if kept is None else replace(self, kept=kept)


@dataclass(frozen=True, kw_only=True)
class IndexDelta:
    """What one write changed: units added (with vectors and texts) and units removed.

    Without `added_texts` (one per added id) the lexical index is rebuilt from the database.
    `added_hashes` (their content hashes, when the caller has them) saves hashing them again.
    """

    added_ids: Ids
    added_vectors: Vectors
    removed_ids: Ids
    added_texts: Sequence[str] = ()
    added_hashes: Sequence[str] = ()

    @classmethod
    def removal(cls, chunk_ids: list[int]) -> IndexDelta:
        """The delta of a write that only removed these chunks."""
        return cls(
            added_ids=np.zeros(0, dtype=np.int64),
            added_vectors=np.zeros((0, 0), dtype=np.float32),
            removed_ids=np.asarray(chunk_ids, dtype=np.int64),
        )
