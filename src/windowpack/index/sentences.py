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
needs no table of its pieces). Vectors come from the embedding cache, keyed by each piece's
content hash like every other text, so a rebuild embeds nothing already seen. The cost is
memory: about 9 piece vectors per 200-token chunk of prose (`benchmarks/pack.py` prints it).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np
import numpy.typing as npt
from sqlalchemy.orm import Session, sessionmaker

from windowpack.embed import Embedder, Vectors, embed_with_cache
from windowpack.index.base import Ids, Matrix, Scores, UnitFilter, VectorIndex
from windowpack.index.factory import build_vector_index, load_vector_index
from windowpack.text import content_hash, split_sentences

SLOTS = 256
"""Pieces per chunk at most; a piece's index id is its chunk's id times this plus its ordinal."""
_MIN_PIECE_CHARS = 24
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
) -> tuple[list[str], Vectors, int]:
    """Every piece of `texts` (chunk texts) embedded through the cache: the piece texts, their
    vectors and how many were embedded afresh. An ingest calls it before its commit, so that
    publishing the version finds every piece vector in the cache. `on_embedded`, `on_total`:
    as `embed_with_cache` reports progress."""
    pieces = [text[a:b] for text in texts for a, b in sentence_pieces(text)]
    vectors, fresh = embed_with_cache(
        sessions,
        embedder,
        pieces,
        [content_hash(p) for p in pieces],
        on_embedded=on_embedded,
        on_total=on_total,
    )
    return pieces, vectors, fresh


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
        ids, pieces = piece_texts(chunk_ids, texts)
        vectors, _ = embed_with_cache(sessions, embedder, pieces, [content_hash(p) for p in pieces])
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
        ids, pieces = piece_texts(chunk_ids, texts)
        if len(ids):
            hashes = [content_hash(p) for p in pieces]
            vectors = embed_with_cache(sessions, embedder, pieces, hashes)[0]
            self.add(ids, vectors)

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
