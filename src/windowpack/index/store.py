"""Loads, rebuilds and publishes a collection's FAISS and BM25 indexes, one version at a time.

Both indexes hold the chunks and the summary-tree nodes, in the one id space of `index_ids`.

The database is the source of truth. Index files are named by the collection's index
version; a file whose version differs from the database's (or a missing one) is rebuilt
from the chunk table and the embedding cache, and so is a damaged or wrong-shaped one (the
manifest of `index_files`, then the dimension and counts against the database). Loaded
indexes are shared by all requests of a process and swapped atomically when a new version
is published.

Readers never wait for this process's writer: while a write publishes version v+1 (it has
committed, so the database already says v+1), `current` keeps answering v, and the new
version becomes current only once it is whole, after the `prepare` hook (the packer loads
its states for it) has run. The write returns after that, so its own next read sees it.
With `snapshot_reads`, a version written by another process is loaded in the background
while v goes on being served; without it (the library's default) the read waits for it.

Such a version is caught up by what changed when this process holds an older one (each
version keeps its `UnitKeys`: ids and text hashes): only the units added since are read and
indexed, as the writer itself did, so a replica's switch costs what the write added. Else it
is loaded from this process's index folder, or rebuilt. `refresh_stale` (the replica's
watcher, `version_watch`) starts that for every loaded collection that another process moved
on, without waiting for a read to notice.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from windowpack.embed import Embedder, Vectors, embed_with_cache
from windowpack.errors import CollectionDeletedError, StorageError
from windowpack.index.base import Ids, LexicalIndex, VectorIndex
from windowpack.index.factory import (
    build_lexical_index,
    build_vector_index,
    load_lexical_index,
    load_vector_index,
)
from windowpack.index.files import (
    IndexShape,
    manifest_path,
    verified_record,
    verified_shape,
    write_manifest,
    write_record,
)
from windowpack.index.ids import (
    is_node_index_id,
    node_id_of,
    node_index_id,
    split_index_ids,
)
from windowpack.index.unit_keys import UnitKeys, hash_keys
from windowpack.storage import repository
from windowpack.text import content_hash

_LOG = logging.getLogger("windowpack")
# Index files are named `...-v{version}...`; a process saves into `.staging-{pid}-{random}`.
_VERSION = re.compile(r"-v(\d+)\b")
_STAGING = ".staging-"
_KEYS_FORMAT = "unit-keys-1"
_ABANDONED_AFTER_S = 3600

Prepare = Callable[[int, int], bool]
"""Called with (collection id, version) before a loaded version becomes current; False when
it could not make everything ready (the database moved past the version meanwhile)."""


@dataclass(frozen=True, kw_only=True)
class CollectionIndexes:
    """The dense and lexical index of one collection at one index version."""

    version: int
    dense: VectorIndex
    lexical: LexicalIndex
    keys: UnitKeys | None = None
    """What the indexes hold, for catching up with a later version (None: not known)."""


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
        snapshot_reads: bool = False,
    ) -> None:
        self._dir = index_dir
        self._sessions = sessions
        self._embedder = embedder
        self._ann_threshold = ann_threshold
        self._snapshot_reads = snapshot_reads
        self._loaded: dict[int, CollectionIndexes] = {}
        self._lock = threading.Lock()  # guards the dicts below; held only briefly
        self._gates: dict[int, threading.Lock] = {}  # one loader or publisher per collection
        self._publishing: set[int] = set()
        self._prepare: Prepare = lambda _collection_id, _version: True
        self._forgotten: Callable[[int], None] = lambda _collection_id: None

    def prepare_with(self, prepare: Prepare, forgotten: Callable[[int], None]) -> None:
        """Run `prepare` for each version before it becomes current, and `forgotten` for a
        collection another process deleted (the packer's states)."""
        self._prepare, self._forgotten = prepare, forgotten

    def current(
        self, collection_id: int, *, wait: bool = False, name: str | None = None
    ) -> CollectionIndexes:
        """The indexes at the database's current version: from memory, from disk or rebuilt
        (or the last whole version while a newer one is being published; see the module).
        `wait`: a version another process wrote is waited for even with `snapshot_reads`.
        `name`: the collection's, checked against the row (`CollectionDeletedError` when
        the collection was deleted, or its id given to another since)."""
        version = self._version(collection_id, name)
        loaded = self._loaded.get(collection_id)
        if loaded is not None and loaded.version == version:
            return loaded
        if loaded is not None and collection_id in self._publishing:
            return loaded  # this process's writer makes the next version whole: not yet
        if loaded is not None and self._snapshot_reads and not wait:
            self._refresh_in_background(collection_id)
            return loaded
        with self._gate(collection_id):
            self._bring_current(collection_id)
            return self._loaded[collection_id]

    def publish(self, collection_id: int, version: int, delta: IndexDelta) -> CollectionIndexes:
        """Make `version` current after a committed write, applying `delta` when possible."""
        with self._lock:
            self._publishing.add(collection_id)
        try:
            with self._gate(collection_id):
                previous = self._loaded.get(collection_id)
                if previous is None or previous.version != version - 1:
                    # A process that has not read the collection yet (a CLI ingest, a
                    # restarted server) starts from the previous version's saved files
                    # rather than rebuild everything for a write of one document.
                    previous = self._load_checked(collection_id, version - 1, database=False)
                if previous is not None and previous.version == version - 1:
                    indexes = self._apply_delta(collection_id, version, previous, delta)
                else:
                    indexes = self._rebuild(collection_id, version)
                self._save(collection_id, indexes)
                self._make_current(collection_id, indexes)
                self._remove_older_files(collection_id, version)
                return indexes
        finally:
            with self._lock:
                self._publishing.discard(collection_id)

    def loaded_version(self, collection_id: int) -> int | None:
        """The version this process serves now (None before the collection was read)."""
        loaded = self._loaded.get(collection_id)
        return None if loaded is None else loaded.version

    def refresh_stale(self) -> list[int]:
        """Bring every loaded collection that another process moved on to its database
        version, serving the loaded one meanwhile; a collection deleted elsewhere is
        forgotten. Returns the ids brought up to date (or forgotten) by this call."""
        with self._lock:
            loaded = {cid: idx.version for cid, idx in self._loaded.items()}
            busy = set(self._publishing)
        with self._sessions() as session:
            versions = repository.index_versions(session, list(loaded))
        done = []
        for collection_id, version in loaded.items():
            if collection_id in busy or versions.get(collection_id) == version:
                continue
            if collection_id not in versions:
                self.forget(collection_id)
                self._forgotten(collection_id)
            elif not self._refresh_now(collection_id):
                continue
            done.append(collection_id)
        return done

    def forget(self, collection_id: int) -> None:
        """Drop a deleted collection's indexes from memory and disk."""
        with self._gate(collection_id):
            self._loaded.pop(collection_id, None)
            shutil.rmtree(self._collection_dir(collection_id), ignore_errors=True)

    def _gate(self, collection_id: int) -> threading.Lock:
        with self._lock:
            return self._gates.setdefault(collection_id, threading.Lock())

    def _bring_current(self, collection_id: int, *, only_if_ready: bool = False) -> None:
        """Load the database's version unless it is loaded already (caller holds the gate).
        `only_if_ready`: keep the loaded version when the new one could not be prepared
        (readers are being served meanwhile; a later read tries again)."""
        version = self._version(collection_id)
        loaded = self._loaded.get(collection_id)
        if loaded is None or loaded.version != version:
            caught_up = self._caught_up(collection_id, loaded) if loaded is not None else None
            if caught_up is not None:
                self._save(collection_id, caught_up)
                self._remove_older_files(collection_id, caught_up.version)
            fresh = caught_up or self._load_or_rebuild(collection_id, version)
            self._make_current(collection_id, fresh, only_if_ready=only_if_ready)

    def _refresh_in_background(self, collection_id: int) -> None:
        """Load a version another process wrote in a thread, unless a load is under way."""
        gate = self._gate(collection_id)
        if gate.acquire(blocking=False):
            threading.Thread(
                target=self._refresh_holding,
                args=(collection_id, gate),
                name=f"windowpack-refresh-{collection_id}",
            ).start()

    def _refresh_now(self, collection_id: int) -> bool:
        """Load the database's version here unless a load is under way; False if one was,
        or if loading failed."""
        gate = self._gate(collection_id)
        return gate.acquire(blocking=False) and self._refresh_holding(collection_id, gate)

    def _refresh_holding(self, collection_id: int, gate: threading.Lock) -> bool:
        """Bring the collection current with `gate` held, then release it; readers go on
        with the version they have meanwhile, and if loading fails."""
        try:
            self._bring_current(collection_id, only_if_ready=True)
            return True
        except CollectionDeletedError:
            return False  # deleted meanwhile: the watcher forgets it, readers are told
        except Exception:
            _LOG.exception("loading collection %s's new index version failed", collection_id)
            return False
        finally:
            gate.release()

    def _make_current(
        self, collection_id: int, indexes: CollectionIndexes, *, only_if_ready: bool = False
    ) -> None:
        if not self._prepare(collection_id, indexes.version) and only_if_ready:
            return
        with self._lock:
            self._loaded[collection_id] = indexes

    def _version(self, collection_id: int, name: str | None = None) -> int:
        return repository.index_version_now(self._sessions, collection_id, name)

    def _apply_delta(
        self, collection_id: int, version: int, previous: CollectionIndexes, delta: IndexDelta
    ) -> CollectionIndexes:
        total = previous.dense.size + len(delta.added_ids) - len(delta.removed_ids)
        if previous.dense.kind == "flat" and total >= self._ann_threshold:
            return self._rebuild(collection_id, version)  # time to switch to the ANN index
        dense = previous.dense.copy()  # readers keep searching the old one
        dense.remove(delta.removed_ids)
        dense.add(delta.added_ids, delta.added_vectors)
        keys = None
        if len(delta.added_texts) != len(delta.added_ids):
            lexical = self._build_lexical(collection_id)
        else:  # a new segment and tombstones: the write costs what it changes
            lexical = previous.lexical.copy()
            lexical.remove(delta.removed_ids)
            lexical.add(delta.added_ids, delta.added_texts)
            if previous.keys is not None:
                hashes = delta.added_hashes or [content_hash(t) for t in delta.added_texts]
                keys = previous.keys.changed(
                    delta.removed_ids, UnitKeys.of(delta.added_ids, hashes)
                )
        return CollectionIndexes(version=version, dense=dense, lexical=lexical, keys=keys)

    def _caught_up(self, collection_id: int, loaded: CollectionIndexes) -> CollectionIndexes | None:
        """The database's version made from `loaded` by what changed since (another process
        wrote it); None when the keys are unknown or the database would not hold still."""
        if loaded.keys is None:
            return None
        for _ in range(3):  # a write committing meanwhile: look again
            version, keys = self._keys_now(collection_id)
            if keys is None or version < loaded.version:
                continue
            added, removed = loaded.keys.delta_to(keys)
            found = self._texts_of(collection_id, added)
            if found is None or not np.array_equal(
                hash_keys(found[1]), keys.hashes[np.searchsorted(keys.ids, added)]
            ):
                continue  # deleted or rewritten since the keys were read
            texts, hashes = found
            vectors, _ = embed_with_cache(self._sessions, self._embedder, texts, hashes)
            delta = IndexDelta(
                added_ids=added,
                added_vectors=vectors,
                removed_ids=removed,
                added_texts=texts,
                added_hashes=hashes,
            )
            # Its keys are the database's: `delta_to` then `changed` reach `keys` exactly.
            return self._apply_delta(collection_id, version, loaded, delta)
        return None

    def _keys_now(self, collection_id: int) -> tuple[int, UnitKeys | None]:
        """The database's version and the keys of what it holds; None keys when a write
        committed between the reads (versions only grow, so equal versions mean none did)."""
        with self._sessions() as session:
            before = repository.index_version(session, collection_id)
            (chunk_ids, chunk_hashes), (node_ids, node_hashes) = repository.unit_hashes(
                session, collection_id
            )
            after = repository.index_version(session, collection_id)
        if before != after:
            return after, None
        ids = chunk_ids + [node_index_id(node_id) for node_id in node_ids]
        return after, UnitKeys.of(ids, chunk_hashes + node_hashes)

    def _texts_of(self, collection_id: int, index_ids: Ids) -> tuple[list[str], list[str]] | None:
        """The texts and content hashes of these units, in order; None when one was
        deleted meanwhile."""
        is_chunk, node_ids = split_index_ids(index_ids)
        with self._sessions() as session:
            chunks, nodes = repository.unit_texts_by_id(
                session, collection_id, index_ids[is_chunk].tolist(), node_ids.tolist()
            )
        texts, hashes = [], []
        for index_id in index_ids.tolist():
            row = (
                nodes.get(node_id_of(index_id))
                if is_node_index_id(index_id)
                else chunks.get(index_id)
            )
            if row is None:
                return None
            texts.append(row[0])
            hashes.append(row[1])
        return texts, hashes

    def _load_or_rebuild(self, collection_id: int, version: int) -> CollectionIndexes:
        loaded = self._load_checked(collection_id, version)
        if loaded is not None:
            return loaded
        indexes = self._rebuild(collection_id, version)
        self._save(collection_id, indexes)
        return indexes

    def _load_checked(
        self, collection_id: int, version: int, *, database: bool = True
    ) -> CollectionIndexes | None:
        """The saved version when its files match their manifest and (with `database`) the
        database; None (to rebuild) when they are missing, damaged or of another shape.
        Without `database`, the version is the one before a write just committed: only the
        files and their manifest can be checked."""
        dense_path, lexical_path = self._paths(collection_id, version)
        if not dense_path.exists() and not lexical_path.exists():
            return None
        problem: str | None = "its manifest is missing or a file does not match it"
        shape = verified_shape(manifest_path(dense_path, version), [dense_path, lexical_path])
        if shape is not None:
            try:
                indexes = CollectionIndexes(
                    version=version,
                    dense=load_vector_index(dense_path),
                    lexical=load_lexical_index(lexical_path),
                )
                problem = self._shape_problem(collection_id, indexes, shape, database=database)
                saved = self._saved_keys(collection_id, indexes) if problem is None else None
                if saved is not None:
                    return replace(indexes, keys=saved)
                if problem is None:
                    return self._with_keys(collection_id, indexes) if database else indexes
            except StorageError as error:
                problem = str(error)
        _LOG.warning(
            "rebuilding index version %s of collection %s: %s", version, collection_id, problem
        )
        return None

    def _shape_problem(
        self, collection_id: int, indexes: CollectionIndexes, shape: IndexShape, *, database: bool
    ) -> str | None:
        """What does not match between loaded indexes, their manifest and the database."""
        found = (indexes.version, indexes.dense.dimension, indexes.dense.size)
        if found != (shape.version, shape.dimension, shape.dense_size):
            return f"the files hold (version, dimension, size) {found}, the manifest {shape}"
        if indexes.lexical.size != shape.lexical_size:
            return f"the lexical index holds {indexes.lexical.size} units, not {shape.lexical_size}"
        if not database:
            return None
        units = self._unit_count(collection_id)
        dimension = self._expected_dimension()
        if dimension is not None and indexes.dense.dimension != dimension:
            return f"vectors of dimension {indexes.dense.dimension}, the embedder's is {dimension}"
        if indexes.dense.size != units:
            return f"{indexes.dense.size} vectors for {units} chunks and nodes in the database"
        return None

    def _with_keys(self, collection_id: int, indexes: CollectionIndexes) -> CollectionIndexes:
        """Loaded files with the database's keys, when the database is still at their
        version (else the keys stay unknown, and the next version is loaded, not caught up);
        saved beside the files, so that the next restart reads them there."""
        version, keys = self._keys_now(collection_id)
        if version != indexes.version or keys is None:
            return indexes
        self._save_keys(collection_id, version, keys)
        return replace(indexes, keys=keys)

    def _unit_count(self, collection_id: int) -> int:
        with self._sessions() as session:
            return repository.unit_count(session, collection_id)

    def _expected_dimension(self) -> int | None:
        """The cached vectors' dimension for this embedder (None when nothing is cached yet:
        asking the embedder would load a model for nothing)."""
        with self._sessions() as session:
            return repository.embedding_dimension(session, self._embedder.model_id)

    def _rebuild(self, collection_id: int, version: int) -> CollectionIndexes:
        ids, hashes, texts = self._units(collection_id)
        vectors, _ = embed_with_cache(self._sessions, self._embedder, texts, hashes)
        dense = build_vector_index(
            vectors.shape[1] if len(vectors) else self._embedder.dimension,
            np.asarray(ids, dtype=np.int64),
            vectors,
            ann_threshold=self._ann_threshold,
        )
        return CollectionIndexes(
            version=version,
            dense=dense,
            lexical=build_lexical_index(ids, texts),
            keys=UnitKeys.of(ids, hashes),
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
        """Write a version's files, or log why not: they are derived, and a write that has
        committed must not fail for them (the next process to load rebuilds them)."""
        try:
            self._save_staged(collection_id, indexes)
        except OSError as error:
            _LOG.warning("cannot write index files under %s: %s", self._dir, error)

    def _save_staged(self, collection_id: int, indexes: CollectionIndexes) -> None:
        """Write into a folder of this process's own, then move into place: two processes
        saving the same version never share a temporary file (they did, and one failed)."""
        dense_path, lexical_path = self._paths(collection_id, indexes.version)
        manifest = manifest_path(dense_path, indexes.version)
        staging = dense_path.parent / f"{_STAGING}{os.getpid()}-{uuid.uuid4().hex[:8]}"
        staged = [staging / dense_path.name, staging / lexical_path.name]
        shape = IndexShape(
            version=indexes.version,
            dimension=indexes.dense.dimension,
            dense_size=indexes.dense.size,
            lexical_size=indexes.lexical.size,
        )
        try:
            indexes.dense.save(staged[0])
            indexes.lexical.save(staged[1])
            write_manifest(staging / manifest.name, shape, staged)
            for path, ours in ((dense_path, staged[0]), (lexical_path, staged[1])):
                if path.exists():  # another process saved this version too: ours wins
                    os.replace(path, staging / f"replaced-{path.name}")
                os.replace(ours, path)
            # Last: a version whose manifest is there was saved whole.
            os.replace(staging / manifest.name, manifest)
            # Where the next version hard-links its unchanged files from.
            indexes.dense.moved_to(dense_path)
            indexes.lexical.moved_to(lexical_path)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        if indexes.keys is not None:
            self._save_keys(collection_id, indexes.version, indexes.keys)

    def _save_keys(self, collection_id: int, version: int, keys: UnitKeys) -> None:
        """Save a version's keys with a record of their own (a derived file that a load may
        also write, later than the version's manifest): a restart reads them instead of the
        database's hash of every unit (0.6 s at 10M tokens)."""
        path = self._keys_path(collection_id, version)
        temporary = path.with_name(f".{path.stem}.{uuid.uuid4().hex}.npy")  # writers may race
        try:
            keys.save(temporary)
            os.replace(temporary, path)
            write_record(path.with_suffix(".json"), {"format": _KEYS_FORMAT}, [path])
        except OSError as error:
            temporary.unlink(missing_ok=True)
            _LOG.warning("cannot save index keys under %s: %s", path.parent, error)

    def _saved_keys(self, collection_id: int, indexes: CollectionIndexes) -> UnitKeys | None:
        """The keys saved with this version, when their record verifies them and they fit
        its indexes; else None."""
        path = self._keys_path(collection_id, indexes.version)
        record = verified_record(path.with_suffix(".json"), [path])
        if record is None or record.get("format") != _KEYS_FORMAT:
            return None
        keys = UnitKeys.load(path)
        return keys if keys is not None and len(keys.ids) == indexes.dense.size else None

    def _remove_older_files(self, collection_id: int, version: int) -> None:
        """Remove older versions' files and abandoned staging folders. A newer version's
        files, or a folder another process is saving into, are left alone."""
        now = time.time()
        try:
            paths = list(self._collection_dir(collection_id).iterdir())
        except OSError:
            return  # nothing saved (or the folder is gone): nothing to remove
        for path in paths:
            try:
                if path.name.startswith(_STAGING):
                    stale = now - path.stat().st_mtime > _ABANDONED_AFTER_S
                else:
                    found = _VERSION.search(path.name)
                    stale = found is not None and int(found.group(1)) < version
                if stale and path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                elif stale:
                    path.unlink(missing_ok=True)
            except OSError:
                continue  # another process removed or moved it meanwhile

    def _collection_dir(self, collection_id: int) -> Path:
        return self._dir / f"collection-{collection_id}"

    def collection_dir(self, collection_id: int) -> Path:
        """The folder of a collection's index files, where other derived files may go too
        (the packer's token counts): `forget` removes it with the collection."""
        return self._collection_dir(collection_id)

    def _keys_path(self, collection_id: int, version: int) -> Path:
        """The saved `UnitKeys` of a version: what its indexes hold, for catching up."""
        return self._collection_dir(collection_id) / f"keys-v{version}.npy"

    def _paths(self, collection_id: int, version: int) -> tuple[Path, Path]:
        folder = self._collection_dir(collection_id)
        # Folders since the indexes grew by segments; an older store's `dense-vN.faiss` file is
        # not found here, so its indexes are rebuilt from the database on first open.
        return folder / f"dense-v{version}", folder / f"lexical-v{version}"
