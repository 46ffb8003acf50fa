"""FAISS vector index over chunk ids: exact inner product when small, an ANN index past a
threshold (IVF or HNSW, with the settings of `index.base.AnnSettings`).

Vectors are L2-normalised, so inner product is cosine similarity. Ids are the database's
chunk ids (`IndexIDMap2` for the flat and HNSW indexes, native ids for IVF). HNSW has no
`remove_ids`; deletes reach it as tombstones (`appendable_dense`), and folding them in
rebuilds the graph from its stored vectors (additions alone are inserted into the graph).

A saved index is loaded memory-mapped (`IO_FLAG_MMAP_IFC`: the flat codes of flat and HNSW
storage, and IVF's lists, stay in the file's pages): opening a large collection reads only
what searches touch, and the kernel may drop those pages again under pressure. FAISS cannot
grow a mapped index (`add` aborts the process, and so does adding to its `clone_index`), so
a mapped index is first copied into memory by serialising it (`_owned`). A base is never
changed once built (`appendable_dense`), so that copy happens only when one is compacted.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from windowpack.errors import MissingDependencyError, StorageError
from windowpack.index.base import DEFAULT_ANN, AnnSettings, Ids, Matrix, Scores
from windowpack.text import write_atomically

_MIN_POINTS_PER_LIST = 39
BY_POSITION_MAX = 131_072
"""A filtered search over at most this many kept vectors of an HNSW base is an exact pass
over them (~25 ms at 384 dims); past it, HNSW with a selector (`FaissIndex.select`)."""
_MAX_BEAM = 32_768


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as error:  # pragma: no cover - a core dependency
        raise MissingDependencyError("faiss-cpu", "default") from error
    # This wheel ships a threshold of 128000, which makes batched searches 5-7x slower than
    # the classic value; restore it.
    faiss.cvar.distance_compute_blas_threshold = 20
    return faiss


_THREADS_LOCK = threading.Lock()
_single_thread_users = 0
_saved_threads = 1


@contextmanager
def _one_openmp_thread(faiss: Any) -> Iterator[None]:
    """Run a one-query search on one OpenMP thread, then restore the setting.

    FAISS and torch share one OpenMP runtime here. Right after a query embedding torch's
    worker threads still spin, and a two-thread FAISS search waits on them: 7.8 ms per search
    against 1.4 ms on one thread (~1M-token essays). Setting it globally instead would also
    halve torch's batch embedding, so the setting is scoped (and counted, for concurrent
    searches).
    """
    global _single_thread_users, _saved_threads
    with _THREADS_LOCK:
        if _single_thread_users == 0:
            _saved_threads = faiss.omp_get_max_threads()
            faiss.omp_set_num_threads(1)
        _single_thread_users += 1
    try:
        yield
    finally:
        with _THREADS_LOCK:
            _single_thread_users -= 1
            if _single_thread_users == 0:
                faiss.omp_set_num_threads(_saved_threads)


class FaissIndex:
    """One FAISS index whose ids are index ids; `kind` is "flat" (exact), "ivf" or "hnsw".

    A collection's vector index is an `AppendableFaissIndex` over one of these as its base.
    """

    def __init__(
        self, index: Any, kind: str, ann: AnnSettings = DEFAULT_ANN, *, mapped: bool = False
    ) -> None:
        self._index = index
        self.kind = kind
        self._ann = ann
        self.mapped = mapped
        """Whether the index's vectors are a view of its file (`load`), not its own memory."""
        self._flat: _FlatView | None = None  # a flat index's vectors and ids as arrays

    @classmethod
    def build(
        cls,
        dimension: int,
        ids: Ids,
        vectors: npt.NDArray[np.float32],
        *,
        ann_threshold: int,
        ann: AnnSettings = DEFAULT_ANN,
    ) -> FaissIndex:
        """Build from scratch: exact search below `ann_threshold` vectors, `ann` at or above."""
        faiss = _faiss()
        if len(ids) < ann_threshold:
            built = cls(faiss.IndexIDMap2(faiss.IndexFlatIP(dimension)), "flat", ann)
        elif ann.kind == "hnsw":
            built = cls(_new_hnsw(faiss, dimension, ann), "hnsw", ann)
        else:
            built = cls(_trained_ivf(faiss, dimension, vectors, ann), "ivf", ann)
        built.add(ids, vectors)
        return built

    @property
    def size(self) -> int:
        return int(self._index.ntotal)

    @property
    def dimension(self) -> int:
        return int(self._index.d)

    def add(self, ids: Ids, vectors: npt.NDArray[np.float32]) -> None:
        if len(ids):
            self._own()
            self._flat = None  # FAISS may move its vectors: the view would dangle
            self._index.add_with_ids(
                np.ascontiguousarray(vectors, dtype=np.float32),
                np.ascontiguousarray(ids, dtype=np.int64),
            )

    def remove(self, ids: Ids) -> None:
        if len(ids):
            self._own()
            self._flat = None
            self._index.remove_ids(np.ascontiguousarray(ids, dtype=np.int64))

    def search(
        self,
        query: npt.NDArray[np.float32],
        k: int,
        *,
        excluded: Ids | None = None,
        selection: Selection | None = None,
    ) -> tuple[Ids, Scores]:
        """Top-k chunk ids and cosine scores for one query vector (fewer if the index is small);
        ids in `excluded` are skipped inside the search (an `IDSelector`), not filtered after.
        With `selection` (`select`) only its ids are searched, and `excluded` is not used."""
        if selection is not None:
            k = min(k, selection.size)
        else:
            k = min(k, self.size - (len(excluded) if excluded is not None else 0))
        if k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        if selection is not None and selection.positions is not None:
            return self._by_position(query, k, selection)
        if self.kind == "flat":
            allowed = selection.mask if selection is not None else None
            return self._flat_view().search(query, k, excluded, allowed)
        faiss = _faiss()
        if selection is not None:
            params = self._selected_parameters(faiss, selection, k)
        else:
            params = self._search_parameters(faiss, excluded)
        with _one_openmp_thread(faiss):
            scores, ids = self._index.search(
                np.ascontiguousarray(query.reshape(1, -1)), k, params=params
            )
        keep = ids[0] >= 0
        return ids[0][keep].astype(np.int64), scores[0][keep].astype(np.float32)

    def _flat_view(self) -> _FlatView:
        view = self._flat
        if view is None:
            faiss = _faiss()
            flat = faiss.downcast_index(self._index.index)
            ids = faiss.vector_to_array(self._index.id_map).astype(np.int64)
            view = _FlatView(self._index, flat.get_xb(), int(flat.ntotal), self.dimension, ids)
            self._flat = view
        return view

    def select(self, ids: Ids) -> Selection:
        """What `search(..., selection=)` takes to search only `ids` (stored ids, sorted).

        Why, measured (50K clustered vectors of 384 dims, HNSW32 at efSearch 256, k = 2,048
        as a pack at 8K asks for pieces, one thread): an exact pass over just the kept
        vectors, read where FAISS stores them (`fvec_inner_products_by_idx`, no copy), costs
        ~0.2 us a kept vector (0.7 ms for 5K, 3.2 ms for 15K, 5.5 ms for 25K), and a copy
        of them searched by numpy was no faster. HNSW limited by an `IDSelector` finds few
        of the kept vectors at its own beam (recall@2048 0.02 with 1% kept, 0.04 with 10%,
        0.09 with 30%): its beam must grow by 1 / share (0.99 with 10% kept, but in 99 ms;
        0.97 with 30% in 20 ms; 0.94 with 50% in 11 ms). So a flat or HNSW base is searched
        by that exact pass up to `BY_POSITION_MAX` kept vectors (~25 ms; a flat one up to
        half its vectors, past which one pass over all of them with a mask costs less), and
        past it by the index's own search with a selector and a beam (HNSW) or lists visited
        (IVF, which keeps no vector by position) grown by 1 / share, capped.
        """
        share = len(ids) / max(1, self.size)
        if self.kind != "ivf" and len(ids) <= (
            self.size // 2 if self.kind == "flat" else BY_POSITION_MAX
        ):
            return Selection(ids=ids, share=share, positions=self._positions(ids))
        if self.kind == "flat":
            return Selection(ids=ids, share=share, mask=self._flat_view().mask_of(ids))
        selector = _faiss().IDSelectorBatch(np.ascontiguousarray(ids, dtype=np.int64))
        return Selection(ids=ids, share=share, selector=selector)

    def _positions(self, ids: Ids) -> Ids:
        """Where the vectors of `ids` (all stored) lie in the index's storage."""
        if self.kind == "flat":
            return self._flat_view().positions_of(ids)
        stored = _faiss().vector_to_array(self._index.id_map).astype(np.int64)
        order = np.argsort(stored, kind="stable")
        return np.asarray(order[np.searchsorted(stored[order], ids)], dtype=np.int64)

    def _by_position(self, query: Matrix, k: int, selection: Selection) -> tuple[Ids, Scores]:
        """The exact top k of the selection's vectors, read in place in the index's storage."""
        faiss = _faiss()
        inner = faiss.downcast_index(self._index.index)
        storage = faiss.downcast_index(inner.storage) if hasattr(inner, "storage") else inner
        positions = selection.positions
        assert positions is not None
        vector = np.ascontiguousarray(query, dtype=np.float32).reshape(-1)
        scores = np.empty(len(positions), dtype=np.float32)
        with _one_openmp_thread(faiss):  # as a search: its threads' start cost more than it
            faiss.fvec_inner_products_by_idx(
                faiss.swig_ptr(scores),
                faiss.swig_ptr(vector),
                storage.get_xb(),
                faiss.swig_ptr(positions),
                self.dimension,
                1,
                len(positions),
            )
        ids = selection.ids
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.lexsort((ids[top], -scores[top]))]
        return ids[top], scores[top]

    def _selected_parameters(self, faiss: Any, selection: Selection, k: int) -> Any:
        """Search parameters limited to the selection, the beam (HNSW) or the lists visited
        (IVF) grown by 1 / share, so that about as many kept vectors are met as unfiltered."""
        grow = 1.0 / max(selection.share, 1e-6)
        if self.kind == "hnsw":
            beam = max(self._ann.ef_search, k)
            params = faiss.SearchParametersHNSW(
                sel=selection.selector, efSearch=int(min(beam * grow, _MAX_BEAM))
            )
        else:
            lists = int(self._index.nlist)
            probes = int(min(lists, math.ceil(self._index.nprobe * grow)))
            params = faiss.SearchParametersIVF(sel=selection.selector, nprobe=probes)
        params.referenced = selection.selector
        return params

    def _search_parameters(self, faiss: Any, excluded: Ids | None) -> Any:
        if excluded is None or not len(excluded):
            return None
        batch = faiss.IDSelectorBatch(np.ascontiguousarray(excluded, dtype=np.int64))
        selector = faiss.IDSelectorNot(batch)
        selector.referenced = batch  # the SWIG wrapper does not keep the inner selector alive
        return self._parameters(faiss, selector)

    def _parameters(self, faiss: Any, selector: Any) -> Any:
        """Search parameters of this kind that apply `selector` inside the search."""
        if self.kind == "ivf":
            params = faiss.SearchParametersIVF(sel=selector, nprobe=self._index.nprobe)
        elif self.kind == "hnsw":  # IndexIDMap2 passes the selector down, translated
            params = faiss.SearchParametersHNSW(sel=selector, efSearch=self._ann.ef_search)
        else:
            params = faiss.SearchParameters(sel=selector)
        params.referenced = selector
        return params

    def rewritten(self, *, removed: Ids, added_ids: Ids, added_vectors: Matrix) -> FaissIndex:
        """A new index of this kind without `removed` and with the additions (this one is kept)."""
        if self.kind == "hnsw" and len(removed):
            # No remove_ids: a new graph over the live stored vectors. With nothing removed
            # the graph grows in place instead (below): a rebuild at every tenth of growth
            # cost a growing collection ~10x its final size in inserts.
            ids, vectors = self._stored()
            keep = ~np.isin(ids, removed)
            rebuilt = FaissIndex(_new_hnsw(_faiss(), self.dimension, self._ann), "hnsw", self._ann)
            rebuilt.add(
                np.concatenate([ids[keep], added_ids]), np.vstack([vectors[keep], added_vectors])
            )
            return rebuilt
        copy = self.copy()
        copy.remove(removed)
        copy.add(added_ids, added_vectors)
        return copy

    def _stored(self) -> tuple[Ids, Matrix]:
        """Ids and vectors held by an `IndexIDMap2` over a flat-storage index."""
        faiss = _faiss()
        inner = faiss.downcast_index(self._index.index)
        storage = faiss.downcast_index(inner.storage) if hasattr(inner, "storage") else inner
        ids = faiss.vector_to_array(self._index.id_map).astype(np.int64)
        return ids, storage.reconstruct_n(0, storage.ntotal)

    def copy(self) -> FaissIndex:
        """An independent copy in memory (a mapped index's clone would still view its file)."""
        if self.mapped:
            return FaissIndex(self._owned(), self.kind, self._ann)
        return FaissIndex(_faiss().clone_index(self._index), self.kind, self._ann)

    def _own(self) -> None:
        """Hold the index in memory before changing it (FAISS aborts on growing a view)."""
        if self.mapped:
            self._index, self.mapped = self._owned(), False

    def _owned(self) -> Any:
        faiss = _faiss()
        index = faiss.deserialize_index(faiss.serialize_index(self._index))
        _search_settings(faiss, index, self.kind, self._ann)  # not kept in the bytes
        return index

    def save(self, path: Path) -> None:
        """Write atomically: a reader never sees a half-written file."""
        faiss = _faiss()
        write_atomically(path, lambda temporary: faiss.write_index(self._index, str(temporary)))

    @classmethod
    def load(cls, path: Path, ann: AnnSettings = DEFAULT_ANN) -> FaissIndex:
        """The index saved at `path`, mapped, its kind read from the file; `ann`'s search
        settings. The file must not change while the index is in use (a base's never does:
        a new base is a new file)."""
        faiss = _faiss()
        try:
            index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY)
        except RuntimeError as error:
            raise StorageError(f"{path}: cannot read FAISS index: {error}") from error
        if hasattr(index, "nprobe"):
            kind = "ivf"
        else:
            inner = faiss.downcast_index(index.index) if hasattr(index, "id_map") else None
            kind = "hnsw" if inner is not None and hasattr(inner, "hnsw") else "flat"
        _search_settings(faiss, index, kind, ann)
        return cls(index, kind, ann, mapped=True)


@dataclass(frozen=True, kw_only=True, eq=False)
class Selection:
    """The ids one search is limited to (`FaissIndex.select`), their `share` of the index,
    and how they are searched: by their `positions` in the storage (an exact pass over
    them), by a `mask` over a flat index's vectors, or by a FAISS `selector`."""

    ids: Ids
    share: float
    positions: Ids | None = None
    mask: npt.NDArray[np.bool_] | None = None
    selector: Any = None

    @property
    def size(self) -> int:
        return len(self.ids)

    @property
    def nbytes(self) -> int:
        """About what the selection holds (a selector: FAISS's hash set, ~48 bytes an id)."""
        held = self.ids.nbytes + sum(a.nbytes for a in (self.positions, self.mask) if a is not None)
        return int(held) + (48 * len(self.ids) if self.selector is not None else 0)


class _FlatView:
    """A flat index searched by one pass of FAISS's inner-product kernel over its own vectors
    (FAISS's memory or the mapped file, no copy), then a partition: for one query FAISS's
    flat search keeps a heap per vector and took ~2x as long (5 ms against 2-3 ms over 7.5K
    vectors). Not numpy's matrix product: a mapped file's vectors start at byte 82, which
    is not float-aligned, and numpy then skips BLAS for a loop of its own (70 ms against
    12 ms over 83K vectors)."""

    def __init__(self, owner: Any, vectors: Any, count: int, dimension: int, ids: Ids) -> None:
        self._owner = owner  # keeps the memory the pointer points into alive
        self._vectors = vectors  # FAISS's float* to the first vector
        self._count = count
        self._dimension = dimension
        self._ids = ids
        self._order = np.argsort(ids, kind="stable")
        self._sorted = ids[self._order]

    def positions_of(self, ids: Ids) -> Ids:
        """Where the vectors of `ids` (all stored) lie among the index's vectors."""
        return np.asarray(self._order[np.searchsorted(self._sorted, ids)], dtype=np.int64)

    def mask_of(self, ids: Ids) -> npt.NDArray[np.bool_]:
        """True at the vectors of `ids` (all stored)."""
        mask = np.zeros(self._count, dtype=np.bool_)
        mask[self.positions_of(ids)] = True
        return mask

    def search(
        self,
        query: Matrix,
        k: int,
        excluded: Ids | None,
        allowed: npt.NDArray[np.bool_] | None = None,
    ) -> tuple[Ids, Scores]:
        faiss = _faiss()
        vector = np.ascontiguousarray(query, dtype=np.float32).reshape(-1)
        scores = np.empty(self._count, dtype=np.float32)
        faiss.fvec_inner_products_ny(
            faiss.swig_ptr(scores),
            faiss.swig_ptr(vector),
            self._vectors,
            self._dimension,
            self._count,
        )
        if excluded is not None and len(excluded):
            slots = np.minimum(np.searchsorted(self._sorted, excluded), len(self._sorted) - 1)
            scores[self._order[slots[self._sorted[slots] == excluded]]] = -np.inf
        if allowed is not None:
            scores[~allowed] = -np.inf
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.lexsort((self._ids[top], -scores[top]))]
        return self._ids[top], scores[top]


def _search_settings(faiss: Any, index: Any, kind: str, ann: AnnSettings) -> None:
    """Set `ann`'s search-time settings on a loaded index (files do not keep them)."""
    if kind == "ivf":
        index.nprobe = ann.nprobe
    elif kind == "hnsw":
        faiss.downcast_index(index.index).hnsw.efSearch = ann.ef_search


def _trained_ivf(faiss: Any, dimension: int, vectors: Matrix, ann: AnnSettings) -> Any:
    # ~4·sqrt(n) lists is the usual rule of thumb, trained on the vectors themselves; FAISS
    # wants at least ~39 training points per list, so small sets get fewer lists.
    count = len(vectors)
    lists = max(1, min(int(4 * math.sqrt(count)), count // _MIN_POINTS_PER_LIST))
    index = faiss.index_factory(dimension, f"IVF{lists},Flat", faiss.METRIC_INNER_PRODUCT)
    index.train(np.ascontiguousarray(vectors, dtype=np.float32))
    index.nprobe = ann.nprobe
    return index


def _new_hnsw(faiss: Any, dimension: int, ann: AnnSettings) -> Any:
    graph = faiss.IndexHNSWFlat(dimension, ann.neighbours, faiss.METRIC_INNER_PRODUCT)
    graph.hnsw.efConstruction = ann.ef_construction
    graph.hnsw.efSearch = ann.ef_search
    return faiss.IndexIDMap2(graph)  # HNSW has no ids of its own
