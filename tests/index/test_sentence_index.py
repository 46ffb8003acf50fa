"""The sentence index: pieces of a chunk, their ids, MaxP search, and what a store keeps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.embed import get_embedder
from windowpack.index import SentenceIndex, chunk_ids_of, ordinals_of, sentence_pieces
from windowpack.index.sentences import SLOTS, piece_texts

HASH = get_embedder("hash")

PROSE = (
    "Yes. The keeper trims the wick every evening before sunset. "
    "Ships pass the rocks safely when the beam is bright. "
    "See below. Tomasz Wilk jogs past the old harbour each morning."
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


def test_piece_ids_name_their_chunk_and_ordinal() -> None:
    ids, texts = piece_texts([7, 9], [PROSE, "One sentence that stands on its own here."])
    assert chunk_ids_of(ids).tolist() == [7, 7, 7, 9]
    assert ordinals_of(ids).tolist() == [0, 1, 2, 0]
    assert texts[3] == "One sentence that stands on its own here."


def test_a_chunk_ranks_by_its_best_sentence() -> None:
    index = _index({1: PROSE, 2: "Bakers knead sourdough before dawn and bake it in stone ovens."})
    ids, scores = index.search(HASH.embed_query("Tomasz Wilk jogs past the harbour"), 2)
    assert ids.tolist()[0] == 1
    best = index.search_pieces(HASH.embed_query("Tomasz Wilk jogs past the harbour"), 1)
    assert chunk_ids_of(best[0]).tolist() == [1] and ordinals_of(best[0]).tolist() == [2]
    assert scores[0] == pytest.approx(best[1][0])


def test_removing_a_chunk_removes_all_its_pieces_and_only_in_the_copy() -> None:
    index = _index({1: PROSE, 2: "Bakers knead sourdough before dawn and bake it in stone ovens."})
    copy = index.copy()
    copy.remove(np.asarray([1], dtype=np.int64))
    assert copy.size == 1 and index.size == 4
    ids, _ = copy.search(HASH.embed_query("keeper wick sunset"), 5)
    assert ids.tolist() == [2]


def test_saved_index_loads_the_same(tmp_path: Path) -> None:
    index = _index({1: PROSE, 5: "Bakers knead sourdough before dawn and bake it in stone ovens."})
    index.save(tmp_path / "sentences")
    loaded = SentenceIndex.load(tmp_path / "sentences")
    query = HASH.embed_query("sourdough ovens")
    assert loaded.size == index.size
    assert loaded.search(query, 2)[0].tolist() == index.search(query, 2)[0].tolist()


def _pieces_of(collection: wp.Collection) -> int:
    texts, _ = collection.chunk_vectors()
    return sum(len(sentence_pieces(text)) for text in texts)


def test_a_store_keeps_every_chunks_pieces_through_writes(hash_store: wp.Store) -> None:
    collection = hash_store.collection("docs")
    collection.add([wp.Document(text=PROSE * 4, id="a"), wp.Document(text=PROSE, id="b")])
    sentences = hash_store.indexes.current(collection.collection_id).sentences
    assert sentences is not None and sentences.size == _pieces_of(collection) > 0
    collection.delete("a")
    sentences = hash_store.indexes.current(collection.collection_id).sentences
    assert sentences is not None and sentences.size == _pieces_of(collection)


def test_a_reopened_store_loads_its_saved_sentence_index(tmp_path: Path) -> None:
    config = StoreConfig(embedder="hash", chunk_tokens=64)
    with wp.open(tmp_path / "store", config=config) as store:
        store.collection("docs").add([wp.Document(text=PROSE * 3, id="a")])
    with wp.open(tmp_path / "store", config=config) as store:
        collection = store.collection("docs")
        sentences = store.indexes.current(collection.collection_id).sentences
        assert sentences is not None and sentences.size == _pieces_of(collection)


def test_a_store_without_the_sentence_index_keeps_none_and_can_gain_one(tmp_path: Path) -> None:
    without = StoreConfig(embedder="hash", chunk_tokens=64, sentence_index=False)
    with wp.open(tmp_path / "store", config=without) as store:
        collection = store.collection("docs")
        collection.add([wp.Document(text=PROSE * 3, id="a")])
        assert store.indexes.current(collection.collection_id).sentences is None
        assert "Tomasz" in collection.pack("Who jogs past the harbour?", budget=200).text
    with wp.open(tmp_path / "store", config=StoreConfig(embedder="hash", chunk_tokens=64)) as store:
        collection = store.collection("docs")
        sentences = store.indexes.current(collection.collection_id).sentences
        assert sentences is not None and sentences.size == _pieces_of(collection)
