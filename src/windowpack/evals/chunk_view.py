"""A collection's chunks as the baselines see them: texts in document order and their vectors.

The vectors are the ones windowpack computed at ingest (same model, same text), so the dense
and llama-index baselines embed only the query, never the corpus again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from windowpack.retrieval.embedder import Embedder

if TYPE_CHECKING:
    from windowpack.service import Collection, Store


@dataclass(frozen=True, kw_only=True)
class ChunkView:
    """Chunk `i` is `texts[i]` with vector `vectors[i]`; `i` is its place in document order."""

    texts: list[str]
    vectors: npt.NDArray[np.float32]
    embedder: Embedder


def chunk_view(store: Store, collection: Collection) -> ChunkView:
    """The chunks of `collection` in (document, ordinal) order with their stored vectors."""
    texts, vectors = collection.chunk_vectors()
    return ChunkView(texts=texts, vectors=vectors, embedder=store.embedder)
