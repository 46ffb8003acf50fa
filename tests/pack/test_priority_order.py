"""Read from the few scored chunks, the verbatim order (chunks by score, ties by index) and a
summary's best evidence are what a pass over every chunk gives."""

from __future__ import annotations

import dataclasses
import itertools
import types

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from windowpack.pack.corpus import Corpus
from windowpack.pack.scoring import _with_best_evidence_beneath
from windowpack.pack.verbatim import _priority_order


def _corpus(documents: list[int], units: list[int], scores: list[float]) -> Corpus:
    count = len(scores)
    return Corpus(
        chunk_document=np.asarray(documents, dtype=np.int64),
        document_cost=np.zeros(max(documents, default=0) + 1, dtype=np.int64),
        chunk_cost=np.ones(count, dtype=np.int64),
        chunk_score=np.asarray(scores, dtype=np.float64),
        node_first=np.zeros(0, dtype=np.int64),
        node_last=np.zeros(0, dtype=np.int64),
        node_parent=np.zeros(0, dtype=np.int64),
        node_document=np.zeros(0, dtype=np.int64),
        node_cost=np.zeros(0, dtype=np.int64),
        node_score=np.zeros(0),
        chunk_unit=np.asarray(units, dtype=np.int64),
    )


@st.composite
def _corpora(draw: st.DrawFn) -> Corpus:
    count = draw(st.integers(1, 40))
    documents = sorted(draw(st.lists(st.integers(0, 4), min_size=count, max_size=count)))
    units = draw(st.lists(st.integers(-1, 2), min_size=count, max_size=count))
    floor = -3.0
    # Most chunks unproposed (the floor), a few scored, ties among them likely.
    scores = draw(
        st.lists(
            st.one_of(st.just(floor), st.sampled_from([-2.5, -2.0, 0.0, 0.5, 1.0, 2.2])),
            min_size=count,
            max_size=count,
        )
    )
    return _corpus(documents, units, scores)


@settings(max_examples=300, deadline=None)
@given(corpus=_corpora(), first=st.integers(0, 45), read=st.integers(0, 45))
def test_the_order_is_a_full_sort_by_priority_then_index(
    corpus: Corpus, first: int, read: int
) -> None:
    priority = corpus.chunk_score
    expected = sorted(range(len(priority)), key=lambda i: (-priority[i], i))
    order = list(itertools.islice(_priority_order(priority, first), read))
    assert order == expected[:read]
    assert list(_priority_order(priority, first)) == expected


@st.composite
def _scored_tree(draw: st.DrawFn) -> tuple[Corpus, np.ndarray, np.ndarray, float]:
    count = draw(st.integers(1, 30))
    floor = -2.0
    chunk_score = np.asarray(
        draw(
            st.lists(
                st.one_of(st.just(floor), st.floats(-1.0, 3.0)), min_size=count, max_size=count
            )
        )
    )
    ranges = draw(
        st.lists(st.tuples(st.integers(0, count - 1), st.integers(1, count)), max_size=12)
    )
    ranges = [(min(a, b - 1), max(a + 1, b)) for a, b in ranges]
    corpus = _corpus([0] * count, [-1] * count, chunk_score.tolist())
    corpus = dataclasses.replace(
        corpus,
        node_first=np.asarray([a for a, _ in ranges], dtype=np.int64),
        node_last=np.asarray([b for _, b in ranges], dtype=np.int64),
    )
    node_score = np.asarray(
        draw(st.lists(st.floats(-2.0, 3.0), min_size=len(ranges), max_size=len(ranges)))
    )
    return corpus, chunk_score, node_score, floor


@settings(max_examples=300, deadline=None)
@given(case=_scored_tree())
def test_a_summary_gets_the_best_chunk_score_in_its_range(
    case: tuple[Corpus, np.ndarray, np.ndarray, float],
) -> None:
    corpus, chunk_score, node_score, floor = case
    state = types.SimpleNamespace(corpus=corpus)
    got = _with_best_evidence_beneath(state, chunk_score, node_score, floor)  # type: ignore[arg-type]
    expected = [
        max(own, chunk_score[first:last].max())
        for own, first, last in zip(node_score, corpus.node_first, corpus.node_last, strict=True)
    ]
    np.testing.assert_array_equal(got, np.asarray(expected, dtype=np.float64))
