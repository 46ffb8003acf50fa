"""Token counts saved beside a collection's index files, so a restart does not recount them.

Counting every chunk tile and summary node is most of a packing-state load (~2 s of tiktoken
at 10M tokens), and a new process would pay it in full before its first pack: the in-memory
reuse of `state._known_counts` needs the previous version's state, which a restart lacks.
Here each (collection, tokenizer) has one file of the counts of the texts its latest loaded
state held, keyed by their text: a count is a pure function of (text, tokenizer), so the file
serves any later version for every text it did not change, and versions need no files of
their own. It is read with `np.load(mmap_mode="r")`. A summary node's key is a 64-bit BLAKE2b
digest of its text; a chunk tile's (the chunk and the whitespace to the next one) is its
ordinal mixed into the digest of its document's text and chunk starts, which fix every tile's
text: one digest per document instead of one per tile, and no tile text is cut out unless it
has to be counted.

The file is derived, like the index files: its manifest (`index.files`) records its
digest and tokenizer, and a missing, damaged or mismatched file is simply not used; the load
counts what it lacks and writes the file again. Two texts sharing a digest (odds ~n²/2⁶⁵, about
3e-8 for a million texts) would lend one text the other's count: that moves an allocator
estimate only, since every window is counted exactly once rendered (`window._counted`).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from windowpack.index import verified_record, write_record
from windowpack.pack.layout import DocumentView
from windowpack.text import write_atomically

_LOG = logging.getLogger("windowpack")
_FORMAT = "token-counts-1"
Keys = npt.NDArray[np.uint64]


def unit_keys(documents: Sequence[DocumentView], node_texts: Sequence[str]) -> Keys:
    """The key of every chunk tile of `documents` in order, then of every node text."""
    tiles = np.asarray([len(view.chunk_starts) for view in documents], dtype=np.int64)
    seeds = np.fromiter(
        (_document_digest(view) for view in documents), dtype=np.uint64, count=len(documents)
    )
    firsts = np.cumsum(tiles) - tiles
    ordinals = np.arange(int(tiles.sum()), dtype=np.uint64) - np.repeat(firsts, tiles).astype(
        np.uint64
    )
    return np.concatenate([_mixed(np.repeat(seeds, tiles), ordinals), text_keys(node_texts)])


def _document_digest(view: DocumentView) -> int:
    if not view.chunk_starts:
        return 0  # no tiles: the key is never used
    spans = np.asarray([*view.chunk_starts, view.chunk_ends[-1]], dtype=np.int64)
    # The store's SHA-256 of the text stands for it: hashing 10M tokens' text again was most
    # of this function's time.
    text = bytes.fromhex(view.text_hash) if view.text_hash else view.text.encode()
    return _digest(text + spans.tobytes())


def _mixed(seeds: Keys, ordinals: Keys) -> Keys:
    """splitmix64 of seed + ordinal x golden ratio: distinct ordinals of one seed never share a
    key, and keys of different seeds look independent."""
    with np.errstate(over="ignore"):
        x = seeds + ordinals * np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        mixed: Keys = x ^ (x >> np.uint64(31))
        return mixed


def _digest(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def text_keys(texts: Sequence[str]) -> Keys:
    """The 64-bit digest of each text (UTF-8, BLAKE2b), the key its count is saved under."""
    return np.fromiter(
        (_digest(text.encode()) for text in texts), dtype=np.uint64, count=len(texts)
    )


@dataclass(frozen=True)
class SavedCounts:
    """The saved counts of one collection in one tokenizer, under `folder`.

    The file holds one uint64 array: the sorted keys, then the count of each (so both halves
    are contiguous slices of one mapping).
    """

    folder: Path
    tokenizer: str

    @property
    def path(self) -> Path:
        # The name carries no version (`-vN`): the index store's clean-up of older versions
        # leaves it alone, and forgetting the collection removes it with the folder. The
        # tokenizer's name is hashed, not spelled, for the same reason (any name may hold -v2).
        digest = hashlib.sha256(self.tokenizer.encode()).hexdigest()[:16]
        return self.folder / f"token-counts-{digest}.npy"

    @property
    def manifest(self) -> Path:
        return self.path.with_suffix(".json")

    def lookup(self, keys: Keys) -> npt.NDArray[np.int64]:
        """The saved count of each key, -1 for a key not saved (or no usable file)."""
        found = np.full(len(keys), -1, dtype=np.int64)
        saved = self._read()
        if saved is None or not len(saved[0]) or not len(keys):
            return found
        saved_keys, saved_counts = saved
        at = np.minimum(np.searchsorted(saved_keys, keys), len(saved_keys) - 1)
        hit = saved_keys[at] == keys
        found[hit] = saved_counts[at[hit]]
        return found

    def save(self, keys: Keys, counts: npt.NDArray[np.int64]) -> None:
        """Write the counts of these texts (the state's), replacing the file; log on failure:
        a load must not fail for a derived file it could not write."""
        unique, first = np.unique(keys, return_index=True)
        data = np.concatenate([unique, counts[first].astype(np.uint64)])
        # Two processes, or two versions loading in one, may save at once: the last replace
        # wins and either file is right (keyed by text).
        try:
            write_atomically(self.path, lambda where: np.save(where, data), suffix=".npy")
            record = {"format": _FORMAT, "tokenizer": self.tokenizer, "texts": len(unique)}
            write_record(self.manifest, record, [self.path])
        except OSError as error:
            _LOG.warning("cannot save token counts under %s: %s", self.folder, error)

    def _read(self) -> tuple[Keys, Keys] | None:
        """The saved keys and counts, mapped, when the file matches its manifest."""
        record = verified_record(self.manifest, [self.path])
        if record is None or record.get("format") != _FORMAT:
            return None
        if record.get("tokenizer") != self.tokenizer:
            return None
        try:
            data = np.load(self.path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError):
            return None
        texts = record.get("texts")
        if not isinstance(texts, int) or data.dtype != np.uint64 or data.shape != (2 * texts,):
            return None
        return data[:texts], data[texts:]
