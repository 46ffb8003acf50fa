"""The ranking seam: any reranker behind the protocol, run within its depth and time bound
(read from an injected clock), the sentence-level reranker, and the factory."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from windowpack.embed import HASH_EMBEDDER, Embedder, SentenceTransformerEmbedder, get_embedder
from windowpack.errors import InvalidArgumentError
from windowpack.rerank import (
    RerankBounds,
    Reranker,
    SentenceReranker,
    get_reranker,
    rerank_bounded,
)
from windowpack.text import split_sentences

QUERY = "Where does Tomasz Wilk jog every morning?"
NEEDLE = "Tomasz Wilk jogs past the Atomium every morning."
# One sentence answers; the rest of the passage is about something else.
DILUTED = (
    "The quarterly report lists revenue by region and product line. Margins improved in the "
    f"second half as shipping costs fell. {NEEDLE} The board approved a dividend of forty "
    "cents per share. Inventory turnover stayed flat."
)
SOURDOUGH = (
    "Sourdough starter needs flour, water and patience. Feed it twice a day at room "
    "temperature. A ripe starter doubles within six hours. Bake the loaf in a preheated Dutch "
    "oven. Let it cool for an hour before slicing."
)
COMPILER = (
    "The compiler parses the source into an abstract syntax tree. Type checking runs over "
    "that tree before any code is generated. Register allocation assigns variables to the "
    "machine's registers. Dead code is removed by a later pass. The linker joins the object "
    "files into one executable."
)


class FakeReranker:
    """Scores a passage by its length and records every batch it was given."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    @property
    def name(self) -> str:
        return "fake"

    def scores(self, query: str, passages: Sequence[str]) -> np.ndarray:
        self.batches.append(list(passages))
        return np.asarray([float(len(passage)) for passage in passages])


class FakeClock:
    """Returns the given readings (seconds) one per call, and counts the calls."""

    def __init__(self, readings: Sequence[float]) -> None:
        self._readings: Iterator[float] = iter(readings)
        self.calls = 0

    def __call__(self) -> float:
        self.calls += 1
        return next(self._readings)


class CountingEmbedder:
    """The hash embedder, counting its calls."""

    def __init__(self) -> None:
        self._inner = get_embedder(HASH_EMBEDDER)
        self.embed_calls: list[list[str]] = []
        self.query_calls = 0

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.embed_calls.append(list(texts))
        return self._inner.embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        self.query_calls += 1
        return self._inner.embed_query(text)


PASSAGES = [f"passage {'x' * index}" for index in range(12)]


def test_a_reranker_behind_the_seam_scores_the_first_depth_passages_in_batches() -> None:
    reranker = FakeReranker()
    clock = FakeClock([0.0] * 10)
    found = rerank_bounded(reranker, "q", PASSAGES, RerankBounds(depth=6), clock=clock)
    assert found is not None
    assert [len(batch) for batch in reranker.batches] == [4, 2]
    assert reranker.batches[0][0] == PASSAGES[0]  # best first: the first stage's order
    np.testing.assert_array_equal(found[:6], [float(len(p)) for p in PASSAGES[:6]])
    assert np.isnan(found[6:]).all()
    assert found.dtype == np.float64
    assert len(found) == len(PASSAGES)


def test_no_batch_starts_after_the_batch_that_spent_the_budget() -> None:
    reranker = FakeReranker()
    # Start at 0 s; 30 ms after the first batch (within 50 ms); 60 ms after the second.
    clock = FakeClock([0.0, 0.030, 0.060, 0.090])
    bounds = RerankBounds(depth=12, time_ms=50.0)
    found = rerank_bounded(reranker, "q", PASSAGES, bounds, clock=clock)
    assert found is not None
    assert len(reranker.batches) == 2
    assert clock.calls == 3
    assert not np.isnan(found[:8]).any()
    assert np.isnan(found[8:]).all()


def test_the_first_batch_runs_even_when_it_alone_overruns() -> None:
    reranker = FakeReranker()
    clock = FakeClock([0.0, 5.0])
    found = rerank_bounded(reranker, "q", PASSAGES, RerankBounds(depth=12), clock=clock)
    assert found is not None
    assert len(reranker.batches) == 1
    assert not np.isnan(found[:4]).any()
    assert np.isnan(found[4:]).all()


def test_the_whole_depth_is_scored_within_the_budget() -> None:
    reranker = FakeReranker()
    clock = FakeClock([0.0, 0.001, 0.002, 0.003])
    found = rerank_bounded(reranker, "q", PASSAGES, RerankBounds(depth=100), clock=clock)
    assert found is not None
    assert len(reranker.batches) == 3
    assert not np.isnan(found).any()


@pytest.mark.parametrize(("depth", "passages"), [(0, PASSAGES), (16, [])])
def test_nothing_to_score_gives_none(depth: int, passages: list[str]) -> None:
    reranker = FakeReranker()
    assert rerank_bounded(reranker, "q", passages, RerankBounds(depth=depth)) is None
    assert reranker.batches == []


def test_a_reranker_giving_the_wrong_number_of_scores_is_named() -> None:
    class Short(FakeReranker):
        def scores(self, query: str, passages: Sequence[str]) -> np.ndarray:
            return super().scores(query, passages)[:-1]

    with pytest.raises(InvalidArgumentError) as caught:
        rerank_bounded(Short(), "q", PASSAGES, RerankBounds(depth=4), clock=FakeClock([0.0]))
    assert caught.value.argument == "reranker"
    assert "'fake' gave 3 scores for 4 passages" in caught.value.message


def test_bounds_default_to_sixteen_candidates_and_fifty_milliseconds() -> None:
    bounds = RerankBounds()
    assert (bounds.depth, bounds.time_ms) == (16, 50.0)


@pytest.mark.parametrize("depth", [-1, True, 1.5, "4"])
def test_a_bad_depth_is_named(depth: object) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        RerankBounds(depth=depth)  # type: ignore[arg-type]
    assert caught.value.argument == "rerank_depth"


@pytest.mark.parametrize("time_ms", [0, -1.0, float("nan"), True, "50"])
def test_a_bad_time_budget_is_named(time_ms: object) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        RerankBounds(time_ms=time_ms)  # type: ignore[arg-type]
    assert caught.value.argument == "rerank_time_ms"


def test_the_sentence_reranker_ranks_one_matching_sentence_above_long_off_topic_text() -> None:
    reranker = SentenceReranker(get_embedder(HASH_EMBEDDER))
    scores = reranker.scores(QUERY, [SOURDOUGH + " " + COMPILER, DILUTED])
    assert scores[1] > scores[0] + 0.3
    assert reranker.name == "sentence"


def test_a_passage_scores_as_its_best_sentence() -> None:
    embedder = get_embedder(HASH_EMBEDDER)
    scores = SentenceReranker(embedder).scores(QUERY, [DILUTED, SOURDOUGH])
    question = embedder.embed_query(QUERY)
    for passage, score in zip([DILUTED, SOURDOUGH], scores, strict=True):
        sentences = [passage[span.start : span.end] for span in split_sentences(passage)]
        assert len(sentences) == 5
        best = max(float(vector @ question) for vector in embedder.embed(sentences))
        assert score == pytest.approx(best, abs=1e-6)


def test_a_batch_is_one_embedding_call_and_a_blank_passage_scores_minus_infinity() -> None:
    embedder = CountingEmbedder()
    scores = SentenceReranker(embedder).scores(QUERY, [DILUTED, "  \n ", NEEDLE])
    assert len(embedder.embed_calls) == 1
    assert len(embedder.embed_calls[0]) == 6  # five sentences and the needle
    assert embedder.query_calls == 1
    assert scores[1] == -np.inf
    assert scores[0] == pytest.approx(scores[2])  # both are as good as the needle


def test_the_sentence_reranker_runs_within_bounds() -> None:
    reranker = SentenceReranker(get_embedder(HASH_EMBEDDER))
    passages = [SOURDOUGH, COMPILER, DILUTED, SOURDOUGH, NEEDLE]
    found = rerank_bounded(
        reranker, QUERY, passages, RerankBounds(depth=3), clock=FakeClock([0.0, 0.0])
    )
    assert found is not None
    assert int(np.nanargmax(found)) == 2
    assert np.isnan(found[3:]).all()


def test_the_factory_builds_the_named_reranker() -> None:
    embedder = get_embedder(HASH_EMBEDDER)
    assert get_reranker(None, embedder=embedder) is None
    assert get_reranker("none", embedder=embedder) is None
    sentence = get_reranker("sentence", embedder=embedder)
    assert isinstance(sentence, SentenceReranker)
    assert sentence.scores(QUERY, [NEEDLE])[0] > 0.4  # over the embedder it was given
    fake: Reranker = FakeReranker()
    assert get_reranker(fake, embedder=embedder) is fake


@pytest.mark.parametrize("spec", ["cross-encoder", "Sentence", "", 42])
def test_an_unknown_reranker_is_named(spec: object) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        get_reranker(spec, embedder=get_embedder(HASH_EMBEDDER))  # type: ignore[arg-type]
    assert caught.value.argument == "reranker"
    assert "known: none, sentence" in caught.value.message


@pytest.mark.model
def test_with_the_bundled_model_the_answering_sentence_lifts_its_passage() -> None:
    embedder: Embedder = get_embedder()
    assert isinstance(embedder, SentenceTransformerEmbedder)
    # No content word of the question is in the needle ("runs" / "jogs", "mornings" /
    # "morning"). A question that needs world knowledge is beyond this model: it does not tie
    # the Atomium to Belgium, and for "Which character spends time in Belgium?" the
    # sourdough's "Dutch oven" sentence scores higher than the needle.
    question = "Who runs in the mornings?"
    passages = [DILUTED, SOURDOUGH, COMPILER]
    whole = embedder.embed(passages) @ embedder.embed_query(question)
    # The needle is diluted: by whole-passage vectors its passage is not the best.
    assert int(np.argmax(whole)) != 0
    scores = SentenceReranker(embedder).scores(question, passages)
    assert int(np.argmax(scores)) == 0
    assert scores[0] > max(scores[1:]) + 0.05
