"""The sentence index: pieces of a chunk, which of them get a vector, their ids, MaxP search,
and what a store keeps."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.embed import InContextEmbedder, get_embedder
from windowpack.index import (
    SentenceIndex,
    chunk_ids_of,
    embed_pieces,
    novel_pieces,
    ordinals_of,
    sentence_pieces,
)
from windowpack.index.sentences import NOVEL_SHARE, SLOTS, piece_texts

HASH = get_embedder("hash")

PROSE = (
    "Yes. The keeper trims the wick every evening before sunset. "
    "Ships pass the rocks safely when the beam is bright. "
    "See below. Tomasz Wilk jogs past the old harbour each morning."
)

FOREIGN = "Tomasz Wilk jogs past the old bakery at dawn."
# A chunk about one thing, its sentences sharing its words, and one sentence foreign to it.
KEEPER = (
    "Yes. The keeper trims the wick of the lamp every evening. "
    "The keeper climbs the tower to light the lamp every evening. "
    "Ships watch the lamp of the tower every evening. "
    "The tower lamp guides ships every evening. "
    f"{FOREIGN} "
    "See below. The keeper cleans the tower lamp for the ships. "
    "Every evening the keeper and the lamp guide the ships home."
)
BAKERS = (
    "Bakers knead sourdough before dawn and bake it in stone ovens. "
    "The bakers shape the sourdough and bake it before dawn. "
    "Stone ovens bake the sourdough the bakers knead. "
    "A violinist tunes her cello beside the cathedral organ. "
    "Before dawn the bakers feed the stone ovens and knead the sourdough. "
    "The sourdough rests while the ovens heat before dawn."
)


def _index(chunks: dict[int, str]) -> SentenceIndex:
    ids, texts = piece_texts(list(chunks), list(chunks.values()))
    return SentenceIndex.build(HASH.dimension, ids, HASH.embed(texts), ann_threshold=1 << 40)


def test_pieces_join_fragments_to_the_next_sentence() -> None:
    pieces = [PROSE[a:b] for a, b in sentence_pieces(PROSE)]
    assert pieces[0] == "Yes. The keeper trims the wick every evening before sunset."
    assert pieces[-1] == "See below. Tomasz Wilk jogs past the old harbour each morning."
    assert len(pieces) == 3


def test_a_short_tail_joins_the_piece_before_it() -> None:
    text = "The keeper trims the wick every evening. Done."
    assert [text[a:b] for a, b in sentence_pieces(text)] == [text]


@given(st.lists(st.sampled_from(["Hi.", "A longer sentence about ships.", "Ok!", "\n\n"])))
def test_pieces_are_ordered_disjoint_spans_of_the_text(parts: list[str]) -> None:
    text = " ".join(parts)
    pieces = sentence_pieces(text)
    assert len(pieces) <= SLOTS
    ends = [0]
    for start, end in pieces:
        assert ends[-1] <= start < end <= len(text)
        ends.append(end)


def test_a_huge_chunk_gets_at_most_slots_pieces_covering_it() -> None:
    text = " ".join(f"Sentence number {i} talks about ships." for i in range(SLOTS * 3))
    pieces = sentence_pieces(text)
    assert len(pieces) == SLOTS
    assert pieces[0][0] == 0 and pieces[-1][1] == len(text)


def test_a_chunk_embeds_the_sentence_foreign_to_the_rest_of_it() -> None:
    assert [KEEPER[a:b] for _, (a, b) in novel_pieces(KEEPER)] == [FOREIGN]
    assert [BAKERS[a:b] for _, (a, b) in novel_pieces(BAKERS)] == [
        "A violinist tunes her cello beside the cathedral organ."
    ]


def test_a_chunk_that_only_repeats_itself_or_is_one_piece_embeds_nothing() -> None:
    assert (
        novel_pieces(" ".join(["The keeper trims the wick of the lamp every evening."] * 8)) == []
    )
    assert novel_pieces(FOREIGN) == []
    assert novel_pieces("") == []


@given(
    st.lists(
        st.sampled_from(
            [
                FOREIGN,
                "The keeper trims the wick of the lamp every evening.",
                "Ships watch the lamp of the tower every evening.",
                "Bakers knead sourdough before dawn and bake it in stone ovens.",
                "Yes.",
                "数据库管理系统负责管理数据。",
                "\n\n",
            ]
        ),
        max_size=30,
    )
)
def test_novel_pieces_are_pieces_with_a_new_word_within_a_fifth_of_the_chunk(
    parts: list[str],
) -> None:
    text = " ".join(parts)
    pieces = sentence_pieces(text)
    chosen = novel_pieces(text)
    assert chosen == novel_pieces(text)  # the chunk alone decides
    assert [ordinal for ordinal, _ in chosen] == sorted({ordinal for ordinal, _ in chosen})
    assert sum(end - start for _, (start, end) in chosen) <= NOVEL_SHARE * len(text)
    for ordinal, (start, end) in chosen:
        assert pieces[ordinal] == (start, end)
        rest = (text[:start] + " " + text[end:]).lower()
        assert any(word not in rest for word in text[start:end].lower().split())


def test_piece_ids_name_their_chunk_and_ordinal() -> None:
    ids, texts = piece_texts([7, 9], [PROSE, "One sentence that stands on its own here."])
    assert chunk_ids_of(ids).tolist() == [7, 7, 7, 9]
    assert ordinals_of(ids).tolist() == [0, 1, 2, 0]
    assert texts[3] == "One sentence that stands on its own here."


def test_a_chunk_ranks_by_its_best_sentence() -> None:
    index = _index({1: KEEPER, 2: BAKERS})
    ids, scores = index.search(HASH.embed_query("Tomasz Wilk jogs past the bakery"), 2)
    assert ids.tolist()[0] == 1
    best = index.search_pieces(HASH.embed_query("Tomasz Wilk jogs past the bakery"), 1)
    assert chunk_ids_of(best[0]).tolist() == [1] and ordinals_of(best[0]).tolist() == [4]
    assert scores[0] == pytest.approx(best[1][0])


class ChunkReadingEmbedder:
    """An in-context embedder whose every span reads its whole chunk (a span's vector is the
    chunk's): what drowns a foreign sentence, made total."""

    def __init__(self) -> None:
        self.model_id, self.dimension = "chunk-reading", HASH.dimension
        self.alone: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.alone.extend(texts)
        return HASH.embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return HASH.embed_query(text)

    def embed_in_context(
        self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]]
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        vectors = HASH.embed(texts)
        return vectors, [
            np.repeat(vectors[row : row + 1], len(own), axis=0) for row, own in enumerate(spans)
        ]


def test_a_foreign_sentence_is_embedded_alone_and_the_rest_in_their_chunks_pass(
    hash_store: wp.Store,
) -> None:
    embedder = ChunkReadingEmbedder()
    assert isinstance(embedder, InContextEmbedder)
    vectors, fresh = embed_pieces(hash_store.sessions, embedder, [KEEPER, BAKERS])
    pieces = [(text, a, b) for text in (KEEPER, BAKERS) for a, b in sentence_pieces(text)]
    assert len(vectors) == len(pieces)
    violinist = "A violinist tunes her cello beside the cathedral organ."
    assert sorted(embedder.alone) == sorted([FOREIGN, violinist])
    assert fresh == 4  # two chunks' passes, two sentences alone
    for row, (text, a, b) in enumerate(pieces):
        if text[a:b] in (FOREIGN, violinist):
            expected = HASH.embed([text[a:b]])[0]
        else:
            expected = HASH.embed([text])[0]
        np.testing.assert_allclose(vectors[row], expected, atol=1e-6)
    # Cached: a second call embeds nothing and gives the same vectors.
    again, fresh_again = embed_pieces(hash_store.sessions, embedder, [KEEPER, BAKERS])
    assert fresh_again == 0
    np.testing.assert_allclose(again, vectors)


def test_removing_a_chunk_removes_all_its_pieces_and_only_in_the_copy() -> None:
    index = _index({1: KEEPER, 2: BAKERS})
    copy = index.copy()
    copy.remove(np.asarray([1], dtype=np.int64))
    assert copy.size == len(sentence_pieces(BAKERS))
    assert index.size == copy.size + len(sentence_pieces(KEEPER))
    ids, _ = copy.search(HASH.embed_query("Tomasz jogs at dawn"), 5)
    assert ids.tolist() == [2]


def test_saved_index_loads_the_same(tmp_path: Path) -> None:
    index = _index({1: KEEPER, 5: BAKERS})
    index.save(tmp_path / "sentences")
    loaded = SentenceIndex.load(tmp_path / "sentences")
    query = HASH.embed_query("a cello by the organ")
    assert loaded.size == index.size
    assert loaded.search(query, 2)[0].tolist() == index.search(query, 2)[0].tolist()


def _pieces_of(collection: wp.Collection) -> int:
    texts, _ = collection.chunk_vectors()
    return sum(len(sentence_pieces(text)) for text in texts)


def test_a_store_keeps_every_chunks_pieces_through_writes(hash_store: wp.Store) -> None:
    collection = hash_store.collection("docs")
    collection.add(
        [wp.Document(text=f"{KEEPER}\n\n{BAKERS}", id="a"), wp.Document(text=BAKERS, id="b")]
    )
    sentences = hash_store.indexes.current(collection.collection_id).sentences
    assert sentences is not None and sentences.size == _pieces_of(collection) > 0
    collection.delete("a")
    sentences = hash_store.indexes.current(collection.collection_id).sentences
    assert sentences is not None and sentences.size == _pieces_of(collection)


def test_a_reopened_store_loads_its_saved_sentence_index(tmp_path: Path) -> None:
    config = StoreConfig(embedder="hash", chunk_tokens=64)
    with wp.open(tmp_path / "store", config=config) as store:
        store.collection("docs").add([wp.Document(text=f"{KEEPER}\n\n{BAKERS}", id="a")])
    with wp.open(tmp_path / "store", config=config) as store:
        collection = store.collection("docs")
        sentences = store.indexes.current(collection.collection_id).sentences
        assert sentences is not None and sentences.size == _pieces_of(collection)


def test_a_store_without_the_sentence_index_keeps_none_and_can_gain_one(tmp_path: Path) -> None:
    without = StoreConfig(embedder="hash", chunk_tokens=64, sentence_index=False)
    with wp.open(tmp_path / "store", config=without) as store:
        collection = store.collection("docs")
        collection.add([wp.Document(text=f"{KEEPER}\n\n{BAKERS}", id="a")])
        assert store.indexes.current(collection.collection_id).sentences is None
        assert "Tomasz" in collection.pack("Who jogs past the bakery?", budget=200).text
    with wp.open(tmp_path / "store", config=StoreConfig(embedder="hash", chunk_tokens=64)) as store:
        collection = store.collection("docs")
        sentences = store.indexes.current(collection.collection_id).sentences
        assert sentences is not None and sentences.size == _pieces_of(collection)
