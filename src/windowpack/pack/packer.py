"""Packing a window for one question (design §4, §5): shared states, a window cache, retries.

Everything a pack needs that does not depend on the question — document texts and chunk
spans, the tree as arrays, token costs in the requested tokenizer — is loaded once per
(collection, index version, tokenizer) and shared by every request of the process; a new
version simply keys a new state. Finished windows are cached by (version, request), within
a bound in bytes (`window_cache`).

`prepare` loads a new version's states before the index store makes that version current
(see `index.store`): a write pays for them, and readers go on packing the previous
version, whose states are kept until the next one lands, instead of waiting.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from windowpack.errors import StorageError
from windowpack.filters import Filter
from windowpack.index import BoundedCache, CollectionIndexes, KeptCache, KeptUnits
from windowpack.pack import piece_counts
from windowpack.pack.collector import collections_batched
from windowpack.pack.document_texts import DocumentTexts, TextCache
from windowpack.pack.filtered import filtered_state, kept_units, state_bytes
from windowpack.pack.loading import load_state
from windowpack.pack.repeats import focus
from windowpack.pack.request import PackRequest
from windowpack.pack.scoring import scored_corpora
from windowpack.pack.session import (
    SessionPlan,
    SessionSources,
    SessionState,
    SessionWindow,
    session_window,
)
from windowpack.pack.state import PackingState
from windowpack.pack.token_counts import SavedCounts
from windowpack.pack.window import Part, lossless_estimate, lossless_window, pack_parts
from windowpack.pack.window_cache import WindowCache, WindowKey
from windowpack.rerank import Reranker
from windowpack.search import QueryEmbeddingCache
from windowpack.storage import repository
from windowpack.text import TokenCounter, get_token_counter
from windowpack.types import HEADER_STYLES, Window

# Packs tried before giving up on a collection that a stream of writes keeps changing.
_MAX_ATTEMPTS = 5
# The default bound of every cached window together (StoreConfig.window_cache_bytes).
DEFAULT_WINDOW_CACHE_BYTES = 256 * 1024 * 1024
# The bound of the filtered states held together (`filtered.state_bytes`).
_FILTERED_BYTES = 256 * 1024 * 1024

Source = tuple[int, str, CollectionIndexes]
"""A collection to pack from: its id, its name and its current indexes."""


class Packer:
    """Per-store packing: shared states by (collection, version, tokenizer) and a window cache."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        *,
        query_vectors: QueryEmbeddingCache,
        writes_paused: AbstractContextManager[object] | None = None,
        cache_bytes: int = DEFAULT_WINDOW_CACHE_BYTES,
        counts_folder: Callable[[int], Path] | None = None,
        reranker: Reranker | None = None,
        kept: KeptCache | None = None,
    ) -> None:
        """`writes_paused` (the store's write lock) is held for a last attempt when writes
        keep landing during every load. Cached windows, lossless ones included, weigh at
        most `cache_bytes` together. `counts_folder` gives the folder where a collection's
        token counts are saved (its index folder), so a restart need not count them again.
        `reranker` re-scores the first stage's best chunks when a request's evidence
        settings ask for it (`rerank_depth`). `kept` holds the units each metadata filter
        keeps, shared with the store's searches (a cache of its own when not given)."""
        self._sessions = sessions
        self._reranker = reranker
        self._query_vectors = query_vectors
        self._writes_paused = writes_paused or contextlib.nullcontext()
        self._counts_folder = counts_folder
        self._states: dict[tuple[int, int, str], PackingState] = {}
        self._windows = WindowCache(cache_bytes)
        self._text_cache = TextCache()
        self._texts: dict[int, DocumentTexts] = {}
        self._lock = threading.Lock()
        self._loading: dict[tuple[int, int, str], threading.Lock] = {}
        self._kept = kept if kept is not None else KeptCache()
        # Filtered states by (collection, version, tokenizer, filter key), least recently
        # used first, within `_FILTERED_BYTES` together (`filtered.state_bytes`).
        self._filtered: BoundedCache[tuple[int, int, str, str], PackingState] = BoundedCache(
            _FILTERED_BYTES, self._filtered_bytes
        )
        self.cache_hits = 0

    def pack(
        self, resolve_sources: Callable[[bool], Sequence[Source]], request: PackRequest
    ) -> Window:
        """One window over one or more collections: (collection id, name, indexes) each.

        `resolve_sources(fresh)` gives each collection's current indexes. It is called again
        when a write publishes a new version while this request reads the old one, so a
        window is always built from one version of each collection, never from a
        half-published one. Then `fresh` is True: a version the database has left can no
        longer be loaded, so the indexes must be the database's own, even if that means
        waiting for them (a replica serving the previous version of another process's write
        to a request whose state it never loaded).
        """
        with collections_batched():
            return self._pack(resolve_sources, request)

    def _pack(
        self, resolve_sources: Callable[[bool], Sequence[Source]], request: PackRequest
    ) -> Window:
        counter = get_token_counter(request.tokenizer)
        for attempt in range(_MAX_ATTEMPTS):
            window = self._pack_at(resolve_sources(attempt > 0), request, counter)
            if window is not None:
                return window
        # Writes land faster than a state loads: load once more with writes held off (they
        # wait for this one load), so a stream of ingests cannot starve readers.
        with self._writes_paused:
            window = self._pack_at(resolve_sources(True), request, counter)
        if window is None:
            raise StorageError("the collection changed while writes were paused; retry")
        return window

    def _pack_at(
        self, sources: Sequence[Source], request: PackRequest, counter: TokenCounter
    ) -> Window | None:
        versions = tuple((cid, indexes.version) for cid, _, indexes in sources)
        key = WindowKey.of_request(versions, request)
        cached = self._windows.get(key)
        if cached is not None:
            with self._lock:
                self.cache_hits += 1
            return cached
        states = self._held(sources, counter, request.where)
        if states is None:
            return None
        window = self._lossless(versions, [state for state, _ in states], request, counter)
        if window is None and not any(state.corpus.chunks for state, _ in states):
            # Nothing to search: an empty collection, or a filter that keeps no document.
            window = pack_parts(
                [Part(state=s, corpus=s.corpus) for s, _ in states], request, counter
            )
        if window is None:
            scored, found = scored_corpora(states, self._query_vectors, request, self._reranker)
            parts = [
                Part(
                    state=state,
                    corpus=found.corpus,
                    focus=focus(state.turns, request.query),
                    found=found.found,
                )
                for (state, _), found in zip(states, scored, strict=True)
            ]
            window = replace(pack_parts(parts, request, counter), retrieval=found.describe())
        self._windows.put(key, window)
        return window

    def pack_session(
        self,
        resolve_sources: Callable[[bool], Sequence[Source]],
        plan: SessionPlan,
        query: str,
        state: SessionState | None,
    ) -> SessionWindow:
        """The window for `query` in a session after `state` (None for its first question):
        the previous window and what `query` needs besides, when the budget allows
        (`session`). Sources are resolved as for `pack`."""
        counter = get_token_counter(plan.request.tokenizer)
        with collections_batched():
            for attempt in range(_MAX_ATTEMPTS + 1):
                found = self._session_at(resolve_sources(attempt > 0), plan, query, state, counter)
                if found is not None:
                    return found
        raise StorageError("the collection kept changing while the session packed; retry")

    def _session_at(
        self,
        sources: Sequence[Source],
        plan: SessionPlan,
        query: str,
        state: SessionState | None,
        counter: TokenCounter,
    ) -> SessionWindow | None:
        versions = tuple((cid, indexes.version) for cid, _, indexes in sources)
        held = self._held(sources, counter, plan.request.where)
        if held is None:
            return None

        def scored(request: PackRequest) -> list[Part]:
            found, _ = scored_corpora(held, self._query_vectors, request, self._reranker)
            return [
                Part(
                    state=loaded,
                    corpus=result.corpus,
                    focus=focus(loaded.turns, request.query),
                    found=result.found,
                )
                for (loaded, _), result in zip(held, found, strict=True)
            ]

        def keep(key: object, window: Window) -> None:
            self._windows.put(WindowKey.of_session(versions, key), window)

        return session_window(
            SessionSources(
                states=[loaded for loaded, _ in held],
                pack=lambda request: self._pack_at(sources, request, counter),
                scored=scored,
                recall=lambda key: self._windows.get(WindowKey.of_session(versions, key)),
                keep=keep,
                counter=counter,
            ),
            plan,
            query,
            state,
        )

    def _held(
        self, sources: Sequence[Source], counter: TokenCounter, where: Filter | None
    ) -> list[tuple[PackingState, CollectionIndexes]] | None:
        """Each source's state at its version, with its indexes; with `where`, the state of
        the documents it keeps and the indexes limited to their units (`filtered`). None
        when a write moved a collection past the version."""
        held = []
        for collection_id, name, indexes in sources:
            state = self._state(collection_id, name, indexes.version, counter)
            if state is None:
                return None
            if where is not None:
                state, indexes = self._filtered_source(collection_id, state, indexes, where)
            held.append((state, indexes))
        return held

    def _filtered_source(
        self, collection_id: int, state: PackingState, indexes: CollectionIndexes, where: Filter
    ) -> tuple[PackingState, CollectionIndexes]:
        key = (collection_id, state.version, state.tokenizer, where.key)
        filtered = self._filtered.get(
            key, lambda: filtered_state(state, where, get_token_counter(state.tokenizer))
        )
        if filtered is state:
            return state, indexes  # every document kept: the whole indexes are its own
        units = self.kept_units(
            collection_id, state.version, where, functools.partial(kept_units, filtered)
        )
        return filtered, indexes.within(units)

    def _filtered_bytes(self, key: tuple[int, int, str, str], state: PackingState) -> int:
        """What a filtered state holds of its own: nothing when the filter kept every
        document (it is the collection's state)."""
        return 0 if state is self._states.get(key[:3]) else state_bytes(state)

    def kept_units(
        self, collection_id: int, version: int, where: Filter, build: Callable[[], KeptUnits]
    ) -> KeptUnits:
        """The units `where` keeps in a collection at `version`, shared by packs and searches
        (built by `build` when none has built them yet). What the indexes derived from the
        sets since the last call is weighed now, against the cache's bound."""
        key = (collection_id, version, where.key)
        found = self._kept.get(key, build)
        self._kept.trim(keep=key)
        return found

    def state(
        self, collection_id: int, name: str, version: int, tokenizer: str
    ) -> PackingState | None:
        """The shared packing state of a collection at `version` in `tokenizer`, loaded now
        as a pack would load it when none is held (None when a write moved the database past
        `version`): for diagnostics and benchmarks that time a state load apart."""
        return self._state(collection_id, name, version, get_token_counter(tokenizer))

    @property
    def window_cache(self) -> WindowCache:
        """The finished windows kept for repeated requests (their `bytes`; `clear()`)."""
        return self._windows

    def prepare(self, collection_id: int, version: int) -> bool:
        """Load `version`'s states, in every tokenizer one is held in, before the version is
        published: the writer pays for them and readers never wait. False when one could not
        be loaded (another process moved the collection past `version` meanwhile)."""
        with self._lock:
            held = {(k[2], s.name) for k, s in self._states.items() if k[0] == collection_id}
        with collections_batched():
            loaded = [
                self._state(collection_id, name, version, get_token_counter(tokenizer))
                for tokenizer, name in held
            ]
        return all(state is not None for state in loaded)

    def forget(self, collection_id: int) -> None:
        """Drop all that is held for a deleted collection: SQLite hands its id to the next
        collection created, whose versions start again at 1."""
        with self._lock:
            for key in [k for k in self._states if k[0] == collection_id]:
                del self._states[key]
        self._windows.discard_if(lambda key: key.names(collection_id))
        self._filtered.discard_if(lambda key: key[0] == collection_id)
        self._kept.discard_if(lambda key: isinstance(key, tuple) and key[0] == collection_id)

    def _lossless(
        self,
        versions: tuple[tuple[int, int], ...],
        states: list[PackingState],
        request: PackRequest,
        counter: TokenCounter,
    ) -> Window | None:
        """The whole collection verbatim, when it fits: the same for every question, so it is
        rendered once per version and answered without embedding or searching anything."""
        where = request.where.key if request.where is not None else None
        key = WindowKey.lossless(versions, counter.name, request.headers, where)
        parts = [Part(state=state, corpus=state.corpus) for state in states]
        # The rule pack_parts applies, whatever is cached: the estimate and the exact count
        # both within the budget (the same request must give the same window everywhere).
        if lossless_estimate(parts, request.headers) > request.budget:
            return None
        window = self._windows.get(key)
        if window is None:
            window = lossless_window(parts, request, counter)
            assert window is not None  # the estimate fits
            self._windows.put(key, window)
        if window.tokens > request.budget:
            return None
        return replace(window, budget=request.budget, query=request.query)

    def _state(
        self, collection_id: int, name: str, version: int, counter: TokenCounter
    ) -> PackingState | None:
        """The shared state at `version`, or None when a write moved the database past it."""
        key = (collection_id, version, counter.name)
        state = self._states.get(key)
        if state is not None:
            return state
        with self._lock:
            gate = self._loading.setdefault(key, threading.Lock())
        # One request loads a new version's state; the others wait for it rather than each
        # reading and counting the whole collection at once.
        with gate:
            state = self._states.get(key) or self._load(key, name)
        with self._lock:
            self._loading.pop(key, None)
        return state

    def _load(self, key: tuple[int, int, str], name: str) -> PackingState | None:
        collection_id, version, tokenizer = key
        # Versions only grow, one per committed write: the same version before and after the
        # reads means every row read belongs to it.
        if self._version(collection_id, name) != version:
            return None
        # The latest state of this collection in this tokenizer lends its counts: only the
        # texts a write added are counted, so a new version loads in a fraction of the time.
        previous = self._latest(collection_id, tokenizer)
        try:
            state = load_state(
                self._sessions,
                collection_id,
                name,
                version,
                get_token_counter(tokenizer),
                previous=previous,
                saved=self._saved_counts(collection_id, tokenizer),
                texts=self._document_texts(collection_id),
            )
        except Exception:
            # The reads are separate statements (SQLite gives them no common snapshot): a
            # write committed between two of them can leave rows that do not fit together.
            # That is a retry, not an error; with the version unchanged it is a real bug.
            if self._version(collection_id, name) != version:
                return None
            raise
        if self._version(collection_id, name) != version:
            return None
        with self._lock:
            self._states[key] = state
            # The version before this one stays: readers go on packing it until this one is
            # published (`prepare`). Older ones are no longer asked for. Those in other
            # tokenizers stay until their own next version replaces them: they lend it counts.
            held = sorted(k for k in self._states if k[0] == collection_id and k[2] == tokenizer)
            dropped = set(held[:-2])
            for old in dropped:
                del self._states[old]
            # Their filtered states go with them: they read the same document texts.
            self._filtered.discard_if(lambda key: key[:3] in dropped)
            in_use = [
                view.text_hash
                for (cid, _, _), held_state in self._states.items()
                if cid == collection_id
                for view in held_state.documents
            ]
        # The units filters keep at versions before the previous one are no longer searched.
        self._kept.discard_if(lambda k: _older(k, collection_id, version - 1))
        texts = self._document_texts(collection_id)
        if texts is not None:
            texts.sweep(in_use)
        # Costed in the default header style now: the load, not a reader, pays for it.
        state.styled(HEADER_STYLES[0])
        piece_counts.count_lines_in_background(state, get_token_counter(tokenizer))
        return state

    def _document_texts(self, collection_id: int) -> DocumentTexts | None:
        """Where the collection's states read document texts from (None: held in memory)."""
        if self._counts_folder is None:
            return None
        with self._lock:
            texts = self._texts.get(collection_id)
            if texts is None:
                texts = DocumentTexts(
                    self._counts_folder(collection_id),
                    functools.partial(self._read_texts, collection_id),
                    self._text_cache,
                )
                self._texts[collection_id] = texts
            return texts

    def _read_texts(self, collection_id: int, document_ids: Sequence[int]) -> dict[int, str]:
        with self._sessions() as session:
            return repository.document_texts_by_id(session, collection_id, document_ids)

    def _saved_counts(self, collection_id: int, tokenizer: str) -> SavedCounts | None:
        if self._counts_folder is None:
            return None
        return SavedCounts(self._counts_folder(collection_id), tokenizer)

    def _latest(self, collection_id: int, tokenizer: str) -> PackingState | None:
        """The highest-version state held for this collection and tokenizer, if any."""
        with self._lock:
            held = [k for k in self._states if k[0] == collection_id and k[2] == tokenizer]
            return self._states[max(held)] if held else None

    def _version(self, collection_id: int, name: str) -> int:
        return repository.index_version_now(self._sessions, collection_id, name)


def _older(key: object, collection_id: int, version: int) -> bool:
    """Whether a `KeptCache` key ((collection id, version, filter key)) is of this collection
    at a version before `version`."""
    return isinstance(key, tuple) and key[0] == collection_id and key[1] < version
