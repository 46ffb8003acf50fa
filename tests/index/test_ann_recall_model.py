"""The ANN index kind (DEFAULT_ANN) against exact search, on real MiniLM vectors of the essays.

benchmarks/ann.py chose the settings on ~7K chunk vectors and a 200K scaled set; this keeps
them honest on a small real set in CI: 3,000 essay sentences embedded by the bundled model
(short texts, so the embedding takes seconds), enough vectors for the ANN to visit only part
of them per query.
"""

from __future__ import annotations

import numpy as np
import pytest

from windowpack.embed.embedder import get_embedder
from windowpack.index.appendable_dense import AppendableFaissIndex
from windowpack.index.base import DEFAULT_ANN
from windowpack.index.dense import FaissIndex
from windowpack.text.sentences import split_sentences

pytestmark = [pytest.mark.model, pytest.mark.shared]

SENTENCES = 3_000
QUERIES = 60
K = 50


@pytest.fixture(scope="module")
def sentence_vectors(essays_text: str) -> np.ndarray:
    spans = split_sentences(essays_text[:2_000_000])
    texts = [essays_text[span.start : span.end] for span in spans]
    texts = [text for text in texts if len(text) > 40][: SENTENCES + QUERIES]
    assert len(texts) == SENTENCES + QUERIES
    return get_embedder().embed(texts)


def _recall(found: list[np.ndarray], truth: list[np.ndarray]) -> float:
    return float(
        np.mean([len(set(f) & set(t)) / len(t) for f, t in zip(found, truth, strict=True)])
    )


def test_the_ann_kind_finds_what_exact_search_finds_before_and_after_deletes(
    sentence_vectors: np.ndarray,
) -> None:
    vectors, queries = sentence_vectors[:SENTENCES], sentence_vectors[SENTENCES:]
    ids = np.arange(10, 10 + SENTENCES, dtype=np.int64)
    dimension = vectors.shape[1]
    ann = AppendableFaissIndex.build(
        FaissIndex.build(dimension, ids, vectors, ann_threshold=1_000, ann=DEFAULT_ANN), ids
    )
    assert ann.kind == DEFAULT_ANN.kind

    def recall_against_exact(live: np.ndarray) -> float:
        exact = FaissIndex.build(dimension, ids[live], vectors[live], ann_threshold=10**9)
        truth = [exact.search(query, K)[0] for query in queries]
        return _recall([ann.search(query, K)[0] for query in queries], truth)

    assert recall_against_exact(np.ones(SENTENCES, dtype=bool)) >= 0.95
    deleted = np.random.default_rng(16).choice(SENTENCES, SENTENCES // 10, replace=False)
    ann.remove(ids[deleted])  # tombstones: below the compaction share, nothing is rebuilt
    assert ann.pending == (0, len(deleted))
    live = np.ones(SENTENCES, dtype=bool)
    live[deleted] = False
    assert recall_against_exact(live) >= 0.95
    found = np.concatenate([ann.search(query, K)[0] for query in queries])
    assert not np.isin(found, ids[deleted]).any(), "a deleted vector is never returned"
