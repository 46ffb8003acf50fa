"""A collection's chunks as the baselines see them: texts in document order and their vectors.

The evals sit above the facade and need what it does not expose, the chunk table and the
embedding cache; reading them is kept to this one module. The vectors are the ones windowpack
computed at ingest (same model, same text), so the dense and llama-index baselines embed
only the query, never the corpus again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from windowpack.retrieval.embedder import Embedder, get_embedder
from windowpack.retrieval.embedding_cache import content_hash, embed_with_cache
from windowpack.storage import repository

if TYPE_CHECKING:
    from windowpack.service import Collection, Store


@dataclass(frozen=True, kw_only=True)
class ChunkView:
    """Chunk `i` is `texts[i]` with vector `vectors[i]`; `i` is its place in document order."""

    texts: list[str]
    vectors: npt.NDArray[np.float32]
    embedder: Embedder


def chunk_view(store: Store, collection: Collection) -> ChunkView:
    """The chunks of `collection` in (document, ordinal) order with their cached vectors."""
    embedder = get_embedder(store.config.embedder, batch_size=store.config.embed_batch_size)
    sessions = store._sessions
    with sessions() as session:
        _, texts = repository.chunk_texts_and_ids(session, collection._id)
    # Every chunk was embedded at ingest, so this reads the cache and embeds nothing.
    vectors, _ = embed_with_cache(sessions, embedder, texts, [content_hash(t) for t in texts])
    return ChunkView(texts=texts, vectors=vectors, embedder=embedder)
