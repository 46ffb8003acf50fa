"""Builds and loads a collection's indexes of the kinds in use (the protocols are in `base`).

The implementations are imported inside each function: FAISS and bm25s load on first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from windowpack.index.base import Ids, LexicalIndex, Matrix, VectorIndex


def build_vector_index(
    dimension: int, ids: Ids, vectors: Matrix, *, ann_threshold: int
) -> VectorIndex:
    """Exact search below `ann_threshold` vectors, an ANN index at or above it."""
    from windowpack.index.appendable_dense import AppendableFaissIndex
    from windowpack.index.dense import FaissIndex

    base = FaissIndex.build(dimension, ids, vectors, ann_threshold=ann_threshold)
    return AppendableFaissIndex.build(base, ids)


def load_vector_index(path: Path) -> VectorIndex:
    """The vector index saved at `path`; `StorageError` when it cannot be read."""
    from windowpack.index.appendable_dense import AppendableFaissIndex

    return AppendableFaissIndex.load(path)


def build_lexical_index(
    ids: Sequence[int], texts: Sequence[str], *, language: str | None = None
) -> LexicalIndex:
    """BM25 over `texts` under `ids`, cut into terms by `language`'s rules (None: the
    language is detected from the texts, `text.detect_language`)."""
    from windowpack.index.lexical import Bm25Index

    return Bm25Index.build(ids, texts, language=language)


def load_lexical_index(directory: Path) -> LexicalIndex:
    """The lexical index saved in `directory`; `StorageError` when it cannot be read."""
    from windowpack.index.lexical import Bm25Index

    return Bm25Index.load(directory)
