"""BM25 over chunk texts with bm25s; positions in the bm25s corpus map to chunk ids.

bm25s has no incremental add, so a new index version rebuilds it: it indexes ~10M tokens in
about 7 s on this class of machine, which is small beside the embedding of the same text.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from windowpack.errors import MissingDependencyError, StorageError

Ids = npt.NDArray[np.int64]
Scores = npt.NDArray[np.float32]

_IDS_FILE = "chunk_ids.npy"
_STEMMER_LANGUAGE = "english"


def _bm25s() -> Any:
    try:
        import bm25s
    except ImportError as error:  # pragma: no cover - a core dependency
        raise MissingDependencyError("bm25s", "default") from error
    return bm25s


def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer(_STEMMER_LANGUAGE)


class LexicalIndex:
    """A BM25 index (English stop words, Snowball stemming) whose results are chunk ids."""

    def __init__(self, retriever: Any, chunk_ids: Ids) -> None:
        self._retriever = retriever
        self._chunk_ids = chunk_ids
        self._stemmer = _stemmer()

    @classmethod
    def build(cls, chunk_ids: Sequence[int], texts: Sequence[str]) -> LexicalIndex:
        bm25s = _bm25s()
        retriever = bm25s.BM25()
        if texts:
            tokens = bm25s.tokenize(
                list(texts), stopwords="en", stemmer=_stemmer(), show_progress=False
            )
            retriever.index(tokens, show_progress=False)
        return cls(retriever, np.asarray(chunk_ids, dtype=np.int64))

    @property
    def size(self) -> int:
        return len(self._chunk_ids)

    def search(self, query: str, k: int) -> tuple[Ids, Scores]:
        """Top-k chunk ids with BM25 scores; chunks sharing no term with the query are left out."""
        k = min(k, self.size)
        if k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        bm25s = _bm25s()
        tokens = bm25s.tokenize(
            [query], stopwords="en", stemmer=self._stemmer, show_progress=False, allow_empty=True
        )
        if not tokens.vocab or all(not ids for ids in tokens.ids):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        documents, scores = self._retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        keep = scores[0] > 0
        positions = documents[0][keep]
        return self._chunk_ids[positions], scores[0][keep].astype(np.float32)

    def save(self, directory: Path) -> None:
        """Write to a temporary folder, then swap it in."""
        temporary = directory.with_name(directory.name + ".tmp")
        shutil.rmtree(temporary, ignore_errors=True)
        temporary.mkdir(parents=True)
        np.save(temporary / _IDS_FILE, self._chunk_ids)
        if self.size:
            self._retriever.save(str(temporary), show_progress=False)
        else:
            (temporary / "empty.json").write_text(json.dumps({"empty": True}))
        shutil.rmtree(directory, ignore_errors=True)
        os.replace(temporary, directory)

    @classmethod
    def load(cls, directory: Path) -> LexicalIndex:
        try:
            chunk_ids = np.load(directory / _IDS_FILE)
            if len(chunk_ids) == 0:
                return cls(_bm25s().BM25(), chunk_ids)
            retriever = _bm25s().BM25.load(str(directory), show_progress=False)
        except (OSError, ValueError) as error:
            raise StorageError(f"{directory}: cannot read BM25 index: {error}") from error
        return cls(retriever, chunk_ids)
