"""A vector index that a write changes by what it adds: a base, a tail and tombstones.

Copying and re-saving one FAISS index per write would make every write cost the whole
collection (a 10M-token collection's flat index is ~70 MB to clone and write). Here the *base* (a
`FaissIndex` of any kind) is never changed once built: versions share it in memory, and on
disk its file is hard-linked from one version's folder into the next. What a write adds goes
to a small exact *tail* (numpy, searched by one matrix product), and what it removes from the
base is *tombstoned*: a FAISS `IDSelector` excludes those ids inside the base's search, so the
top k stays exact for a flat base and is the ANN's own top k for IVF/HNSW. When the tail or
the tombstones pass `_COMPACT_SHARE` of the base, they are folded into a new base (the kind's
own `remove_ids` + `add`; HNSW, which has no remove, takes a tail into its graph and is rebuilt
only to fold its tombstones in).
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from windowpack.errors import StorageError
from windowpack.index.base import Ids, Matrix, Scores, UnitFilter
from windowpack.index.dense import FaissIndex, Selection
from windowpack.index.folders import (
    fresh_temporary,
    link_or_write,
    read_manifest,
    swap_in,
)

_FORMAT = "dense-appendable-1"
_CHANGES = "changes.npz"
# Fold the tail and the tombstones into a new base once either passes this share of the base
# (and this many vectors: a small collection's tail is cheap to search as it is).
_COMPACT_SHARE = 0.1
_COMPACT_MIN = 2_000
_TOKENS = itertools.count()


@dataclass(frozen=True, kw_only=True)
class _Changes:
    """What was added after the base was built, and which base ids were removed since."""

    tail_ids: Ids
    tail_vectors: Matrix
    dead: Ids  # sorted

    @classmethod
    def none(cls, dimension: int) -> _Changes:
        return cls(
            tail_ids=np.zeros(0, dtype=np.int64),
            tail_vectors=np.zeros((0, dimension), dtype=np.float32),
            dead=np.zeros(0, dtype=np.int64),
        )


class AppendableFaissIndex:
    """A `VectorIndex`: an immutable `FaissIndex` base, an exact tail of additions, tombstones.

    `add` and `remove` change this object; writers change a `copy`, which shares the base.
    """

    def __init__(self, base: FaissIndex, base_ids: Ids, changes: _Changes) -> None:
        self._base = base
        self._base_ids = base_ids  # sorted
        self._changes = changes
        self._base_name = f"base-{uuid.uuid4().hex}"
        self._base_file: Path | None = None  # where the base is saved, once it is
        # Names this object (and its state) in what a filter's `derived` keeps for it.
        self._token = next(_TOKENS)

    @classmethod
    def build(cls, base: FaissIndex, ids: Ids) -> AppendableFaissIndex:
        """Wrap a freshly built `base` holding `ids`."""
        return cls(base, np.sort(ids), _Changes.none(base.dimension))

    @property
    def kind(self) -> str:
        return self._base.kind

    @property
    def size(self) -> int:
        changes = self._changes
        return self._base.size - len(changes.dead) + len(changes.tail_ids)

    @property
    def dimension(self) -> int:
        return self._base.dimension

    @property
    def pending(self) -> tuple[int, int]:
        """(vectors in the tail, tombstoned base vectors): what a compaction would fold in."""
        return len(self._changes.tail_ids), len(self._changes.dead)

    def add(self, ids: Ids, vectors: Matrix) -> None:
        if not len(ids):
            return
        changes = self._changes
        self._changes = replace(
            changes,
            tail_ids=np.concatenate([changes.tail_ids, ids.astype(np.int64)]),
            tail_vectors=np.vstack([changes.tail_vectors, vectors.astype(np.float32)]),
        )
        self._compact_if_due()

    def remove(self, ids: Ids) -> None:
        if not len(ids):
            return
        changes = self._changes
        in_tail = np.isin(changes.tail_ids, ids)
        in_base = ids[np.isin(ids, self._base_ids)]
        self._changes = replace(
            changes,
            tail_ids=changes.tail_ids[~in_tail],
            tail_vectors=changes.tail_vectors[~in_tail],
            dead=np.union1d(changes.dead, in_base),
        )
        self._compact_if_due()

    def search(
        self, query: Matrix, k: int, *, within: UnitFilter | None = None
    ) -> tuple[Ids, Scores]:
        """Top-k ids and scores from the base (tombstones excluded) and the tail, merged; with
        `within`, among the units it keeps only (how: `FaissIndex.select`, once per filter
        and version)."""
        if within is None:
            base_ids, base_scores = self._base.search(query, k, excluded=self._changes.dead)
        else:
            kept = within.derived(("dense", self._token), lambda: self._kept_base(within))
            base_ids, base_scores = self._base.search(query, k, selection=kept)
        tail_ids, tail_scores = self._search_tail(query, k, within)
        if not len(tail_ids):
            return base_ids, base_scores
        ids = np.concatenate([base_ids, tail_ids])
        scores = np.concatenate([base_scores, tail_scores])
        order = np.lexsort((ids, -scores))[:k]
        return ids[order], scores[order]

    def copy(self) -> AppendableFaissIndex:
        copied = AppendableFaissIndex(self._base, self._base_ids, self._changes)
        copied._base_name, copied._base_file = self._base_name, self._base_file
        return copied

    def save(self, path: Path) -> None:
        """Write a folder atomically: the base linked (or written once), the changes, a manifest."""
        temporary = fresh_temporary(path)
        base_file = temporary / f"{self._base_name}.faiss"
        self._link_or_write_base(base_file)
        changes = self._changes
        np.savez(
            temporary / _CHANGES,
            tail_ids=changes.tail_ids,
            tail_vectors=changes.tail_vectors,
            dead=changes.dead,
        )
        swap_in(temporary, path, {"format": _FORMAT, "base": self._base_name})
        self._base_file = path / base_file.name

    def moved_to(self, path: Path) -> None:
        if self._base_file is not None:
            self._base_file = path / self._base_file.name

    @classmethod
    def load(cls, path: Path) -> AppendableFaissIndex:
        """The index saved in folder `path`; `StorageError` when it is missing, damaged or of an
        older format (the index store then rebuilds it from the database)."""
        try:
            manifest = read_manifest(path, _FORMAT)
            name = str(manifest["base"])
            base = FaissIndex.load(path / f"{name}.faiss")
            base_ids = np.load(path / f"{name}.ids.npy", allow_pickle=False)
            with np.load(path / _CHANGES, allow_pickle=False) as saved:
                changes = _Changes(
                    tail_ids=saved["tail_ids"],
                    tail_vectors=saved["tail_vectors"],
                    dead=saved["dead"],
                )
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise StorageError(f"{path}: cannot read the vector index: {error}") from error
        index = cls(base, base_ids, changes)
        index._base_name, index._base_file = name, path / f"{name}.faiss"
        return index

    def _search_tail(
        self, query: Matrix, k: int, within: UnitFilter | None = None
    ) -> tuple[Ids, Scores]:
        changes = self._changes
        ids, vectors = changes.tail_ids, changes.tail_vectors
        if within is not None and len(ids):
            kept = within.keeps(ids)  # a small tail: no need to keep this
            ids, vectors = ids[kept], vectors[kept]
        if not len(ids) or k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        scores = vectors @ query.reshape(-1).astype(np.float32)
        top = np.argsort(-scores, kind="stable")[:k]
        return ids[top], scores[top]

    def _kept_base(self, within: UnitFilter) -> Selection:
        """The base's live ids that `within` keeps, and how to search only them."""
        ids = self._base_ids[within.keeps(self._base_ids)]
        if len(self._changes.dead):
            ids = ids[~np.isin(ids, self._changes.dead)]
        return self._base.select(ids)

    def _compact_if_due(self) -> None:
        tail, dead = self.pending
        if tail > self._due() or dead > self._due():
            self.compact(keep_few_tombstones=True)

    def _due(self) -> float:
        return max(_COMPACT_MIN, _COMPACT_SHARE * self._base.size)

    def compact(self, *, keep_few_tombstones: bool = False) -> None:
        """Fold the tail and the tombstones into a new base (of the same kind).

        With `keep_few_tombstones` (a compaction that a tail's growth made due), an HNSW base
        takes the tail into its graph and keeps its tombstones while they are few: only
        folding them in needs a new graph, and every write leaves some (the collection-level
        summaries are rewritten each time), so folding them with each tail rebuilt the graph
        at every tenth of growth. An id both tombstoned and in the tail (a reused id) would
        be hidden by its own tombstone: then the graph is rebuilt."""
        changes = self._changes
        keep_dead = (
            keep_few_tombstones
            and self._base.kind == "hnsw"
            and len(changes.dead) <= self._due()
            and not np.isin(changes.tail_ids, changes.dead).any()
        )
        removed = np.zeros(0, dtype=np.int64) if keep_dead else changes.dead
        self._base = self._base.rewritten(
            removed=removed, added_ids=changes.tail_ids, added_vectors=changes.tail_vectors
        )
        live = self._base_ids[~np.isin(self._base_ids, removed)]
        self._base_ids = np.sort(np.concatenate([live, changes.tail_ids]))
        self._changes = _Changes.none(self._base.dimension)
        if keep_dead:
            self._changes = replace(self._changes, dead=changes.dead)
        self._base_name, self._base_file = f"base-{uuid.uuid4().hex}", None

    def _link_or_write_base(self, target: Path) -> None:
        """The base's index and ids, linked from where they were saved (a base never changes)."""
        ids_target = target.with_name(f"{self._base_name}.ids.npy")
        saved = self._base_file
        link_or_write(saved, target, self._base.save)
        link_or_write(
            saved.with_name(ids_target.name) if saved is not None else None,
            ids_target,
            lambda where: np.save(where, self._base_ids),
        )
