"""What a collection's indexes are to their callers: the vector and lexical protocols.

The index store, search and packing use only these protocols, so a new kind (HNSW, segments
that grow without a rebuild, ...) plugs in without touching them, as embedders do in
`windowpack.embed` and summarizers in `summarizer.base`; `factory` builds and loads the kinds.
Today's kinds: FAISS flat or IVF (`dense.FaissIndex`, chosen by size) under an append-only
layer of tail and tombstones (`appendable_dense.AppendableFaissIndex`), and BM25 over
sentences in segments (`lexical.Bm25Index`). Both change by what a write adds or removes:
writers change a `copy` while readers search the published one.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

Ids = npt.NDArray[np.int64]
Scores = npt.NDArray[np.float32]
Matrix = npt.NDArray[np.float32]
T = TypeVar("T")


class UnitFilter(Protocol):
    """The units a filtered search stays within (`kept.KeptUnits`): which ids are kept, and
    a place to keep what an index derives from the set (keyed by that index)."""

    def keeps(self, ids: Ids) -> npt.NDArray[np.bool_]: ...

    def derived(self, key: Hashable, compute: Callable[[], T]) -> T: ...


@dataclass(frozen=True, kw_only=True)
class AnnSettings:
    """The ANN index a collection gets at or above its `ann_threshold` (exact flat below).

    `nprobe` is IVF's lists visited per query; `neighbours` (M), `ef_construction` and
    `ef_search` are HNSW's graph degree and beam widths.
    """

    kind: Literal["ivf", "hnsw"] = "hnsw"
    nprobe: int = 16
    neighbours: int = 32
    ef_construction: int = 40
    ef_search: int = 256


# Chosen by benchmarks/ann.py (k = 100, 100 questions, 20K vectors: the essays' 5,325 real
# MiniLM chunk vectors plus noisy copies; one thread): HNSW32 at efSearch 256 is the only
# setting tried with recall@100 >= 0.95 (0.981; 0.979 with 10% deleted as tombstones) at
# 0.59 ms a query. HNSW16/256 reached 0.928, HNSW32/128 0.935; IVF512 reached 0.926 only at
# nprobe 64 (0.73 at 16); PQ48 capped IVF at 0.71 and took 356 s to train. HNSW has no
# remove_ids, and needs none: deletes are tombstones, folded in by a rebuild past 10 %
# (appendable_dense). Memory: 36 MB against 31 MB flat at 20K vectors.
DEFAULT_ANN = AnnSettings()


class VectorIndex(Protocol):
    """Nearest neighbours by inner product over L2-normalised vectors, keyed by index ids."""

    @property
    def kind(self) -> str:
        """The implementation ("flat", "ivf", ...), as saved files and reports name it."""
        ...

    @property
    def size(self) -> int: ...

    @property
    def dimension(self) -> int: ...

    def add(self, ids: Ids, vectors: Matrix) -> None: ...

    def remove(self, ids: Ids) -> None: ...

    def search(
        self, query: Matrix, k: int, *, within: UnitFilter | None = None
    ) -> tuple[Ids, Scores]:
        """Top-k ids and scores for one query vector, best first (fewer if the index is small);
        with `within`, the top k of the units it keeps (searched among them, not filtered
        after)."""
        ...

    def copy(self) -> VectorIndex:
        """An independent copy: writers change a copy while readers search the original."""
        ...

    def save(self, path: Path) -> None:
        """Write atomically: a reader never sees a half-written file."""
        ...

    def moved_to(self, path: Path) -> None:
        """The folder last saved was renamed to `path` (the next save links files from it)."""
        ...


class LexicalIndex(Protocol):
    """Keyword relevance of the indexed texts to a query, keyed by index ids."""

    @property
    def size(self) -> int: ...

    def search(self, query: str, k: int, *, within: UnitFilter | None = None) -> tuple[Ids, Scores]:
        """Top-k ids and scores, best first; texts sharing no term with the query are left out,
        and with `within` the units it does not keep (scored as the whole index scores them:
        the statistics are the collection's)."""
        ...

    def search_terms(
        self,
        terms: Sequence[str],
        k: int,
        *,
        weights: Sequence[float] | None = None,
        within: UnitFilter | None = None,
    ) -> tuple[Ids, Scores]:
        """As `search`, for terms already cut (`terms`), each weighted by `weights`."""
        ...

    @property
    def language(self) -> str | None:
        """The code of the language rules texts are cut by (None: nothing indexed yet)."""
        ...

    def terms(self, text: str) -> list[str]:
        """`text` cut into this index's terms."""
        ...

    def idf(self, terms: Sequence[str]) -> npt.NDArray[np.float64]:
        """Each term's inverse document frequency (0 for a term never indexed)."""
        ...

    def term_counts(self, ids: Sequence[int]) -> list[dict[str, int]] | None:
        """The terms each of `ids` was indexed with, and how often (what `terms` of its text
        gives, counted), read from the index; None when the index cannot say (an id not
        indexed, or rows that are not whole units)."""
        ...

    def add(self, ids: Ids, texts: Sequence[str]) -> None: ...

    def remove(self, ids: Ids) -> None: ...

    def copy(self) -> LexicalIndex:
        """An independent copy: writers change a copy while readers search the original."""
        ...

    def save(self, directory: Path) -> None: ...

    def moved_to(self, directory: Path) -> None:
        """The folder last saved was renamed to `directory`."""
        ...
