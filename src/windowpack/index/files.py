"""The manifest beside a collection's index files: what a saved version must look like.

Index files are derived and may be damaged on disk: truncated by a full disk, overwritten by
another version's file, or garbage. FAISS and bm25s read many of those without complaint (a
FAISS file of another dimension loads; an ids file of the wrong length loads and fails at the
first search), so a load cannot be trusted to fail. The manifest, written last and
atomically, records each file's SHA-256 and what the indexes held; a version is loaded only
when every file matches it and the shape matches the database (`IndexStore`), and is rebuilt
otherwise. A version without a manifest (an interrupted save) is rebuilt too.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from windowpack.text import write_atomically

_CHUNK = 1 << 20


@dataclass(frozen=True, kw_only=True)
class IndexShape:
    """What one saved version holds: checked against the database before it is used."""

    version: int
    dimension: int
    dense_size: int
    lexical_size: int
    sentence_size: int = -1
    """Pieces in the sentence index; -1 when the version was saved without one."""


def manifest_path(dense_path: Path, version: int) -> Path:
    return dense_path.with_name(f"manifest-v{version}.json")


def write_manifest(path: Path, shape: IndexShape, files: list[Path]) -> None:
    """Record `shape` and the digest of every file under `files` (atomically, after them)."""
    write_record(path, asdict(shape), files)


def verified_shape(path: Path, files: list[Path]) -> IndexShape | None:
    """The recorded shape when the manifest is there and every file matches it; else None."""
    recorded = verified_record(path, files)
    try:
        return None if recorded is None else IndexShape(**recorded)
    except TypeError:
        return None


def write_record(path: Path, record: dict[str, Any], files: list[Path]) -> None:
    """A manifest of any derived files (the packer's saved token counts use it too): `record`
    and the digest of every file under `files`, written atomically, after them."""
    digests = {str(file.relative_to(path.parent)): _digest(file) for file in _every_file(files)}
    write_atomically(path, json.dumps({**record, "files": digests}, sort_keys=True).encode())


def verified_record(path: Path, files: list[Path]) -> dict[str, Any] | None:
    """What `write_record` recorded, when the manifest is there and `files` are exactly the
    files it lists, each with its digest; else None (the caller rebuilds them)."""
    try:
        recorded = json.loads(path.read_text())
        digests = recorded.pop("files")
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    try:
        present = {str(file.relative_to(path.parent)) for file in _every_file(files)}
        if not isinstance(recorded, dict) or present != set(digests):
            return None
        for name, digest in digests.items():
            if _digest(path.parent / name) != digest:
                return None
    except OSError:  # a file removed meanwhile
        return None
    return recorded


def _every_file(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.is_file()))
        elif path.exists():
            found.append(path)
    return found


# Digests by file identity: a version hard-links the files it did not change from the one
# before (same inode, size and mtime), so a write hashes only what it wrote.
_KNOWN: dict[tuple[int, int, int, int], str] = {}
_KNOWN_LIMIT = 100_000


def _digest(path: Path) -> str:
    status = path.stat()
    identity = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)
    known = _KNOWN.get(identity)
    if known is None:
        known = _hashed(path)
        if len(_KNOWN) >= _KNOWN_LIMIT:
            _KNOWN.clear()
        _KNOWN[identity] = known
    return known


def _hashed(path: Path) -> str:
    hasher = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(_CHUNK):
            hasher.update(block)
    return hasher.hexdigest()
