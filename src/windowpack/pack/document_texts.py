"""Document texts for packing states: files named by their hash, read when a pack needs them.

A packing state holding every document's text as a Python string, for the life of the version,
would take 93 MiB at 10.9M tokens for 47 MiB of UTF-8 (a string with one character outside
Latin-1 takes 2 bytes for each), so a 100M-token collection would hold ~1 GB that packs mostly
never read. Here a state keeps each document's SHA-256 (the store's `text_hash`), and the texts
live in `texts/<sha256>.txt` in the collection's index folder: written once, by the load that
finds one missing; read when a pack renders from the document; the recently read kept decoded
in a cache bounded in characters (`TextCache`, one per packer). The kernel's page cache holds
the files, not the process.

A file is named by its content, so it never changes: versions and tokenizers share it, and
two loads writing the same one write the same bytes. A read checks the bytes against the
name; a file found missing or damaged is read again from the database by its document id
(and written again) when the database still holds that text, and is a `StorageError`
naming the file when it does not (the document changed after the version was loaded, and
the file was removed meanwhile). Files no held state names are swept once they outnumber
the ones in use.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cachetools import LRUCache

from windowpack.errors import StorageError
from windowpack.text import content_hash, write_atomically

_LOG = logging.getLogger("windowpack")
_SUFFIX = ".txt"
# Characters of decoded text a packer keeps (every collection together): several 1M-token
# windows' worth, so the documents a pack renders from are read once per pack at most.
DEFAULT_CACHE_CHARS = 16 * 1024 * 1024

ReadTexts = Callable[[Sequence[int]], dict[int, str]]
"""Texts by document id, read from the database (a missing id is absent)."""


class TextCache:
    """Decoded texts by hash, least recently used dropped past `max_chars` characters.

    A text longer than the whole bound is still kept, alone, until another is put: a pack
    renders from the same document many times, and reading it again each time would cost
    more than holding it for a while.
    """

    def __init__(self, max_chars: int = DEFAULT_CACHE_CHARS) -> None:
        self._max_chars = max_chars
        self._texts: LRUCache[str, str] = LRUCache(maxsize=max_chars, getsizeof=len)
        # cachetools refuses an entry larger than its bound: the one such text sits here.
        self._oversized: tuple[str, str] | None = None
        # cachetools' caches are not thread-safe, and a read reorders the LRU.
        self._lock = threading.Lock()

    def get(self, text_hash: str) -> str | None:
        with self._lock:
            oversized = self._oversized
            if oversized is not None and oversized[0] == text_hash:
                return oversized[1]
            return self._texts.get(text_hash)

    def put(self, text_hash: str, text: str) -> None:
        with self._lock:
            oversized = self._oversized
            if text_hash in self._texts or (oversized is not None and oversized[0] == text_hash):
                return
            self._oversized = None
            if len(text) > self._max_chars:
                self._texts.clear()
                self._oversized = (text_hash, text)
            else:
                self._texts[text_hash] = text

    @property
    def chars(self) -> int:
        """Characters held now."""
        oversized = self._oversized
        return int(self._texts.currsize) + (len(oversized[1]) if oversized is not None else 0)


class DocumentTexts:
    """The text files of one collection's index folder, with the database to fall back on."""

    def __init__(self, folder: Path, read_texts: ReadTexts, cache: TextCache) -> None:
        self.folder = folder / "texts"
        self._prefix = os.path.join(self.folder, "")  # a string: pathlib cost ~40 us a read
        self._read_texts = read_texts
        self._cache = cache

    def ensure(self, documents: Sequence[tuple[int, str]]) -> None:
        """Write the file of every (document id, text hash) that has none, reading those
        texts from the database; raises `StorageError` when the folder cannot be written."""
        present = self._present()
        missing = {text_hash: doc_id for doc_id, text_hash in documents if text_hash}
        missing = {h: doc_id for h, doc_id in missing.items() if h not in present}
        ids = list(missing.values())
        for start in range(0, len(ids), 256):  # a batch of texts in memory at a time
            texts = self._read_texts(ids[start : start + 256])
            for text in texts.values():
                self._write(content_hash(text), text)

    def text(self, text_hash: str, document_id: int) -> str:
        """The text whose hash is `text_hash` (document `document_id`'s at the state's version)."""
        text = self._cache.get(text_hash)
        if text is None:
            text = self._read(text_hash, document_id)
            self._cache.put(text_hash, text)
        return text

    def sweep(self, in_use: Iterable[str]) -> int:
        """Remove the files no hash of `in_use` names, once they outnumber those in use (a
        sweep lists the folder: paid only as often as half of it went out of use). Returns
        how many were removed."""
        keep = set(in_use)
        unused = [h for h in self._present() if h not in keep]
        if len(unused) <= max(len(keep), 64):
            return 0
        for text_hash in unused:
            self._path(text_hash).unlink(missing_ok=True)
        return len(unused)

    def _present(self) -> set[str]:
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return set()
        except OSError as error:
            raise StorageError(f"{self.folder}: cannot list document texts: {error}") from error
        return {name[: -len(_SUFFIX)] for name in names if name.endswith(_SUFFIX)}

    def _path(self, text_hash: str) -> Path:
        return self.folder / f"{text_hash}{_SUFFIX}"

    def _read(self, text_hash: str, document_id: int) -> str:
        try:
            with open(f"{self._prefix}{text_hash}{_SUFFIX}", "rb") as file:
                data = file.read()
        except OSError:
            data = b""
        if hashlib.sha256(data).hexdigest() == text_hash:
            return data.decode("utf-8")
        path = self._path(text_hash)
        # Missing or damaged: the database may still hold this text (the document unchanged).
        text = self._read_texts([document_id]).get(document_id)
        if text is None or content_hash(text) != text_hash:
            raise StorageError(
                f"{path}: document {document_id}'s text is missing or damaged, and the "
                "database no longer holds it (the document changed); pack again"
            )
        _LOG.warning("%s: missing or damaged; written again from the database", path)
        self._write(text_hash, text)
        return text

    def _write(self, text_hash: str, text: str) -> None:
        """Write atomically (a reader never sees half a file; same name, same bytes)."""
        path = self._path(text_hash)
        try:
            write_atomically(path, text.encode("utf-8"))
        except OSError as error:
            raise StorageError(f"{path}: cannot write document text: {error}") from error


@dataclass(frozen=True, slots=True)
class StoredText:
    """A document's text held as its hash, read from `DocumentTexts` when used."""

    source: DocumentTexts = field(compare=False, repr=False)  # equal texts, equal bodies
    text_hash: str
    document_id: int

    def read(self) -> str:
        return self.source.text(self.text_hash, self.document_id)
