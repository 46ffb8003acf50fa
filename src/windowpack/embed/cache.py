"""Embedding through the database cache keyed by (model id, content hash)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from windowpack.embed.embedder import Embedder, InContextEmbedder, Spans, Vectors
from windowpack.storage import repository
from windowpack.text import content_hash

# Cache writes are committed per batch, so an interrupted ingest keeps the work it did.
_COMMIT_EVERY = 256
# Progress is reported more often: 256 texts take ~10 s on two cores, too long for a rate.
_REPORT_EVERY = 64


def texts_per_call(embedder: Embedder) -> int:
    """How many texts to hand `embedder.embed` at once: a progress step locally; an embedder
    that fans out (`RayEmbedder`) says how many keep all its workers busy."""
    wanted = getattr(embedder, "texts_per_call", None)
    return max(_REPORT_EVERY, wanted) if isinstance(wanted, int) else _REPORT_EVERY


def embed_with_cache(
    sessions: sessionmaker[Session],
    embedder: Embedder,
    texts: Sequence[str],
    hashes: Sequence[str],
    *,
    on_embedded: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
) -> tuple[Vectors, int]:
    """Vectors for `texts` (row i for texts[i]) and how many had to be embedded afresh.

    Texts whose hash is cached for this model are not embedded again; identical texts in
    one call are embedded once. `on_total` is told how many will be embedded afresh before
    the first is, `on_embedded` each batch's count after it is: a progress's total and steps.
    """
    with sessions() as session:
        cached = repository.cached_embeddings(session, embedder.model_id, hashes)
    missing: dict[str, str] = {}
    for text, text_hash in zip(texts, hashes, strict=True):
        if text_hash not in cached and text_hash not in missing:
            missing[text_hash] = text
    if on_total is not None:
        on_total(len(missing))
    fresh = _embed_and_store(sessions, embedder, missing, on_embedded)
    if missing:
        _prepare_queries(embedder)
    dimension = _dimension(cached, embedder)
    vectors = np.zeros((len(texts), dimension), dtype=np.float32)
    for row, text_hash in enumerate(hashes):
        blob = cached.get(text_hash)
        vectors[row] = np.frombuffer(blob, dtype=np.float32) if blob else fresh[text_hash]
    return vectors, len(missing)


def _prepare_queries(embedder: Embedder) -> None:
    """Have the embedder make its question model now, while its model is loaded (an ONNX
    export needs torch, `embed.query_model`), so that the processes that later only ask
    questions import no torch; an embedder without one (the hash embedder) has nothing to
    make."""
    prepare = getattr(embedder, "prepare_queries", None)
    if callable(prepare):
        prepare()


def _embed_and_store(
    sessions: sessionmaker[Session],
    embedder: Embedder,
    missing: dict[str, str],
    on_embedded: Callable[[int], None] | None,
) -> dict[str, Vectors]:
    fresh: dict[str, Vectors] = {}
    # Longest first, so that each model batch holds texts of about one length: a batch is
    # padded to its longest text, and a chat mixes 10-token requests with 200-token reply
    # chunks (in input order its batches were 24 % padding, sorted 3 %; see
    # benchmarks/ingest.py --chat). Vectors go back by hash: the caller's order is kept.
    items = sorted(missing.items(), key=lambda item: -len(item[1]))
    per_call = texts_per_call(embedder)
    per_commit = max(_COMMIT_EVERY, per_call)
    for start in range(0, len(items), per_commit):
        batch = items[start : start + per_commit]
        vectors = _embed_reporting([text for _, text in batch], embedder, on_embedded, per_call)
        blobs = {}
        for (text_hash, _), vector in zip(batch, vectors, strict=True):
            fresh[text_hash] = vector
            blobs[text_hash] = _blob(vector)
        with sessions.begin() as session:
            repository.store_embeddings(session, embedder.model_id, embedder.dimension, blobs)
    return fresh


def _embed_reporting(
    texts: list[str],
    embedder: Embedder,
    on_embedded: Callable[[int], None] | None,
    per_call: int,
) -> Vectors:
    parts = []
    for start in range(0, len(texts), per_call):
        part = texts[start : start + per_call]
        parts.append(embedder.embed(part))
        if on_embedded is not None:
            on_embedded(len(part))
    return np.concatenate(parts) if parts else np.zeros((0, embedder.dimension), np.float32)


def in_context_model_id(embedder: Embedder) -> str:
    """The cache's model id for vectors of parts of a text embedded in the text's own pass
    (`InContextEmbedder`): apart from the same words embedded alone."""
    return f"{embedder.model_id} · sentences in context"


def embed_spans_with_cache(
    sessions: sessionmaker[Session],
    embedder: InContextEmbedder,
    texts: Sequence[str],
    hashes: Sequence[str],
    spans: Sequence[Spans],
    *,
    on_embedded: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
) -> tuple[Vectors, int]:
    """The vectors of every span of `texts` (`hashes`: the texts' content hashes), one row per
    span in text order, embedded in their texts' passes (`embed_in_context`), and how many
    texts had to be embedded afresh. A span's vector is cached under its text's hash and its
    characters, so the same words in another text are embedded again there. A text embedded
    afresh has its own vector cached as `embed_with_cache` keeps it: the chunk's vector
    comes with its sentences' at no cost. `on_total`, `on_embedded`: in texts."""
    model_id = in_context_model_id(embedder)
    keys = [
        [_span_key(text_hash, start, end) for start, end in own]
        for text_hash, own in zip(hashes, spans, strict=True)
    ]
    with sessions() as session:
        cached = repository.cached_embeddings(
            session, model_id, [key for own in keys for key in own]
        )
    missing: dict[str, int] = {}  # text hash -> the first text of it
    for row, (text_hash, own) in enumerate(zip(hashes, keys, strict=True)):
        if text_hash not in missing and any(key not in cached for key in own):
            missing[text_hash] = row
    if on_total is not None:
        on_total(len(missing))
    fresh: dict[str, Vectors] = {}
    rows = sorted(missing.values(), key=lambda row: -len(texts[row]))
    for first in range(0, len(rows), _COMMIT_EVERY):
        batch = rows[first : first + _COMMIT_EVERY]
        text_blobs: dict[str, bytes] = {}
        span_blobs: dict[str, bytes] = {}
        for start in range(0, len(batch), _REPORT_EVERY):
            part = batch[start : start + _REPORT_EVERY]
            text_vectors, span_vectors = embedder.embed_in_context(
                [texts[row] for row in part], [spans[row] for row in part]
            )
            for row, vector, of_text in zip(part, text_vectors, span_vectors, strict=True):
                text_blobs[hashes[row]] = _blob(vector)
                for key, span_vector in zip(keys[row], of_text, strict=True):
                    fresh[key] = span_vector
                    span_blobs[key] = _blob(span_vector)
            if on_embedded is not None:
                on_embedded(len(part))
        with sessions.begin() as session:
            repository.store_embeddings(session, model_id, embedder.dimension, span_blobs)
            repository.store_embeddings(session, embedder.model_id, embedder.dimension, text_blobs)
    count = sum(len(own) for own in keys)
    dimension = _dimension(cached, embedder)
    vectors = np.zeros((count, dimension), dtype=np.float32)
    for slot, key in enumerate(key for own in keys for key in own):
        blob = cached.get(key)
        vectors[slot] = np.frombuffer(blob, dtype=np.float32) if blob else fresh[key]
    return vectors, len(missing)


def _span_key(text_hash: str, start: int, end: int) -> str:
    return content_hash(f"{text_hash}:{start}:{end}")


def _blob(vector: Vectors) -> bytes:
    return np.ascontiguousarray(vector, dtype=np.float32).tobytes()


def _dimension(cached: dict[str, bytes], embedder: Embedder) -> int:
    """The vectors' length, read from a cached one when there is one (asking the embedder
    loads its model)."""
    if cached:
        return len(next(iter(cached.values()))) // np.dtype(np.float32).itemsize
    return embedder.dimension
