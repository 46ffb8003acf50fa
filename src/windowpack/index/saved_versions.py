"""The index folder: each collection's saved versions (index files, manifest and keys),
written so that a reader or another process never finds half of one."""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
import uuid
from pathlib import Path
from typing import Protocol

from windowpack.index.collection_indexes import CollectionIndexes
from windowpack.index.files import (
    IndexShape,
    manifest_path,
    verified_record,
    write_manifest,
    write_record,
)
from windowpack.index.unit_keys import UnitKeys
from windowpack.text import write_atomically

_LOG = logging.getLogger("windowpack")
# Index files are named `...-v{version}...`; a process saves into `.staging-{pid}-{random}`.
_VERSION = re.compile(r"-v(\d+)\b")
_STAGING = ".staging-"
_KEYS_FORMAT = "unit-keys-1"
_ABANDONED_AFTER_S = 3600


class _Saved(Protocol):
    """What each of a version's indexes offers its folder."""

    def save(self, path: Path, /) -> None: ...

    def moved_to(self, path: Path, /) -> None: ...


class SavedVersions:
    """The saved versions of every collection under one index folder, a folder each."""

    def __init__(self, index_dir: Path) -> None:
        self.index_dir = index_dir

    def collection_dir(self, collection_id: int) -> Path:
        """The folder of a collection's index files (and of other derived files)."""
        return self.index_dir / f"collection-{collection_id}"

    def paths(self, collection_id: int, version: int) -> tuple[Path, Path]:
        """Where a version's dense and lexical index are saved."""
        folder = self.collection_dir(collection_id)
        # A folder per index (its segments and ids inside): a store that saved each index as
        # one `dense-vN.faiss` file is not found here, so its indexes are rebuilt from the
        # database on first open.
        return folder / f"dense-v{version}", folder / f"lexical-v{version}"

    def sentences_path(self, collection_id: int, version: int) -> Path:
        """Where a version's sentence index is saved (beside its dense and lexical index)."""
        return self.collection_dir(collection_id) / f"sentences-v{version}"

    def save(self, collection_id: int, indexes: CollectionIndexes) -> None:
        """Write into a folder of this process's own, then move into place: two processes
        saving the same version never share a temporary file, so neither fails on the
        other's. Raises `OSError` when the index files cannot be written."""
        dense_path, lexical_path = self.paths(collection_id, indexes.version)
        targets = [dense_path, lexical_path]
        savers: list[_Saved] = [indexes.dense, indexes.lexical]
        if indexes.sentences is not None:
            targets.append(self.sentences_path(collection_id, indexes.version))
            savers.append(indexes.sentences)
        manifest = manifest_path(dense_path, indexes.version)
        staging = dense_path.parent / f"{_STAGING}{os.getpid()}-{uuid.uuid4().hex[:8]}"
        staged = [staging / target.name for target in targets]
        shape = IndexShape(
            version=indexes.version,
            dimension=indexes.dense.dimension,
            dense_size=indexes.dense.size,
            lexical_size=indexes.lexical.size,
            sentence_size=-1 if indexes.sentences is None else indexes.sentences.size,
        )
        try:
            for saver, ours in zip(savers, staged, strict=True):
                saver.save(ours)
            write_manifest(staging / manifest.name, shape, staged)
            for path, ours in zip(targets, staged, strict=True):
                if path.exists():  # another process saved this version too: ours wins
                    os.replace(path, staging / f"replaced-{path.name}")
                os.replace(ours, path)
            # Last: a version whose manifest is there was saved whole.
            os.replace(staging / manifest.name, manifest)
            # Where the next version hard-links its unchanged files from.
            for saver, path in zip(savers, targets, strict=True):
                saver.moved_to(path)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        if indexes.keys is not None:
            self.save_keys(collection_id, indexes.version, indexes.keys)

    def save_keys(self, collection_id: int, version: int, keys: UnitKeys) -> None:
        """Save a version's keys with a record of their own (a derived file that a load may
        also write, later than the version's manifest): a restart reads them instead of the
        database's hash of every unit (0.6 s at 10M tokens). A failure is logged, not
        raised: the keys are derived, and the next load reads them from the database."""
        path = self._keys_path(collection_id, version)
        try:
            # Writers may race on one version's keys; `np.save` wants the `.npy` ending.
            write_atomically(path, keys.save, suffix=".npy")
            write_record(path.with_suffix(".json"), {"format": _KEYS_FORMAT}, [path])
        except OSError as error:
            _LOG.warning("cannot save index keys under %s: %s", path.parent, error)

    def saved_keys(self, collection_id: int, indexes: CollectionIndexes) -> UnitKeys | None:
        """The keys saved with this version, when their record verifies them and they fit
        its indexes; else None."""
        path = self._keys_path(collection_id, indexes.version)
        record = verified_record(path.with_suffix(".json"), [path])
        if record is None or record.get("format") != _KEYS_FORMAT:
            return None
        keys = UnitKeys.load(path)
        return keys if keys is not None and len(keys.ids) == indexes.dense.size else None

    def remove_older(self, collection_id: int, version: int) -> None:
        """Remove older versions' files and abandoned staging folders. A newer version's
        files, or a folder another process is saving into, are left alone."""
        now = time.time()
        try:
            paths = list(self.collection_dir(collection_id).iterdir())
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

    def remove_collection(self, collection_id: int) -> None:
        """Remove a deleted collection's folder, whatever it holds."""
        shutil.rmtree(self.collection_dir(collection_id), ignore_errors=True)

    def _keys_path(self, collection_id: int, version: int) -> Path:
        """The saved `UnitKeys` of a version: what its indexes hold, for catching up."""
        return self.collection_dir(collection_id) / f"keys-v{version}.npy"
