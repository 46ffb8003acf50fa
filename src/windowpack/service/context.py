"""What a store's collections share: database sessions, embedder, indexes, packer, locks.

Built once per store (`StoreContext.connect`) and handed to every `Collection`, so that a
collection never reads the store's internals; the one pack path and the one search path live
here, with the checks of their arguments.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from windowpack.config import EvidenceSettings, StoreConfig
from windowpack.embed import Embedder, get_embedder
from windowpack.errors import (
    CollectionNotFoundError,
    ConflictError,
    EmbedderMismatchError,
    StoreNotFoundError,
)
from windowpack.filters import Filter, parse_filter
from windowpack.index import IndexStore, KeptUnits, VersionWatcher
from windowpack.ingest import IngestExecutor, IngestTarget, make_executor
from windowpack.pack import (
    Packer,
    PackRequest,
    SessionPlan,
    SessionState,
    SessionWindow,
    Source,
)
from windowpack.rerank import get_reranker
from windowpack.search import (
    QueryEmbeddingCache,
    check_query,
    check_search,
    hybrid_search,
    stored_kept_units,
)
from windowpack.storage import (
    CollectionRow,
    announce_change,
    create_database_engine,
    current_revision,
    migrate,
    repository,
    session_factory,
)
from windowpack.summarizer import ExtractiveSummarizer, Summarizer
from windowpack.text import get_token_counter
from windowpack.types import HEADER_STYLES, HeaderStyle, Hit, Window

Where = Mapping[str, Any] | Filter | None
"""A metadata filter as callers give it: Chroma's `where` shape, or one parsed already."""


@dataclass(frozen=True, kw_only=True)
class StoreContext:
    """What a store's collections share, wired once per store.

    One writer per store at a time (`write_lock`) keeps index versions and deltas in step;
    readers never take it, except a pack that writes keep outrunning (see `Packer.pack`).
    """

    config: StoreConfig
    engine: Engine
    sessions: sessionmaker[Session]
    embedder: Embedder
    indexes: IndexStore
    query_vectors: QueryEmbeddingCache
    packer: Packer
    write_lock: threading.Lock
    summarizer: Summarizer
    extractive: Summarizer
    root: Path
    """File ids are paths relative to this folder (`Collection.add_files`)."""
    executor: IngestExecutor
    """Where ingest parses, chunks and embeds (`StoreConfig.executor`); started on first use."""
    watcher: VersionWatcher | None
    """Keeps read collections at the versions other processes write (`watch_interval_s`)."""

    @classmethod
    def connect(
        cls,
        url: str,
        index_dir: Path,
        config: StoreConfig,
        summarizer: Summarizer | None,
        *,
        create: bool = True,
        root: Path | None = None,
    ) -> StoreContext:
        """Open the database at `url` (migrating it) and wire the parts around it.

        With `create=False` a database that holds no store is a `StoreNotFoundError`.
        """
        engine = create_database_engine(url)
        if not create and current_revision(engine) is None:
            shown = engine.url.render_as_string(hide_password=True)
            engine.dispose()
            raise StoreNotFoundError(shown, "the database holds no windowpack store")
        migrate(engine)
        sessions = session_factory(engine)
        embedder = get_embedder(config.embedder, batch_size=config.embed_batch_size)
        query_vectors = QueryEmbeddingCache(embedder)
        write_lock = threading.Lock()
        extractive = ExtractiveSummarizer()
        indexes = IndexStore(
            index_dir,
            sessions,
            embedder,
            ann_threshold=config.ann_threshold,
            snapshot_reads=config.snapshot_reads,
            sentence_index=config.sentence_index,
            language=config.language,
        )
        packer = Packer(
            sessions,
            query_vectors=query_vectors,
            writes_paused=write_lock,
            cache_bytes=config.window_cache_bytes,
            counts_folder=indexes.collection_dir,
            reranker=get_reranker(config.evidence.reranker, embedder=embedder),
        )
        # A new version's states load before it is current; a collection deleted elsewhere
        # is dropped (SQLite hands its id to the next collection).
        indexes.prepare_with(packer.prepare, packer.forget)
        interval = config.watch_interval_s
        watcher = VersionWatcher(engine, indexes, interval=interval).start() if interval else None
        return cls(
            config=config,
            engine=engine,
            sessions=sessions,
            embedder=embedder,
            indexes=indexes,
            query_vectors=query_vectors,
            packer=packer,
            write_lock=write_lock,
            summarizer=summarizer or extractive,
            extractive=extractive,
            root=Path(os.path.abspath(root or Path.cwd())),
            executor=make_executor(config),
            watcher=watcher,
        )

    def close(self) -> None:
        """Stop the watcher and the executor, and close the database connections."""
        if self.watcher is not None:
            self.watcher.close()
        self.executor.close()
        self.engine.dispose()

    def collection_names(self) -> list[str]:
        """Names of every collection, sorted."""
        with self.sessions() as session:
            return [row.name for row in repository.list_collections(session)]

    def collection_row(self, name: str) -> CollectionRow:
        """The collection's row; absent, a `CollectionNotFoundError` naming those that exist."""
        with self.sessions() as session:
            row = repository.get_collection(session, name)
        if row is None:
            raise CollectionNotFoundError(name, existing=self.collection_names())
        return row

    def row_for_write(
        self, name: str, tokenizer: str, chunk_tokens: int
    ) -> tuple[CollectionRow, bool]:
        """The collection's row, and whether it was created now, by this first write (caller
        holds the write lock)."""
        with self.sessions.begin() as session:
            row = repository.get_collection(session, name)
            created = row is None
            if row is None:
                row = self.create_collection_row(session, name, tokenizer, chunk_tokens)
            self.check_settings(row, tokenizer, chunk_tokens)
            return row, created

    def drop_unwritten(self, collection_id: int, name: str) -> None:
        """Delete the collection a first write created and then failed to fill, so a failed
        first write leaves no empty collection behind; one that anything was written to
        since (another process's write: a version, a document) is kept (caller holds the
        write lock)."""
        with self.sessions.begin() as session:
            row = session.get(CollectionRow, collection_id)
            if row is None or row.name != name or row.index_version != 0:
                return
            if repository.count_documents(session, collection_id) != 0:
                return
            session.delete(row)
            announce_change(session, collection_id)
        self.indexes.forget(collection_id)
        self.packer.forget(collection_id)

    def create_collection_row(
        self, session: Session, name: str, tokenizer: str | None, chunk_tokens: int | None
    ) -> CollectionRow:
        tokenizer = tokenizer or self.config.tokenizer
        self.check_new_settings(tokenizer, chunk_tokens)
        return repository.create_collection(
            session,
            name=name,
            tokenizer=tokenizer,
            embedder=self.embedder.model_id,
            chunk_tokens=chunk_tokens or self.config.chunk_tokens,
        )

    def check_new_settings(self, tokenizer: str | None, chunk_tokens: int | None) -> None:
        """A new collection's settings, checked before anything is created."""
        get_token_counter(tokenizer or self.config.tokenizer)  # fail now, naming the tokenizer
        if chunk_tokens is not None:
            StoreConfig(chunk_tokens=chunk_tokens)  # same validation as the store option

    def check_settings(
        self, row: CollectionRow, tokenizer: str | None, chunk_tokens: int | None
    ) -> None:
        """An existing collection asked for with settings: they must be its own."""
        if row.embedder != self.embedder.model_id:
            raise EmbedderMismatchError(row.name, row.embedder)
        if tokenizer is not None and tokenizer != row.tokenizer:
            raise ConflictError(f"collection {row.name!r} uses tokenizer {row.tokenizer!r}")
        if chunk_tokens is not None and chunk_tokens != row.chunk_tokens:
            raise ConflictError(f"collection {row.name!r} uses chunk_tokens={row.chunk_tokens}")

    def pack(
        self,
        collections: Sequence[tuple[int, str]],
        query: str,
        *,
        budget: int,
        tokenizer: str,
        overview_tokens: int | None,
        align: bool | int,
        evidence: EvidenceSettings | None = None,
        provider: str | None = None,
        headers: HeaderStyle = HEADER_STYLES[0],
        where: Where = None,
    ) -> Window:
        """The one pack path: a window over (collection id, name) pairs, checked once here."""
        check_query(query)
        request = self.pack_request(
            query=query,
            budget=budget,
            tokenizer=tokenizer,
            overview_tokens=overview_tokens,
            align=align,
            evidence=evidence,
            provider=provider,
            headers=headers,
            where=where,
        )
        return self.packer.pack(self._sources(collections), request)

    def pack_session(
        self,
        collections: Sequence[tuple[int, str]],
        query: str,
        plan: SessionPlan,
        state: SessionState | None,
    ) -> SessionWindow:
        """The one session pack path: `query` after `state`, over (collection id, name)."""
        check_query(query)
        return self.packer.pack_session(self._sources(collections), plan, query, state)

    def pack_request(
        self,
        *,
        budget: int,
        tokenizer: str,
        overview_tokens: int | None = None,
        align: bool | int = False,
        evidence: EvidenceSettings | None = None,
        provider: str | None = None,
        query: str = "",
        headers: HeaderStyle = HEADER_STYLES[0],
        where: Where = None,
    ) -> PackRequest:
        """A checked request with the store's evidence settings unless `evidence` is given;
        `where` (a metadata filter, `filters.parse_filter`) is checked here."""
        return PackRequest(
            where=parse_filter(where),
            query=query,
            budget=budget,
            tokenizer=tokenizer,
            overview_tokens=overview_tokens,
            align=align,
            evidence=evidence or self.config.evidence,
            provider=provider,
            headers=headers,
        )

    def _sources(self, collections: Sequence[tuple[int, str]]) -> Callable[[bool], list[Source]]:
        def sources(fresh: bool) -> list[Source]:
            return [
                (cid, name, self.indexes.current(cid, wait=fresh, name=name))
                for cid, name in collections
            ]

        return sources

    def search(
        self,
        collection: tuple[int, str],
        query: str,
        k: int,
        *,
        include_summaries: bool,
        where: Where = None,
    ) -> list[Hit]:
        """The one search path over (collection id, name), checked once here; with `where`,
        within the documents that metadata filter keeps."""
        check_search(query, k)
        kept_filter = parse_filter(where)
        collection_id, name = collection
        indexes = self.indexes.current(collection_id, name=name)
        kept = None
        if kept_filter is not None:
            kept = self.packer.kept_units(
                collection_id,
                indexes.version,
                kept_filter,
                lambda: self._stored_kept_units(collection, indexes.version, kept_filter),
            )
        return hybrid_search(
            query,
            k,
            indexes=indexes,
            kept=kept,
            query_vectors=self.query_vectors,
            sessions=self.sessions,
            include_summaries=include_summaries,
            settings=self.config.evidence,
        )

    def _stored_kept_units(
        self, collection: tuple[int, str], version: int, where: Filter
    ) -> KeptUnits:
        with self.sessions() as session:
            return stored_kept_units(session, collection, version, where)

    def ingest_target(
        self,
        *,
        collection_id: int,
        name: str,
        tokenizer: str,
        chunk_tokens: int,
        summarizer: Summarizer | None = None,
    ) -> IngestTarget:
        """What the ingest pipeline writes a collection with, given its row id and settings
        (the store's summarizer unless another is given)."""
        return IngestTarget(
            collection_id=collection_id,
            collection_name=name,
            counter=get_token_counter(tokenizer),
            chunk_tokens=chunk_tokens,
            embedder=self.executor.embedder(self.embedder),
            executor=self.executor,
            indexes=self.indexes,
            sessions=self.sessions,
            summarizer=summarizer or self.summarizer,
            fallback_summarizer=self.extractive,
            fanout=self.config.fanout,
        )
