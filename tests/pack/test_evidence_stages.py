"""The evidence stages of a pack: the second hop, coverage packing of set questions, the
reranker seam (with a fake reranker), each on and off, over the hash embedder."""

from __future__ import annotations

import itertools
import re
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


OFF = wp.EvidenceSettings(second_hop=False, set_coverage=False, answer_types=False)

CHAIN = {
    2: ["The vaccine samples are guarded by the clinic's night nurse."],
    9: ["The clinic's night nurse is Oluwaseun Adeyemi."],
}


def test_the_second_hop_brings_the_bridge_fact(empty_collection: wp.Collection) -> None:
    empty_collection.add(_documents(CHAIN))
    question = "Who guards the vaccine samples?"
    on = empty_collection.pack(question, budget=600)
    off = empty_collection.pack(question, budget=600, evidence=OFF)
    assert "guarded by the clinic's night nurse" in on.text
    assert "night nurse is Oluwaseun Adeyemi" in on.text
    assert "guarded by the clinic's night nurse" in off.text
    assert "Oluwaseun Adeyemi" not in off.text  # the bridge shares no word with the question
    assert on.tokens <= 600


def test_a_question_after_someone_favours_sentences_naming_someone(
    empty_collection: wp.Collection,
) -> None:
    planted = {5: ["The parcel was collected by Marguerite Okonjo before noon."]}
    empty_collection.add(_documents(planted))
    question = "Who picked up the delivery?"  # no word in common with the planted sentence
    on = empty_collection.pack(question, budget=300, evidence=wp.EvidenceSettings(second_hop=False))
    off = empty_collection.pack(question, budget=300, evidence=OFF)
    assert "Marguerite Okonjo" in on.text
    assert "Marguerite Okonjo" not in off.text


CITIES = ["Lisbon", "Osaka", "Nairobi", "Montreal", "Krakow", "Hanoi", "Tbilisi", "Quito"]


def _offices() -> dict[int, list[str]]:
    return {
        number: [f"Kestrel Freight opened an office in {city} that spring."]
        for number, city in enumerate(CITIES)
    }


def test_a_set_question_is_packed_as_excerpts(empty_collection: wp.Collection) -> None:
    empty_collection.add(_documents(_offices()))
    question = "List every city where Kestrel Freight opened an office."
    covered = empty_collection.pack(question, budget=700)
    plain = empty_collection.pack(question, budget=700, evidence=OFF)
    found = [city for city in CITIES if city in covered.text]
    assert found == CITIES
    assert sum(city in plain.text for city in CITIES) < len(CITIES)
    assert "excerpt" in covered.text
    assert covered.tokens <= 700
    for item in covered.items:  # an excerpt keeps its provenance: its characters
        if item.kind == "chunk" and item.span is not None:
            source = empty_collection.get(item.document_id or "").text
            assert source[item.span.start : item.span.end] in item.text


def test_one_fact_said_twice_is_one_excerpt(empty_collection: wp.Collection) -> None:
    planted = _offices()
    planted[10] = [planted[0][0]]  # Lisbon again, in another document
    empty_collection.add(_documents(planted))
    window = empty_collection.pack(
        "List every city where Kestrel Freight opened an office.", budget=700
    )
    assert len(re.findall(r"opened an office in Lisbon", window.text)) == 1


def test_a_larger_budget_keeps_what_a_smaller_one_kept(empty_collection: wp.Collection) -> None:
    empty_collection.add(_documents(_offices()))
    question = "How many cities has Kestrel Freight opened an office in?"
    kept = [
        {city for city in CITIES if city in empty_collection.pack(question, budget=b).text}
        for b in (300, 500, 900, 1500)
    ]
    assert all(a <= b for a, b in itertools.pairwise(kept))


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
    (found,) = scored_corpora([(state, indexes)], store.query_vectors, request, reranker)  # type: ignore[arg-type]
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
        collection.add(_documents(CHAIN))
        window = collection.pack("Who guards the vaccine samples?", budget=600)
    assert "guarded by the clinic's night nurse" in window.text
    assert window.tokens <= 600
