"""Search: the k best units for a question, by the one ranking packs use too (`retrieval`)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cachetools import LRUCache
from sqlalchemy.orm import Session, sessionmaker

from windowpack.config import EvidenceSettings
from windowpack.documents import heading_trail
from windowpack.embed import Embedder, Vectors, model_languages
from windowpack.errors import InvalidArgumentError
from windowpack.index import CollectionIndexes, KeptUnits, is_node_index_id, node_id_of
from windowpack.search.retrieval import read_question, retrieve
from windowpack.storage import repository
from windowpack.types import Hit, Span, unit_name

# Each list is read deeper than the hits asked for, so that a unit ranked modestly by several
# can still win the fusion; search and pack read at least `MIN_CANDIDATES`, and fusion by
# rank gives their common head the same order however deep each read.
_CANDIDATE_FACTOR = 2
MIN_CANDIDATES = 512
MAX_K = 10_000


class QueryEmbeddingCache:
    """A small LRU of query vectors: repeated questions skip the model (~10 ms each)."""

    def __init__(self, embedder: Embedder, size: int = 1024) -> None:
        self._embedder = embedder
        self._vectors: LRUCache[str, Vectors] = LRUCache(maxsize=size)
        # cachetools' caches are not thread-safe, and a read reorders the LRU.
        self._lock = threading.Lock()

    @property
    def languages(self) -> frozenset[str] | None:
        """The languages the embedding model was trained on (`embed.model_languages`)."""
        return model_languages(self._embedder)

    def get(self, query: str) -> Vectors:
        with self._lock:
            vector = self._vectors.get(query)
        return self._embedded(query) if vector is None else vector

    def get_soon(self, query: str) -> Callable[[], Vectors]:
        """What gives `get(query)`: at once when cached, else embedded in a worker thread
        meanwhile, so that the caller's work that needs no vector (the lexical search)
        overlaps the model's forward pass, which holds no GIL."""
        with self._lock:
            vector = self._vectors.get(query)
        if vector is not None:
            return lambda: vector
        return _query_workers().submit(self._embedded, query).result

    def _embedded(self, query: str) -> Vectors:
        vector = self._embedder.embed_query(query)
        with self._lock:
            self._vectors[query] = vector
        return vector


@functools.cache
def _query_workers() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=4, thread_name_prefix="windowpack-query")


def check_query(query: str) -> None:
    """A query is a string with something in it besides white space."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgumentError("query", "must be a non-empty string")


def check_search(query: str, k: int) -> None:
    """The arguments of a search: a query, and k from 1 to `MAX_K` (not a bool)."""
    check_query(query)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InvalidArgumentError("k", f"must be an integer from 1 to {MAX_K}, got {k!r}")


def hybrid_search(
    query: str,
    k: int,
    *,
    indexes: CollectionIndexes,
    query_vectors: QueryEmbeddingCache,
    sessions: sessionmaker[Session],
    settings: EvidenceSettings,
    include_summaries: bool = False,
    kept: KeptUnits | None = None,
) -> list[Hit]:
    """The k best chunks (and summaries, if asked) for `query`, best first, with provenance.

    The arguments are checked by the caller (`check_search`), once, where they come in.
    `settings` are the store's `EvidenceSettings`, as a pack uses them. With `kept` (the
    units a metadata filter keeps) every index is searched within them, so the k hits come
    from them however few they are.
    """
    if kept is not None and not len(kept):
        return []  # the filter keeps nothing: no question to embed
    indexes = indexes.within(kept)
    candidates = max(k * _CANDIDATE_FACTOR, MIN_CANDIDATES)
    question = read_question(query, [indexes])
    evidence = retrieve(
        question,
        [indexes],
        query_vectors.get_soon(query),
        depth=candidates,
        settings=settings,
        texts_of=functools.partial(_chunk_texts, sessions),
        model_languages=query_vectors.languages,
    )
    fused = [
        (index_id, score)
        for index_id, score in zip(evidence.ids.tolist(), evidence.scores.tolist(), strict=True)
        if include_summaries or not is_node_index_id(index_id)
    ][:k]
    chunk_ids = [index_id for index_id, _ in fused if not is_node_index_id(index_id)]
    node_ids = [node_id_of(index_id) for index_id, _ in fused if is_node_index_id(index_id)]
    with sessions() as session:
        chunks = repository.chunks_with_documents(session, chunk_ids)
        nodes = repository.nodes_with_documents(session, node_ids) if node_ids else {}
        trails = _heading_trails(session, list(chunks.values()))
    hits = []
    for index_id, score in fused:
        if is_node_index_id(index_id):
            found = nodes.get(node_id_of(index_id))
        else:
            found = chunks.get(index_id)
        if found is not None:  # None: deleted by a concurrent writer since the index was read
            hits.append(_hit(found, score, summary=is_node_index_id(index_id), trails=trails))
    return hits


def _chunk_texts(sessions: sessionmaker[Session], chunk_ids: Sequence[int]) -> list[str]:
    """The stored texts of some chunks (empty for one deleted meanwhile), in their order."""
    with sessions() as session:
        found = repository.chunks_with_documents(session, list(chunk_ids))
    return [found[i][0].text if i in found else "" for i in chunk_ids]


def _heading_trails(
    session: Session, chunks: list[repository.WithDocument]
) -> dict[int, list[tuple[str, ...]]]:
    """The heading path of each section of the sectioned documents these chunks are in, by
    document row id, read from the document's text as the packer reads it (`heading_trail`
    over its units), so that a hit and a window's header name a section alike."""
    wanted = {
        row.document_id for row, _, _, kind in chunks if kind == "markdown" and row.unit is not None
    }
    if not wanted:
        return {}
    found = repository.texts_and_units(session, sorted(wanted))
    return {
        document_id: heading_trail(text, [Span(start=a, end=b) for a, b in units])
        for document_id, (text, units) in found.items()
    }


def _hit(
    found: repository.WithDocument,
    score: float,
    *,
    summary: bool,
    trails: dict[int, list[tuple[str, ...]]],
) -> Hit:
    """A hit from a chunk row or a summary node row, with its document's provenance."""
    row, document_id, title, kind = found
    has_span = row.char_start is not None and row.char_end is not None
    span = Span(start=row.char_start, end=row.char_end) if has_span else None
    common: dict[str, Any] = {"score": score, "text": row.text, "span": span}
    common.update(document_id=document_id, title=title)
    if not summary:
        unit = row.unit
        named = unit_name(kind) if unit is not None and kind is not None else None
        sections = trails.get(row.document_id, [])
        path = sections[unit] if unit is not None and unit < len(sections) else ()
        return Hit(
            **common,
            ordinal=row.ordinal,
            chunk_id=row.id,
            unit=unit,
            unit_name=named,
            heading_path=path,
        )
    ordinals = {"ordinal": row.leaf_start, "last_ordinal": row.leaf_end - 1}
    return Hit(**common, **ordinals, chunk_id=None, kind="summary", level=row.level, node_id=row.id)
