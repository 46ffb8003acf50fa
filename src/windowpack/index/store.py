"""Loads, rebuilds and publishes a collection's FAISS and BM25 indexes, one version at a time.

Both indexes hold the chunks and the summary-tree nodes, in the one id space of `ids`.

The database is the source of truth. Index files are named by the collection's index
version; a file whose version differs from the database's (or a missing one) is rebuilt
from the chunk table and the embedding cache, and so is a damaged or wrong-shaped one (the
manifest of `files`, then the dimension and counts against the database). Loaded
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

Beside it, `saved_versions` keeps the versions saved on disk, `unit_reads` reads what the
indexes hold from the database, and `collection_indexes` holds a version and a write's delta.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from windowpack.embed import Embedder, embed_with_cache
from windowpack.errors import CollectionDeletedError, StorageError
from windowpack.index.base import LexicalIndex
from windowpack.index.collection_indexes import CollectionIndexes, IndexDelta
from windowpack.index.factory import (
    build_lexical_index,
    build_vector_index,
    load_lexical_index,
    load_vector_index,
)
from windowpack.index.files import IndexShape, manifest_path, verified_shape
from windowpack.index.ids import is_node_index_id, node_index_id
from windowpack.index.saved_versions import SavedVersions
from windowpack.index.sentences import SentenceIndex
from windowpack.index.unit_keys import UnitKeys, hash_keys
from windowpack.index.unit_reads import (
    embedding_dimension,
    every_unit,
    keys_now,
    texts_of,
    unit_count,
)
from windowpack.storage import repository
from windowpack.text import content_hash

_LOG = logging.getLogger("windowpack")
_NODE_IDS = node_index_id(0)  # index ids from here on are summary nodes'

Prepare = Callable[[int, int], bool]
"""Called with (collection id, version) before a loaded version becomes current; False when
it could not make everything ready (the database moved past the version meanwhile)."""


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
        sentence_index: bool = True,
        language: str | None = None,
    ) -> None:
        """`sentence_index`: keep the chunks' sentence vectors (`index.sentences`) beside
        their chunk vectors; off, versions hold none and packs rank by chunk vectors alone.
        `language`: the rules the lexical index cuts texts by (None: detected from them)."""
        self._language = language
        self._files = SavedVersions(index_dir)
        self._sessions = sessions
        self._embedder = embedder
        self._ann_threshold = ann_threshold
        self.sentence_index = sentence_index
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
                self._files.remove_older(collection_id, version)
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
            self._files.remove_collection(collection_id)

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
                self._files.remove_older(collection_id, caught_up.version)
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
        sentences = self._sentences_after(collection_id, previous, delta)
        if len(delta.added_texts) != len(delta.added_ids):
            # Rebuilt with the rules the collection's texts were cut by so far.
            lexical = self._build_lexical(collection_id, previous.lexical.language)
        else:  # a new segment and tombstones: the write costs what it changes
            lexical = previous.lexical.copy()
            lexical.remove(delta.removed_ids)
            lexical.add(delta.added_ids, delta.added_texts)
            if previous.keys is not None:
                hashes = delta.added_hashes or [content_hash(t) for t in delta.added_texts]
                keys = previous.keys.changed(
                    delta.removed_ids, UnitKeys.of(delta.added_ids, hashes)
                )
        return CollectionIndexes(
            version=version, dense=dense, lexical=lexical, sentences=sentences, keys=keys
        )

    def _sentences_after(
        self, collection_id: int, previous: CollectionIndexes, delta: IndexDelta
    ) -> SentenceIndex | None:
        """The sentence index changed by `delta`: its removed chunks' pieces dropped, its
        added chunks' pieces added (from the cache, where the ingest put them). Rebuilt
        when the previous version has none or the delta carries no texts."""
        if not self.sentence_index:
            return None
        if previous.sentences is None or len(delta.added_texts) != len(delta.added_ids):
            ids, _, texts = every_unit(self._sessions, collection_id)
            return self._build_sentences(ids, texts)
        sentences = previous.sentences.copy()
        removed = delta.removed_ids[delta.removed_ids < _NODE_IDS]
        sentences.remove(removed)
        chunks = [
            (index_id, text)
            for index_id, text in zip(delta.added_ids.tolist(), delta.added_texts, strict=True)
            if not is_node_index_id(index_id)
        ]
        sentences.add_embedded(
            self._sessions,
            self._embedder,
            [index_id for index_id, _ in chunks],
            [text for _, text in chunks],
        )
        return sentences

    def _build_sentences(self, ids: list[int], texts: list[str]) -> SentenceIndex | None:
        """The sentence index of these units' chunks (summary nodes have none)."""
        if not self.sentence_index:
            return None
        chunks = [(i, t) for i, t in zip(ids, texts, strict=True) if not is_node_index_id(i)]
        return SentenceIndex.embedded(
            self._sessions,
            self._embedder,
            [index_id for index_id, _ in chunks],
            [text for _, text in chunks],
            ann_threshold=self._ann_threshold,
            dimension=self._embedder_dimension(),
        )

    def _embedder_dimension(self) -> int:
        """The vectors' dimension, from the cache when it holds any (asking the embedder
        loads its model)."""
        cached = embedding_dimension(self._sessions, self._embedder.model_id)
        return cached if cached is not None else self._embedder.dimension

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
            found = texts_of(self._sessions, collection_id, added)
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
        """The database's version and the keys of what it holds (`unit_reads.keys_now`)."""
        return keys_now(self._sessions, collection_id)

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
        dense_path, lexical_path = self._files.paths(collection_id, version)
        if not dense_path.exists() and not lexical_path.exists():
            return None
        sentences_path = self._files.sentences_path(collection_id, version)
        files = [dense_path, lexical_path, sentences_path]
        problem: str | None = "its manifest is missing or a file does not match it"
        shape = verified_shape(manifest_path(dense_path, version), files)
        if shape is not None and (shape.sentence_size >= 0) != self.sentence_index:
            shape, problem = None, "it was saved with another sentence_index setting"
        if shape is not None:
            try:
                indexes = CollectionIndexes(
                    version=version,
                    dense=load_vector_index(dense_path),
                    lexical=load_lexical_index(lexical_path),
                    sentences=(
                        SentenceIndex.load(sentences_path) if shape.sentence_size >= 0 else None
                    ),
                )
                problem = self._shape_problem(collection_id, indexes, shape, database=database)
                saved = self._files.saved_keys(collection_id, indexes) if problem is None else None
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
        sentences = indexes.sentences
        if sentences is not None and sentences.size != shape.sentence_size:
            return f"the sentence index holds {sentences.size} pieces, not {shape.sentence_size}"
        if not database:
            return None
        units = self._unit_count(collection_id)
        dimension = embedding_dimension(self._sessions, self._embedder.model_id)
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
        self._files.save_keys(collection_id, version, keys)
        return replace(indexes, keys=keys)

    def _unit_count(self, collection_id: int) -> int:
        return unit_count(self._sessions, collection_id)

    def _rebuild(self, collection_id: int, version: int) -> CollectionIndexes:
        ids, hashes, texts = every_unit(self._sessions, collection_id)
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
            lexical=build_lexical_index(ids, texts, language=self._language),
            sentences=self._build_sentences(ids, texts),
            keys=UnitKeys.of(ids, hashes),
        )

    def _build_lexical(self, collection_id: int, language: str | None = None) -> LexicalIndex:
        ids, _, texts = every_unit(self._sessions, collection_id)
        return build_lexical_index(ids, texts, language=self._language or language)

    def _save(self, collection_id: int, indexes: CollectionIndexes) -> None:
        """Write a version's files, or log why not: they are derived, and a write that has
        committed must not fail for them (the next process to load rebuilds them)."""
        try:
            self._files.save(collection_id, indexes)
        except OSError as error:
            _LOG.warning("cannot write index files under %s: %s", self._files.index_dir, error)

    @property
    def index_dir(self) -> Path:
        """The folder every collection's index files are under."""
        return self._files.index_dir

    def collection_dir(self, collection_id: int) -> Path:
        """The folder of a collection's index files, where other derived files may go too
        (the packer's token counts): `forget` removes it with the collection."""
        return self._files.collection_dir(collection_id)
