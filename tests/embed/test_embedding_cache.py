"""How `embed_with_cache` feeds the model: longest texts first, calls sized for the embedder."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy.orm import Session, sessionmaker

from windowpack.embed.cache import embed_spans_with_cache, embed_with_cache
from windowpack.embed.embedder import HashEmbedder, Vectors
from windowpack.storage.database import create_database_engine, migrate, session_factory, sqlite_url
from windowpack.text.hashing import content_hash


class RecordingEmbedder(HashEmbedder):
    """The hash embedder, remembering the texts of each `embed` call."""

    def __init__(self, texts_per_call: int | None = None) -> None:
        super().__init__()
        self.calls: list[list[str]] = []
        if texts_per_call is not None:
            self.texts_per_call = texts_per_call

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        return super().embed(texts)


@pytest.fixture
def sessions(tmp_path: Path) -> Iterator[sessionmaker[Session]]:
    """An empty, migrated SQLite database: nothing cached."""
    engine = create_database_engine(sqlite_url(tmp_path / "cache.db"))
    migrate(engine)
    yield session_factory(engine)
    engine.dispose()


def _chat_like_texts(count: int) -> list[str]:
    """Short requests among long reply chunks, in a shuffled order, all distinct."""
    rng = random.Random(7)
    texts = [f"request {n}: write a poem" if n % 3 else f"reply {n} " * 60 for n in range(count)]
    rng.shuffle(texts)
    return texts


def test_texts_reach_the_model_longest_first_and_come_back_in_input_order(
    sessions: sessionmaker[Session],
) -> None:
    texts = _chat_like_texts(300)
    embedder = RecordingEmbedder()
    hashes = [content_hash(text) for text in texts]
    vectors, embedded = embed_with_cache(sessions, embedder, texts, hashes)
    seen = [text for call in embedder.calls for text in call]
    assert embedded == len(texts) and sorted(seen) == sorted(texts)
    # One length order across calls, so each model batch pads to about its own texts' length.
    assert [len(text) for text in seen] == sorted((len(t) for t in texts), reverse=True)
    np.testing.assert_array_equal(vectors, HashEmbedder().embed(texts))


def test_a_fanning_out_embedder_gets_calls_of_the_size_it_asks_for(
    sessions: sessionmaker[Session],
) -> None:
    texts = _chat_like_texts(700)
    embedder = RecordingEmbedder(texts_per_call=300)
    vectors, _ = embed_with_cache(sessions, embedder, texts, [content_hash(t) for t in texts])
    assert [len(call) for call in embedder.calls] == [300, 300, 100]
    np.testing.assert_array_equal(vectors, HashEmbedder().embed(texts))


def test_cached_texts_are_not_sent_again(sessions: sessionmaker[Session]) -> None:
    texts = _chat_like_texts(50)
    hashes = [content_hash(t) for t in texts]
    embed_with_cache(sessions, RecordingEmbedder(), texts[:20], hashes[:20])
    embedder = RecordingEmbedder()
    vectors, embedded = embed_with_cache(sessions, embedder, texts, hashes)
    assert embedded == 30 and sorted(t for call in embedder.calls for t in call) == sorted(
        texts[20:]
    )
    np.testing.assert_allclose(vectors, HashEmbedder().embed(texts), atol=1e-7)


class PreparingEmbedder(RecordingEmbedder):
    """Counts when it is asked to make its question model (`prepare_queries`)."""

    def __init__(self) -> None:
        super().__init__()
        self.prepared = 0

    def prepare_queries(self) -> None:
        self.prepared += 1


def test_embedding_afresh_has_the_question_model_made_and_a_cached_call_does_not(
    sessions: sessionmaker[Session],
) -> None:
    texts = ["a tapir", "a second tapir"]
    hashes = [content_hash(text) for text in texts]
    embedder = PreparingEmbedder()
    embed_with_cache(sessions, embedder, texts, hashes)
    assert embedder.prepared == 1  # ingest: the model is loaded, an export is cheap now
    embed_with_cache(sessions, embedder, texts, hashes)
    assert embedder.prepared == 1 and len(embedder.calls) == 1  # all cached: no model


class ContextRecordingEmbedder(RecordingEmbedder):
    """The recording hash embedder, whose span vectors say which text's pass made them: the
    span's own bag of words plus a small part of its text's (a context, as a model has)."""

    def __init__(self) -> None:
        super().__init__()
        self.passes: list[list[str]] = []

    def embed_in_context(
        self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]]
    ) -> tuple[Vectors, list[Vectors]]:
        self.passes.append(list(texts))
        vectors = HashEmbedder().embed(texts)
        parts = []
        for vector, text, own in zip(vectors, texts, spans, strict=True):
            alone = HashEmbedder().embed([text[a:b] for a, b in own])
            mixed = alone + 0.1 * vector
            parts.append((mixed / np.linalg.norm(mixed, axis=1, keepdims=True)).astype(np.float32))
        return vectors, parts


def test_spans_are_embedded_in_their_texts_pass_once_and_leave_the_texts_vectors_cached(
    sessions: sessionmaker[Session],
) -> None:
    shared = "The same closing sentence ends both notes."
    texts = [f"First note about tax law. {shared}", f"Second note on birds. {shared}"]
    texts.append(texts[0])  # the same text twice: one pass
    spans = [[(0, text.index(shared) - 1), (text.index(shared), len(text))] for text in texts]
    hashes = [content_hash(text) for text in texts]
    embedder = ContextRecordingEmbedder()
    vectors, fresh = embed_spans_with_cache(sessions, embedder, texts, hashes, spans)
    assert fresh == 2 and sorted(embedder.passes[0]) == sorted(texts[:2])
    assert vectors.shape == (6, 384)
    # Row order: the spans of each text in turn; the repeated text's rows are its first's.
    np.testing.assert_array_equal(vectors[4:], vectors[:2])
    # The same words in two texts are two entries, each from its own text's pass.
    assert not np.allclose(vectors[1], vectors[3])
    # Nothing is embedded twice: not the spans, and not the texts' own vectors either.
    again = ContextRecordingEmbedder()
    cached, fresh = embed_spans_with_cache(sessions, again, texts, hashes, spans)
    assert fresh == 0 and again.passes == [] and again.calls == []
    np.testing.assert_array_equal(cached, vectors)
    _, embedded = embed_with_cache(sessions, again, texts, hashes)
    assert embedded == 0 and again.calls == []


def test_a_text_with_a_span_missing_from_the_cache_is_embedded_again(
    sessions: sessionmaker[Session],
) -> None:
    text = "One sentence here. Another one there."
    hashes = [content_hash(text)]
    embed_spans_with_cache(sessions, ContextRecordingEmbedder(), [text], hashes, [[(0, 18)]])
    embedder = ContextRecordingEmbedder()
    vectors, fresh = embed_spans_with_cache(
        sessions, embedder, [text], hashes, [[(0, 18), (19, len(text))]]
    )
    assert fresh == 1 and embedder.passes == [[text]] and vectors.shape == (2, 384)
