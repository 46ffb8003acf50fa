"""Embedding through the database cache keyed by (model id, content hash)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from windowpack.retrieval.embedder import Embedder, Vectors
from windowpack.storage import repository

# Cache writes are committed per batch, so an interrupted ingest keeps the work it did.
_COMMIT_EVERY = 256
# Progress is reported more often: 256 texts take ~10 s on two cores, too long for a rate.
_REPORT_EVERY = 64


def embed_with_cache(
    sessions: sessionmaker[Session],
    embedder: Embedder,
    texts: Sequence[str],
    hashes: Sequence[str],
    *,
    on_embedded: Callable[[int], None] | None = None,
) -> tuple[Vectors, int]:
    """Vectors for `texts` (row i for texts[i]) and how many had to be embedded afresh.

    Texts whose hash is cached for this model are not embedded again; identical texts in
    one call are embedded once.
    """
    with sessions() as session:
        cached = repository.cached_embeddings(session, embedder.model_id, hashes)
    missing: dict[str, str] = {}
    for text, text_hash in zip(texts, hashes, strict=True):
        if text_hash not in cached and text_hash not in missing:
            missing[text_hash] = text
    fresh = _embed_and_store(sessions, embedder, missing, on_embedded)
    # Asking the embedder for its dimension loads the model: avoid it when all was cached.
    if cached:
        dimension = len(next(iter(cached.values()))) // np.dtype(np.float32).itemsize
    else:
        dimension = embedder.dimension
    vectors = np.zeros((len(texts), dimension), dtype=np.float32)
    for row, text_hash in enumerate(hashes):
        blob = cached.get(text_hash)
        vectors[row] = np.frombuffer(blob, dtype=np.float32) if blob else fresh[text_hash]
    return vectors, len(missing)


def _embed_and_store(
    sessions: sessionmaker[Session],
    embedder: Embedder,
    missing: dict[str, str],
    on_embedded: Callable[[int], None] | None,
) -> dict[str, Vectors]:
    fresh: dict[str, Vectors] = {}
    items = list(missing.items())
    for start in range(0, len(items), _COMMIT_EVERY):
        batch = items[start : start + _COMMIT_EVERY]
        vectors = _embed_reporting([text for _, text in batch], embedder, on_embedded)
        blobs = {}
        for (text_hash, _), vector in zip(batch, vectors, strict=True):
            fresh[text_hash] = vector
            blobs[text_hash] = np.ascontiguousarray(vector, dtype=np.float32).tobytes()
        with sessions.begin() as session:
            repository.store_embeddings(session, embedder.model_id, embedder.dimension, blobs)
    return fresh


def _embed_reporting(
    texts: list[str], embedder: Embedder, on_embedded: Callable[[int], None] | None
) -> Vectors:
    parts = []
    for start in range(0, len(texts), _REPORT_EVERY):
        part = texts[start : start + _REPORT_EVERY]
        parts.append(embedder.embed(part))
        if on_embedded is not None:
            on_embedded(len(part))
    return np.concatenate(parts) if parts else np.zeros((0, embedder.dimension), np.float32)
