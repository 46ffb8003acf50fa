"""Which texts an index version holds: each unit's index id with (64 bits of) its content hash.

A process that loaded version v of a collection and finds the database at v+k (another
process wrote it) catches up by what changed instead of rebuilding: the difference between
its keys and the database's. Ids alone are not enough: SQLite hands a deleted row's id to
the next insert (an upsert of the newest document reuses its chunks' ids), so a changed text
under a reused id shows only in its hash.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from windowpack.index.base import Ids

Hashes = npt.NDArray[np.int64]


def hash_keys(hashes: Sequence[str]) -> Hashes:
    """The first 60 bits of each SHA-256 hex digest, as int64 (collisions: ~n² / 2⁶¹)."""
    return np.fromiter((int(h[:15], 16) for h in hashes), dtype=np.int64, count=len(hashes))


@dataclass(frozen=True)
class UnitKeys:
    """Index ids (sorted, unique) and the hash key of each unit's text, in the same order."""

    ids: Ids
    hashes: Hashes

    @classmethod
    def of(cls, ids: Sequence[int] | Ids, hashes: Sequence[str]) -> UnitKeys:
        array = np.asarray(ids, dtype=np.int64)
        order = np.argsort(array, kind="stable")
        return cls(array[order], hash_keys(hashes)[order])

    def save(self, path: Path) -> None:
        """Write the ids and hashes as one (2, n) int64 array (`np.save`)."""
        np.save(path, np.vstack([self.ids, self.hashes]).astype(np.int64), allow_pickle=False)

    @classmethod
    def load(cls, path: Path) -> UnitKeys | None:
        """The keys `save` wrote at `path`; None when they cannot be read as such."""
        try:
            data = np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            return None
        if data.dtype != np.int64 or data.ndim != 2 or data.shape[0] != 2:
            return None
        ids, hashes = np.ascontiguousarray(data[0]), np.ascontiguousarray(data[1])
        if len(ids) > 1 and not (ids[1:] > ids[:-1]).all():
            return None  # not sorted and unique: not what `save` wrote
        return cls(ids, hashes)

    def changed(self, removed: Ids, added: UnitKeys) -> UnitKeys:
        """These keys after a write removed `removed` and then added `added`."""
        keep = ~np.isin(self.ids, removed)
        ids = np.concatenate([self.ids[keep], added.ids])
        hashes = np.concatenate([self.hashes[keep], added.hashes])
        order = np.argsort(ids, kind="stable")
        return UnitKeys(ids[order], hashes[order])

    def delta_to(self, newer: UnitKeys) -> tuple[Ids, Ids]:
        """(ids to add, ids to remove) that turn an index holding these keys into `newer`.

        A unit whose text changed under the same id is in both: removed, then added again.
        """
        _, mine, theirs = np.intersect1d(
            self.ids, newer.ids, assume_unique=True, return_indices=True
        )
        rewritten = self.ids[mine[self.hashes[mine] != newer.hashes[theirs]]]
        gone = np.setdiff1d(self.ids, newer.ids, assume_unique=True)
        new = np.setdiff1d(newer.ids, self.ids, assume_unique=True)
        added = np.union1d(new, rewritten) if len(rewritten) else new
        removed = np.union1d(gone, rewritten) if len(rewritten) else gone
        return added.astype(np.int64), removed.astype(np.int64)
