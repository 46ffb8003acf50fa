"""Sentence vectors beside the chunk vectors: a chunk's dense relevance as its best sentence's.

Why: a 200-token chunk's one vector averages every fact in it, so a fact that shares no
word with the question and is one sentence among ten (an association: "Which character has
been to Dresden?" against "Yuki lives next to the Semper Opera House") is drowned by the
chunk's topic. Measured on the ~680K-token essays with 30 associative needles: MiniLM over
chunks put the needle's chunk in the top 5 for 0.04 of the questions, over single sentences
(the chunk ranked by its best sentence, the dense "MaxP") for 0.44. The lexical index already
scores chunks by their best sentence (`lexical`); this is the same for the embedding.

A chunk's *pieces* are its sentences (`split_sentences`), a piece shorter than
`_MIN_PIECE_CHARS` joined to the next one so that a fragment ("Yes.", "See below.") is not
embedded alone, at most `SLOTS` of them. A piece's index id is `chunk_id * SLOTS + ordinal`,
so that its chunk is a shift away and a chunk's pieces are one id range (removing a chunk
needs no table of its pieces).

A piece's vector is embedded in its chunk's own model pass (`embed_pieces`: the mean of the
token embeddings it covers, "late chunking"), which gives the chunk's vector too, so most of
the sentence signal costs no second pass over the corpus (on Ray too). The exception is a
piece foreign to its chunk (`novel_pieces`: the pieces whose words the rest of the chunk
lacks, up to `NOVEL_SHARE` of its characters). In the chunk's pass such a piece's vector
reads the chunk's topic, which is what drowns it: a fact planted in an essay stopped being
found. So it is embedded alone, a second pass over about a sixth of the characters instead of
all of them (`benchmarks/sentence_signal.py`, `benchmarks/ingest_cost.py`). An embedder
without the in-context pass embeds every piece alone. Vectors come from the embedding cache
(in-context ones keyed by the chunk's content hash and the piece's characters, the others by
the piece's content hash), so a rebuild embeds nothing already seen. The cost is memory:
about 9 piece vectors per 200-token chunk of prose (`benchmarks/pack.py` prints it).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np
import numpy.typing as npt
from sqlalchemy.orm import Session, sessionmaker

from windowpack.embed import (
    Embedder,
    InContextEmbedder,
    Vectors,
    embed_spans_with_cache,
    embed_with_cache,
)
from windowpack.index.base import Ids, Matrix, Scores, UnitFilter, VectorIndex
from windowpack.index.factory import build_vector_index, load_vector_index
from windowpack.text import PLAIN, LanguageRules, content_hash, split_sentences

SLOTS = 256
"""Pieces per chunk at most; a piece's index id is its chunk's id times this plus its ordinal."""
_MIN_PIECE_CHARS = 24
NOVEL_SHARE = 0.2
"""The share of a chunk's characters its novel pieces may hold. Set by the cost target of
issue 41 (the sentence pass at most ~0.3x the chunk pass, a piece pass costing ~1.1-1.5x the
chunks' per character), not tuned on any evaluation."""
# Words (lower-cased, unstemmed), CJK runs as character bigrams, compounds whole: the
# language's own rules are the lexical index's business, and novelty needs only "the same
# word again", which holds in any script.
_TERMS = LanguageRules(PLAIN, bigrams=True)
PIECES_PER_CHUNK = 4
"""Pieces fetched per chunk wanted: a chunk's several sentences often rank together."""
_VECTORS = "vectors"

T = TypeVar("T")
Piece = tuple[int, int]
"""A piece's (start, end) characters within its chunk's text."""


def sentence_pieces(text: str) -> list[Piece]:
    """The pieces of a chunk's text that get a vector each, in order (see the module)."""
    spans = [(span.start, span.end) for span in split_sentences(text)]
    pieces: list[Piece] = []
    start: int | None = None
    for low, high in spans:
        start = low if start is None else start
        if high - start >= _MIN_PIECE_CHARS:
            pieces.append((start, high))
            start = None
    if start is not None:
        if pieces:
            pieces[-1] = (pieces[-1][0], spans[-1][1])  # a short tail joins the piece before
        else:
            pieces.append((start, spans[-1][1]))
    if len(pieces) > SLOTS:  # a huge chunk: group its sentences into SLOTS runs
        edges = np.linspace(0, len(pieces), SLOTS + 1).astype(int)
        pieces = [(pieces[a][0], pieces[b - 1][1]) for a, b in itertools.pairwise(edges) if b > a]
    return pieces


def novel_pieces(text: str) -> list[tuple[int, Piece]]:
    """The pieces of a chunk's text embedded alone (see the module), with their ordinals in
    `sentence_pieces`, in order: the pieces with the largest share of words that the rest of
    the chunk lacks (ties: more such words first, then the earlier piece), each taken while the
    taken pieces stay within `NOVEL_SHARE` of the text's characters; a piece none of whose
    words is new is never taken."""
    return _novel_among(text, sentence_pieces(text))


def _novel_among(text: str, pieces: list[Piece]) -> list[tuple[int, Piece]]:
    """`novel_pieces` of `text`, its `sentence_pieces` already cut."""
    if len(pieces) < 2:
        return []
    words = [set(_TERMS.terms(text[a:b])) for a, b in pieces]
    seen: dict[str, int] = {}
    for found in words:
        for word in found:
            seen[word] = seen.get(word, 0) + 1
    ranked: list[tuple[float, int, int]] = []
    for ordinal, found in enumerate(words):
        new = sum(1 for word in found if seen[word] == 1)
        if new:
            ranked.append((-new / len(found), -new, ordinal))
    room = NOVEL_SHARE * len(text)
    taken: list[int] = []
    for *_, ordinal in sorted(ranked):
        start, end = pieces[ordinal]
        if end - start <= room:
            taken.append(ordinal)
            room -= end - start
    return [(ordinal, pieces[ordinal]) for ordinal in sorted(taken)]


def chunk_ids_of(piece_ids: Ids) -> Ids:
    """The chunk id of each piece id."""
    return np.asarray(piece_ids, dtype=np.int64) // SLOTS


def ordinals_of(piece_ids: Ids) -> Ids:
    """Each piece's ordinal within its chunk (the position in `sentence_pieces`)."""
    return np.asarray(piece_ids, dtype=np.int64) % SLOTS


def piece_texts(chunk_ids: Sequence[int], texts: Sequence[str]) -> tuple[Ids, list[str]]:
    """The index ids and texts of every piece of these chunks."""
    ids: list[int] = []
    pieces: list[str] = []
    for chunk_id, text in zip(chunk_ids, texts, strict=True):
        for ordinal, (start, end) in enumerate(sentence_pieces(text)):
            ids.append(chunk_id * SLOTS + ordinal)
            pieces.append(text[start:end])
    return np.asarray(ids, dtype=np.int64), pieces


def embed_pieces(
    sessions: sessionmaker[Session],
    embedder: Embedder,
    texts: Sequence[str],
    *,
    on_embedded: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
    on_alone: Callable[[], None] | None = None,
) -> tuple[Vectors, int]:
    """The vectors of every piece of `texts` (chunk texts), in `piece_texts` order, through
    the cache, and how many texts were embedded afresh (chunks and pieces). An ingest calls it
    before its commit, so that publishing the version finds every piece vector in the cache.

    An embedder that embeds in context (`embed.InContextEmbedder`, the sentence-transformers
    one) gives a chunk's pieces from the chunk's own pass, and the chunk's vector with them
    (cached for the chunk: the chunk step embeds it no more); then each chunk's novel pieces
    (`novel_pieces`) are embedded alone and take the place of theirs. Another embedder embeds
    every piece alone. `on_embedded`, `on_total`: as `embed_with_cache` reports progress, in
    chunks, then in novel pieces after `on_alone` is called (a progress step of its own)."""
    spans = [sentence_pieces(text) for text in texts]
    if not isinstance(embedder, InContextEmbedder):
        pieces = [text[a:b] for text, own in zip(texts, spans, strict=True) for a, b in own]
        return _embedded_alone(sessions, embedder, pieces, on_embedded, on_total)
    hashes = [content_hash(text) for text in texts]
    vectors, fresh = embed_spans_with_cache(
        sessions, embedder, texts, hashes, spans, on_embedded=on_embedded, on_total=on_total
    )
    rows: list[int] = []
    novel: list[str] = []
    first = 0
    for text, own in zip(texts, spans, strict=True):
        for ordinal, (start, end) in _novel_among(text, own):
            rows.append(first + ordinal)
            novel.append(text[start:end])
        first += len(own)
    if novel:
        if on_alone is not None:
            on_alone()
        alone, fresh_alone = _embedded_alone(sessions, embedder, novel, on_embedded, on_total)
        vectors[rows] = alone
        fresh += fresh_alone
    return vectors, fresh


def _embedded_alone(
    sessions: sessionmaker[Session],
    embedder: Embedder,
    pieces: list[str],
    on_embedded: Callable[[int], None] | None,
    on_total: Callable[[int], None] | None,
) -> tuple[Vectors, int]:
    return embed_with_cache(
        sessions,
        embedder,
        pieces,
        [content_hash(p) for p in pieces],
        on_embedded=on_embedded,
        on_total=on_total,
    )


class SentenceIndex:
    """Piece vectors of a collection's chunks, searched by piece or by chunk (best piece).

    `add` takes piece ids (`piece_texts`); `remove` takes *chunk* ids and drops their pieces.
    Writers change a `copy`, as with the other indexes.
    """

    def __init__(self, vectors: VectorIndex) -> None:
        self._vectors = vectors

    @classmethod
    def build(
        cls,
        dimension: int,
        piece_ids: Ids,
        vectors: Matrix,
        *,
        ann_threshold: int,
    ) -> SentenceIndex:
        """The index of these pieces."""
        return cls(build_vector_index(dimension, piece_ids, vectors, ann_threshold=ann_threshold))

    @classmethod
    def embedded(
        cls,
        sessions: sessionmaker[Session],
        embedder: Embedder,
        chunk_ids: Sequence[int],
        texts: Sequence[str],
        *,
        ann_threshold: int,
        dimension: int,
    ) -> SentenceIndex:
        """The index of these chunks' pieces, their vectors from the cache (or embedded)."""
        ids, _ = piece_texts(chunk_ids, texts)
        vectors, _ = embed_pieces(sessions, embedder, texts)
        if not len(ids):
            vectors = np.zeros((0, dimension), dtype=np.float32)
        return cls.build(vectors.shape[1], ids, vectors, ann_threshold=ann_threshold)

    @classmethod
    def load(cls, path: Path) -> SentenceIndex:
        """The index saved in folder `path`; `StorageError` when it cannot be read."""
        return cls(load_vector_index(path / _VECTORS))

    @property
    def kind(self) -> str:
        return self._vectors.kind

    @property
    def size(self) -> int:
        """Pieces indexed."""
        return self._vectors.size

    @property
    def dimension(self) -> int:
        return self._vectors.dimension

    def add(self, piece_ids: Ids, vectors: Matrix) -> None:
        """Add pieces."""
        self._vectors.add(piece_ids, vectors)

    def add_embedded(
        self,
        sessions: sessionmaker[Session],
        embedder: Embedder,
        chunk_ids: Sequence[int],
        texts: Sequence[str],
    ) -> None:
        """Add these chunks' pieces, their vectors from the cache (or embedded now)."""
        ids, _ = piece_texts(chunk_ids, texts)
        if len(ids):
            self.add(ids, embed_pieces(sessions, embedder, texts)[0])

    def remove(self, chunk_ids: Ids) -> None:
        """Drop every piece of these chunks (the whole id range of each)."""
        chunks = np.asarray(chunk_ids, dtype=np.int64)
        if len(chunks):
            ranges = chunks[:, None] * SLOTS + np.arange(SLOTS, dtype=np.int64)[None, :]
            self._vectors.remove(ranges.ravel())

    def search_pieces(
        self, query: Matrix, k: int, *, within: UnitFilter | None = None
    ) -> tuple[Ids, Scores]:
        """The k pieces nearest `query`, best first: (piece ids, cosine similarities); with
        `within` (chunk ids), among the pieces of the chunks it keeps."""
        pieces = _KeptPieces(within) if within is not None else None
        return self._vectors.search(query, k, within=pieces)

    def search(
        self, query: Matrix, k: int, *, within: UnitFilter | None = None
    ) -> tuple[Ids, Scores]:
        """The k chunks whose best piece is nearest `query`, best first, scored by that piece."""
        ids, scores = self.search_pieces(query, k * PIECES_PER_CHUNK, within=within)
        return best_per_chunk(ids, scores, k)

    def copy(self) -> SentenceIndex:
        return SentenceIndex(self._vectors.copy())

    def save(self, path: Path) -> None:
        """Write into folder `path` (new: the caller's staging folder): the vectors' own
        folder."""
        path.mkdir(parents=True, exist_ok=True)
        self._vectors.save(path / _VECTORS)

    def moved_to(self, path: Path) -> None:
        self._vectors.moved_to(path / _VECTORS)


class _KeptPieces:
    """A filter's kept chunks (`kept.KeptUnits`) as the pieces they hold: a piece is kept
    when its chunk is. What the piece vectors derive from it is kept with the chunks' set."""

    def __init__(self, chunks: UnitFilter) -> None:
        self._chunks = chunks

    def keeps(self, ids: Ids) -> npt.NDArray[np.bool_]:
        return self._chunks.keeps(chunk_ids_of(ids))

    def derived(self, key: Hashable, compute: Callable[[], T]) -> T:
        return self._chunks.derived(("pieces", key), compute)


def best_per_chunk(piece_ids: Ids, scores: Scores, k: int | None = None) -> tuple[Ids, Scores]:
    """Pieces (in any order: several sources' lists merged) to their chunks, each scored by
    its best piece, best first; the first k (all without k)."""
    order = np.argsort(-scores, kind="stable")
    chunks = chunk_ids_of(piece_ids[order])
    _, first = np.unique(chunks, return_index=True)  # a chunk's first piece is its best
    first = np.sort(first)[:k]
    return chunks[first], scores[order][first]
