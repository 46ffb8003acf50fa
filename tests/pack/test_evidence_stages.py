"""The reranker seam of a pack (with a fake reranker) and the evidence settings' checks, over
the hash embedder. Retrieval's own stages are tested on real text in
tests/search/test_retrieval.py."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import windowpack as wp
from windowpack.pack import PackRequest, scored_corpora

FILLER = [
    "Gardeners prune roses in late winter so that new shoots grow strong. ",
    "The harbour fills with sailing boats every summer weekend. ",
    "Old maps show roads that no longer exist across the moors. ",
    "Bread rises faster in a warm kitchen than in a cold cellar. ",
    "Migrating geese fly in a wide formation over the marshes. ",
    "A violin needs new strings after months of daily practice. ",
    "Engineers inspect the bridge cables after every storm. ",
    "The library keeps rare books in a room without windows. ",
]


def _filler(seed: int, sentences: int) -> str:
    rng = np.random.default_rng(seed)
    return "".join(FILLER[int(i)] for i in rng.integers(0, len(FILLER), sentences))


def _documents(planted: dict[int, list[str]], count: int = 12) -> list[wp.Document]:
    """`count` filler documents, with the planted sentences in the middle of some."""
    documents = []
    for number in range(count):
        facts = " ".join(planted.get(number, []))
        text = _filler(number, 40) + facts + " " + _filler(number + 100, 40)
        documents.append(wp.Document(text=text, id=f"doc-{number}", title=f"Doc {number}"))
    return documents


class FavouringReranker:
    """A fake at the seam: scores a passage 1 when it holds the word, else 0."""

    name = "favouring"

    def __init__(self, word: str) -> None:
        self.word = word
        self.asked: list[int] = []

    def scores(self, query: str, passages: Sequence[str]) -> np.ndarray:
        self.asked.append(len(passages))
        return np.asarray([float(self.word in p) for p in passages])


def _scored(store: wp.Store, collection: wp.Collection, question: str, reranker: object) -> list:
    indexes = store.indexes.current(collection.collection_id)
    state = store.packer.state(
        collection.collection_id, collection.name, indexes.version, "o200k_base"
    )
    assert state is not None
    request = PackRequest(query=question, budget=2000, evidence=wp.EvidenceSettings(rerank_depth=6))
    (found,), _ = scored_corpora([(state, indexes)], store.query_vectors, request, reranker)  # type: ignore[arg-type]
    return [found.corpus.chunk_score, state]


def test_a_reranker_reorders_only_the_first_stages_best(
    hash_store: wp.Store, empty_collection: wp.Collection
) -> None:
    empty_collection.add(_documents({3: ["Geese and violins meet at the marsh concert."]}))
    question = "geese violin marsh"
    plain, _ = _scored(hash_store, empty_collection, question, None)
    fake = FavouringReranker("concert")
    reranked, state = _scored(hash_store, empty_collection, question, fake)
    assert fake.asked and max(fake.asked) <= 6
    top = int(np.argmax(reranked))
    from windowpack.pack.evidence import chunk_text

    assert "concert" in chunk_text(state, top)
    # The scores handed out are the first stage's own, reordered among its best six.
    assert sorted(reranked.tolist()) == pytest.approx(sorted(plain.tolist()))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("lexical_weight", -1.0),
        ("feedback_weight", -0.5),
        ("sentence_weight", True),
        ("rerank_depth", -2),
        ("rerank_time_ms", 0.0),
        ("reranker", "cross-encoder"),
    ],
)
def test_bad_evidence_settings_name_their_field(field: str, value: object) -> None:
    with pytest.raises(wp.InvalidArgumentError) as raised:
        wp.EvidenceSettings(**{field: value})  # type: ignore[arg-type]
    assert field in str(raised.value)


def test_the_sentence_reranker_runs_inside_a_pack(tmp_path: Path) -> None:
    config = wp.StoreConfig(
        embedder="hash", chunk_tokens=64, evidence=wp.EvidenceSettings(reranker="sentence")
    )
    with wp.open(tmp_path / "store", config=config) as store:
        collection = store.collection("docs")
        collection.add(_documents({4: ["The lighthouse keeper logs every passing ship."]}))
        window = collection.pack("Who records the ships going by?", budget=600)
    assert "logs every passing ship" in window.text
    assert window.tokens <= 600
