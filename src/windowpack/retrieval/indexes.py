"""Loads, rebuilds and publishes a collection's FAISS and BM25 indexes, one version at a time.

Both indexes hold the chunks and the summary-tree nodes, in the one id space of `index_ids`.

The database is the source of truth. Index files are named by the collection's index
version; a file whose version differs from the database's (or a missing one) is rebuilt
from the chunk table and the embedding cache. Loaded indexes are shared by all requests of
a process and swapped atomically when a new version is published.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from windowpack.errors import StorageError
from windowpack.retrieval.embedder import Embedder, Vectors
from windowpack.retrieval.embedding_cache import embed_with_cache
from windowpack.retrieval.index_ids import node_index_id
from windowpack.retrieval.index_kinds import (
    Ids,
    LexicalIndex,
    VectorIndex,
    build_lexical_index,
    build_vector_index,
    load_lexical_index,
    load_vector_index,
)
from windowpack.storage import repository


@dataclass(frozen=True, kw_only=True)
class CollectionIndexes:
    """The dense and lexical index of one collection at one index version."""

    version: int
    dense: VectorIndex
    lexical: LexicalIndex


@dataclass(frozen=True, kw_only=True)
class IndexDelta:
    """What one write changed: units added (with vectors and texts) and units removed.

    Without `added_texts` (one per added id) the lexical index is rebuilt from the database.
    """

    added_ids: Ids
    added_vectors: Vectors
    removed_ids: Ids
    added_texts: Sequence[str] = ()

    @classmethod
    def removal(cls, chunk_ids: list[int]) -> IndexDelta:
        return cls(
            added_ids=np.zeros(0, dtype=np.int64),
            added_vectors=np.zeros((0, 0), dtype=np.float32),
            removed_ids=np.asarray(chunk_ids, dtype=np.int64),
        )


class IndexStore:
    """Per-process holder of every collection's current indexes."""

    def __init__(
        self,
        index_dir: Path,
        sessions: sessionmaker[Session],
        embedder: Embedder,
        *,
        ann_threshold: int,
    ) -> None:
        self._dir = index_dir
        self._sessions = sessions
        self._embedder = embedder
        self._ann_threshold = ann_threshold
        self._loaded: dict[int, CollectionIndexes] = {}
        self._lock = threading.RLock()

    def current(self, collection_id: int) -> CollectionIndexes:
        """The indexes at the database's current version: from memory, from disk or rebuilt."""
        with self._sessions() as session:
            version = repository.index_version(session, collection_id)
        loaded = self._loaded.get(collection_id)
        if loaded is not None and loaded.version == version:
            return loaded
        with self._lock:
            loaded = self._loaded.get(collection_id)
            if loaded is None or loaded.version != version:
                loaded = self._load_or_rebuild(collection_id, version)
                self._loaded[collection_id] = loaded
            return loaded

    def publish(self, collection_id: int, version: int, delta: IndexDelta) -> CollectionIndexes:
        """Make `version` current after a committed write, applying `delta` when possible."""
        with self._lock:
            previous = self._loaded.get(collection_id)
            if previous is not None and previous.version == version - 1:
                indexes = self._apply_delta(collection_id, version, previous, delta)
            else:
                indexes = self._rebuild(collection_id, version)
            self._save(collection_id, indexes)
            self._loaded[collection_id] = indexes
            self._remove_files_except(collection_id, version)
            return indexes

    def forget(self, collection_id: int) -> None:
        """Drop a deleted collection's indexes from memory and disk."""
        with self._lock:
            self._loaded.pop(collection_id, None)
            shutil.rmtree(self._collection_dir(collection_id), ignore_errors=True)

    def _apply_delta(
        self, collection_id: int, version: int, previous: CollectionIndexes, delta: IndexDelta
    ) -> CollectionIndexes:
        total = previous.dense.size + len(delta.added_ids) - len(delta.removed_ids)
        if previous.dense.kind == "flat" and total >= self._ann_threshold:
            return self._rebuild(collection_id, version)  # time to switch to the ANN index
        dense = previous.dense.copy()  # readers keep searching the old one
        dense.remove(delta.removed_ids)
        dense.add(delta.added_ids, delta.added_vectors)
        if len(delta.added_texts) != len(delta.added_ids):
            lexical = self._build_lexical(collection_id)
        else:  # a new segment and tombstones: the write costs what it changes
            lexical = previous.lexical.copy()
            lexical.remove(delta.removed_ids)
            lexical.add(delta.added_ids, delta.added_texts)
        return CollectionIndexes(version=version, dense=dense, lexical=lexical)

    def _load_or_rebuild(self, collection_id: int, version: int) -> CollectionIndexes:
        dense_path, lexical_path = self._paths(collection_id, version)
        if dense_path.exists() and lexical_path.exists():
            try:
                return CollectionIndexes(
                    version=version,
                    dense=load_vector_index(dense_path),
                    lexical=load_lexical_index(lexical_path),
                )
            except StorageError:
                pass  # a damaged derived file is rebuilt from the database below
        indexes = self._rebuild(collection_id, version)
        self._save(collection_id, indexes)
        return indexes

    def _rebuild(self, collection_id: int, version: int) -> CollectionIndexes:
        chunk_ids, hashes, texts = self._units(collection_id)
        vectors, _ = embed_with_cache(self._sessions, self._embedder, texts, hashes)
        dense = build_vector_index(
            vectors.shape[1] if len(vectors) else self._embedder.dimension,
            np.asarray(chunk_ids, dtype=np.int64),
            vectors,
            ann_threshold=self._ann_threshold,
        )
        return CollectionIndexes(
            version=version, dense=dense, lexical=self._build_lexical(collection_id)
        )

    def _build_lexical(self, collection_id: int) -> LexicalIndex:
        ids, _, texts = self._units(collection_id)
        return build_lexical_index(ids, texts)

    def _units(self, collection_id: int) -> tuple[list[int], list[str], list[str]]:
        """Index ids, content hashes and texts of every chunk and summary node."""
        with self._sessions() as session:
            chunk_ids, chunk_hashes, chunk_texts = repository.chunks_for_index(
                session, collection_id
            )
            node_ids, node_hashes, node_texts = repository.nodes_for_index(session, collection_id)
        ids = chunk_ids + [node_index_id(node_id) for node_id in node_ids]
        return ids, chunk_hashes + node_hashes, chunk_texts + node_texts

    def _save(self, collection_id: int, indexes: CollectionIndexes) -> None:
        dense_path, lexical_path = self._paths(collection_id, indexes.version)
        try:
            indexes.dense.save(dense_path)
            indexes.lexical.save(lexical_path)
        except OSError as error:
            raise StorageError(f"cannot write index files under {self._dir}: {error}") from error

    def _remove_files_except(self, collection_id: int, version: int) -> None:
        keep = {path.name for path in self._paths(collection_id, version)}
        for path in self._collection_dir(collection_id).iterdir():
            if path.name not in keep:
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)

    def _collection_dir(self, collection_id: int) -> Path:
        return self._dir / f"collection-{collection_id}"

    def _paths(self, collection_id: int, version: int) -> tuple[Path, Path]:
        folder = self._collection_dir(collection_id)
        # Folders since the indexes grew by segments; an older store's `dense-vN.faiss` file is
        # not found here, so its indexes are rebuilt from the database on first open.
        return folder / f"dense-v{version}", folder / f"lexical-v{version}"
