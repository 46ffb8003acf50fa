"""Tests for the embedders: hash embedder, embedder cache, long-text windowing, the real model."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windowpack.embed.embedder import (
    Embedder,
    HashEmbedder,
    SentenceTransformerEmbedder,
    bundled_model_path,
    get_embedder,
)
from windowpack.embed.windows import _WINDOW_OVERLAP, window_bounds
from windowpack.errors import InvalidArgumentError

FAST = settings(max_examples=80, deadline=None)


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# --- HashEmbedder ---------------------------------------------------------------------------


def test_hash_embedder_is_deterministic_across_calls_and_instances() -> None:
    texts = ["The quick brown fox", "jumps over the lazy dog", "Ünïcode wörds 123"]
    first = HashEmbedder().embed(texts)
    again = HashEmbedder().embed(texts)
    assert first.dtype == np.float32
    assert first.shape == (3, 384)
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(HashEmbedder().embed_query(texts[1]), first[1])


@FAST
@given(texts=st.lists(st.text(min_size=0, max_size=80), min_size=1, max_size=8))
def test_hash_embedder_vectors_are_unit_norm_or_zero(texts: list[str]) -> None:
    vectors = HashEmbedder(dimension=64).embed(texts)
    assert vectors.shape == (len(texts), 64)
    assert vectors.dtype == np.float32
    assert np.all(np.isfinite(vectors))
    for text, norm in zip(texts, np.linalg.norm(vectors, axis=1), strict=True):
        # Zero only when there is no word, or (rarely) when hashed words cancel out.
        assert norm == pytest.approx(1.0, abs=1e-5) or norm == 0.0, text
        if not any(ch.isalnum() or ch == "_" for ch in text):
            assert norm == 0.0, text


def test_hash_embedder_vectors_of_real_texts_are_unit_norm() -> None:
    texts = ["one", "two words", "A longer sentence, with punctuation!", "x " * 500]
    norms = np.linalg.norm(HashEmbedder().embed(texts), axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=1e-5)


def test_hash_embedder_texts_sharing_words_point_the_same_way() -> None:
    embedder = HashEmbedder()
    anchor, related, unrelated = embedder.embed(
        [
            "solar panels convert sunlight into electricity",
            "sunlight electricity solar panels rooftop",
            "medieval monks copied manuscripts by candlelight",
        ]
    )
    assert _cosine(anchor, related) > 0.5
    assert _cosine(anchor, related) > _cosine(anchor, unrelated) + 0.3
    # Word order and case do not matter to a bag of words.
    same = embedder.embed(["Alpha beta GAMMA", "gamma alpha beta"])
    np.testing.assert_allclose(same[0], same[1], atol=1e-6)


def test_hash_embedder_with_no_texts_gives_an_empty_matrix() -> None:
    vectors = HashEmbedder(dimension=32).embed([])
    assert vectors.shape == (0, 32)


# --- get_embedder ---------------------------------------------------------------------------


def test_get_embedder_caches_one_instance_per_name() -> None:
    first = get_embedder("hash")
    assert get_embedder("hash") is first
    small = get_embedder("hash-64")
    assert small is get_embedder("hash-64")
    assert small is not first
    assert isinstance(first, HashEmbedder)
    assert first.dimension == 384
    assert small.dimension == 64
    assert small.model_id == "hash-64"


@pytest.mark.parametrize("name", ["", "   "])
def test_get_embedder_rejects_a_blank_name_naming_the_argument(name: str) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        get_embedder(name)
    assert caught.value.argument == "embedder"
    assert "embedder" in str(caught.value)


# --- window_bounds (long texts cut into overlapping windows) ------------------------------


@st.composite
def _offsets(draw: st.DrawFn) -> list[tuple[int, int]]:
    """Word-piece char offsets as a tokenizer gives them: in order, non-empty, non-overlapping."""
    count = draw(st.integers(min_value=0, max_value=700))
    lengths = draw(st.lists(st.integers(1, 6), min_size=count, max_size=count))
    gaps = draw(st.lists(st.integers(0, 2), min_size=count, max_size=count))
    offsets = []
    position = 0
    for length, gap in zip(lengths, gaps, strict=True):
        position += gap
        offsets.append((position, position + length))
        position += length
    return offsets


def _pieces_inside(offsets: list[tuple[int, int]], start: int, end: int) -> list[int]:
    return [i for i, (s, e) in enumerate(offsets) if start <= s and e <= end]


@FAST
@given(offsets=_offsets(), limit=st.integers(min_value=_WINDOW_OVERLAP + 1, max_value=300))
def test_windows_cover_every_piece_overlap_and_respect_the_limit(
    offsets: list[tuple[int, int]], limit: int
) -> None:
    bounds = window_bounds(offsets, limit)
    assert bounds, "at least one window"
    if not offsets:
        assert bounds == [(0, 0)]
        return
    if len(offsets) <= limit:
        assert len(bounds) == 1
    inside = [_pieces_inside(offsets, start, end) for start, end in bounds]
    for pieces in inside:
        assert 1 <= len(pieces) <= limit
        assert pieces == list(range(pieces[0], pieces[-1] + 1)), "a window is contiguous"
    covered = set().union(*map(set, inside))
    assert covered == set(range(len(offsets))), "every word piece is in some window"
    for before, after in itertools.pairwise(inside):
        assert after[0] > before[0], "windows move forward"
        assert set(before) & set(after), "consecutive windows overlap"


@pytest.mark.parametrize("limit", [20, _WINDOW_OVERLAP])
def test_windows_cover_every_piece_even_when_the_limit_is_not_above_the_overlap(
    limit: int,
) -> None:
    # A model whose max_seq_length is 34 or less gives limit <= _WINDOW_OVERLAP.
    offsets = [(2 * i, 2 * i + 1) for i in range(100)]
    bounds = window_bounds(offsets, limit)
    inside = [_pieces_inside(offsets, start, end) for start, end in bounds]
    assert all(len(pieces) <= limit for pieces in inside)
    assert set().union(*map(set, inside)) == set(range(100))


# --- The real bundled model -----------------------------------------------------------------


@pytest.fixture(scope="module")
def model() -> Iterator[Embedder]:
    embedder = get_embedder()
    embedder.embed(["warm up"])  # load once for the whole module
    yield embedder


@pytest.mark.model
def test_model_dimension_and_unit_norm_vectors(model: Embedder) -> None:
    assert model.dimension == 384
    vectors = model.embed(["A short sentence.", "Another, different one about tax law.", "x"])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    query = model.embed_query("A short sentence.")
    assert query.shape == (384,)
    np.testing.assert_allclose(query, vectors[0], atol=1e-5)
    assert model.embed([]).shape == (0, 384)


@pytest.mark.model
def test_model_puts_a_paraphrase_closer_than_an_unrelated_sentence(model: Embedder) -> None:
    anchor, paraphrase, unrelated = model.embed(
        [
            "A cat is sleeping on the sofa.",
            "A kitten naps on the couch.",
            "Stock markets fell sharply on Tuesday.",
        ]
    )
    assert float(anchor @ paraphrase) > float(anchor @ unrelated) + 0.3


@pytest.mark.model
def test_model_long_text_keeps_its_tail(model: Embedder) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(bundled_model_path())
    filler = (
        "The committee reviewed the quarterly budget figures and discussed the schedule "
        "for the upcoming meetings. "
    )
    body = filler * 38
    body_pieces = len(tokenizer(body, add_special_tokens=False, verbose=False)["input_ids"])
    assert 550 <= body_pieces <= 700  # ~600 word pieces of filler
    final = "Finally, the lighthouse keeper fed his three orange parrots mango slices at dawn."
    full = body + final
    encoded = tokenizer(full, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    assert len(encoded["input_ids"]) > 256 * 2  # far past what the model reads at once
    truncated = full[: encoded["offset_mapping"][249][1]]
    assert "lighthouse" not in truncated

    query = model.embed_query("What did the lighthouse keeper feed his parrots?")
    whole, head_only = model.embed([full, truncated])
    np.testing.assert_allclose(np.linalg.norm(whole), 1.0, atol=1e-5)
    assert float(whole @ query) > float(head_only @ query) + 0.05


@pytest.mark.model
def test_model_query_runs_on_one_thread_and_restores_the_setting(model: Embedder) -> None:
    import torch

    before = torch.get_num_threads()
    seen: list[int] = []
    original = torch.nn.Module.__call__

    def recording(self: torch.nn.Module, *args: object, **kwargs: object) -> object:
        seen.append(torch.get_num_threads())
        return original(self, *args, **kwargs)

    question = "What did the founders learn from their first customers?"
    with pytest.MonkeyPatch.context() as patch:
        # The torch path (questions go through ONNX Runtime when it loads: test_query_model).
        patch.setattr(model, "_query_model", None)
        patch.setattr(torch.nn.Module, "__call__", recording)
        vector = model.embed_query(question)
    assert seen and set(seen) == {1}
    assert torch.get_num_threads() == before
    # The same vector as embedding the text as a document (up to float rounding).
    assert float(vector @ model.embed([question])[0]) > 0.99999


@pytest.mark.model
def test_model_query_is_the_documents_vector_short_or_past_the_models_reach(
    model: Embedder,
) -> None:
    short = "Which essay says that startups should do things that don't scale?"
    long = "The committee reviewed the quarterly budget figures. " * 80  # ~800 word pieces
    for question in (short, long):
        np.testing.assert_allclose(
            model.embed_query(question), model.embed([question])[0], atol=1e-6
        )


# --- Sentences embedded in their text's own pass --------------------------------------------


def _spans(text: str, sentences: list[str]) -> list[tuple[int, int]]:
    spans = []
    for sentence in sentences:
        start = text.index(sentence)
        spans.append((start, start + len(sentence)))
    return spans


@pytest.mark.model
def test_model_in_context_gives_the_texts_own_vectors_and_a_vector_per_span(
    model: Embedder,
) -> None:
    sentences = [
        "The quarterly report was filed on time by the finance team.",
        "Yuki lives next to the Semper Opera House.",
        "The printer on the third floor is out of toner again.",
    ]
    text = " ".join(sentences)
    assert isinstance(model, SentenceTransformerEmbedder)
    texts = [text, "A single short sentence about tax law."]
    spans = [_spans(text, sentences), [(0, len(texts[1]))]]
    vectors, parts = model.embed_in_context(texts, spans)
    # The texts' vectors are the ones `embed` gives: the chunk step can take them as they are.
    np.testing.assert_allclose(vectors, model.embed(texts), atol=1e-6)
    assert [part.shape for part in parts] == [(3, 384), (1, 384)]
    np.testing.assert_allclose(np.linalg.norm(parts[0], axis=1), 1.0, atol=1e-5)
    # A text that is one span: its words' mean, the text's vector but for the special tokens.
    assert float(parts[1][0] @ vectors[1]) > 0.9
    # Each span's vector is nearest its own sentence embedded alone, of the three.
    alone = model.embed(sentences)
    assert (parts[0] @ alone.T).argmax(axis=1).tolist() == [0, 1, 2]
    # The association the sentence index is for: the span holding it answers the question
    # better than the whole text does.
    question = model.embed_query("Who lives near an opera house in Dresden?")
    assert float(parts[0][1] @ question) > float(vectors[0] @ question)


@pytest.mark.model
def test_model_in_context_reads_spans_of_a_text_past_the_models_reach(model: Embedder) -> None:
    assert isinstance(model, SentenceTransformerEmbedder)
    filler = "The committee reviewed the budget figures and the meeting schedule. " * 40
    final = "Finally, the lighthouse keeper fed his three orange parrots mango slices at dawn."
    text = filler + final
    spans = [(0, 68), (len(filler), len(text))]
    vectors, parts = model.embed_in_context([text], [spans])
    np.testing.assert_allclose(vectors, model.embed([text]), atol=1e-6)
    question = model.embed_query("What did the lighthouse keeper feed his parrots?")
    # The tail lies in a later window than the head: its span still gets its own words.
    assert float(parts[0][1] @ question) > float(parts[0][0] @ question) + 0.2
