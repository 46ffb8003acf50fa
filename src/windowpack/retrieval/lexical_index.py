"""BM25 (bm25s) over the sentences of the chunks; a chunk scores as its best sentence.

Why sentences, when the results are chunks: a 200-token chunk mixes several facts, and BM25's
length normalisation over the whole chunk dilutes a one-sentence fact, while chunks that
repeat a topic word many times win. The query's key terms meeting in *one sentence* is much
stronger evidence of an answer, so each chunk gets the score of its best sentence (the
"MaxP" aggregation of passage-level evidence). Topical, chunk-level relevance comes from the
dense index. Measured on needles planted in the ~680K-token essays (tests/test_search_model.py):
fused with dense, chunk-level BM25 put 4 of 5 needles first and one 8th; sentence-level put
all 5 first; on LOFT's NQ queries both put every gold passage first.

bm25s has no incremental add, so a new index version rebuilds it: it indexes ~10M tokens in
about 7 s on this class of machine, which is small beside the embedding of the same text.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from windowpack.errors import MissingDependencyError, StorageError
from windowpack.retrieval.index_kinds import Ids, Scores
from windowpack.text.sentences import split_sentences

_IDS_FILE = "sentence_chunk_ids.npy"
# Written instead of bm25s's files when no sentence has an indexable word.
_EMPTY_FILE = "empty.json"
_STEMMER_LANGUAGE = "english"
# Sentences fetched per wanted chunk: several top sentences often share one chunk.
_SENTENCES_PER_CHUNK = 4


def _bm25s() -> Any:
    try:
        import bm25s
    except ImportError as error:  # pragma: no cover - a core dependency
        raise MissingDependencyError("bm25s", "default") from error
    return bm25s


def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer(_STEMMER_LANGUAGE)


class Bm25Index:
    """A `LexicalIndex`: BM25 over sentences (English stop words, Snowball stemming); results
    are index ids.

    `retriever` is None when no sentence holds an indexable word (only stop words or
    punctuation, as in "To be, or not to be."): a valid state that finds nothing, and that
    bm25s itself cannot index.
    """

    def __init__(self, retriever: Any | None, sentence_chunk_ids: Ids) -> None:
        self._retriever = retriever
        self._sentence_chunk_ids = sentence_chunk_ids
        self._stemmer = _stemmer()

    @classmethod
    def build(cls, chunk_ids: Sequence[int], texts: Sequence[str]) -> Bm25Index:
        sentence_chunk_ids, sentences = _sentences_of(chunk_ids, texts)
        bm25s = _bm25s()
        owners = np.asarray(sentence_chunk_ids, dtype=np.int64)
        if not sentences:
            return cls(None, owners)
        tokens = bm25s.tokenize(sentences, stopwords="en", stemmer=_stemmer(), show_progress=False)
        if not tokens.vocab:
            return cls(None, owners)
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        return cls(retriever, owners)

    @property
    def size(self) -> int:
        """Number of chunks indexed."""
        return len(np.unique(self._sentence_chunk_ids))

    def search(self, query: str, k: int) -> tuple[Ids, Scores]:
        """Top-k chunk ids scored by their best sentence; chunks sharing no term are left out."""
        sentences = min(k * _SENTENCES_PER_CHUNK, len(self._sentence_chunk_ids))
        if k <= 0 or sentences <= 0 or self._retriever is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        bm25s = _bm25s()
        tokens = bm25s.tokenize(
            [query], stopwords="en", stemmer=self._stemmer, show_progress=False, allow_empty=True
        )
        if not tokens.vocab or all(not ids for ids in tokens.ids):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        positions, scores = self._retriever.retrieve(
            # n_threads=0 runs in this thread; any other value starts a thread pool per call.
            tokens,
            k=sentences,
            show_progress=False,
            n_threads=0,
        )
        keep = scores[0] > 0
        return _best_per_chunk(self._sentence_chunk_ids[positions[0][keep]], scores[0][keep], k)

    def save(self, directory: Path) -> None:
        """Write to a temporary folder, then swap it in."""
        temporary = directory.with_name(directory.name + ".tmp")
        shutil.rmtree(temporary, ignore_errors=True)
        temporary.mkdir(parents=True)
        np.save(temporary / _IDS_FILE, self._sentence_chunk_ids)
        if self._retriever is not None:
            self._retriever.save(str(temporary), show_progress=False)
        else:
            (temporary / _EMPTY_FILE).write_text(json.dumps({"empty": True}))
        shutil.rmtree(directory, ignore_errors=True)
        os.replace(temporary, directory)

    @classmethod
    def load(cls, directory: Path) -> Bm25Index:
        try:
            sentence_chunk_ids = np.load(directory / _IDS_FILE)
            if len(sentence_chunk_ids) == 0 or (directory / _EMPTY_FILE).is_file():
                return cls(None, sentence_chunk_ids)
            retriever = _bm25s().BM25.load(str(directory), show_progress=False)
        except (OSError, ValueError) as error:
            raise StorageError(f"{directory}: cannot read BM25 index: {error}") from error
        return cls(retriever, sentence_chunk_ids)


def _sentences_of(chunk_ids: Sequence[int], texts: Sequence[str]) -> tuple[list[int], list[str]]:
    owners: list[int] = []
    sentences: list[str] = []
    for chunk_id, text in zip(chunk_ids, texts, strict=True):
        spans = split_sentences(text) or []
        pieces = [text[span.start : span.end] for span in spans] or [text]
        owners.extend([chunk_id] * len(pieces))
        sentences.extend(pieces)
    return owners, sentences


def _best_per_chunk(chunk_ids: Ids, scores: npt.NDArray[Any], k: int) -> tuple[Ids, Scores]:
    """Keep each chunk's first (best) sentence score; inputs are sorted best first."""
    _, first = np.unique(chunk_ids, return_index=True)
    order = np.sort(first)[:k]
    return chunk_ids[order].astype(np.int64), scores[order].astype(np.float32)
