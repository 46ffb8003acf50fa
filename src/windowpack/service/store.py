"""`open` and `Store`: a database of collections and the folder of their index files."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from windowpack.config import DEFAULT_STORE, EvidenceSettings, StoreConfig
from windowpack.embed import Embedder
from windowpack.errors import (
    CollectionNotFoundError,
    ConflictError,
    InvalidArgumentError,
    StoreNotFoundError,
)
from windowpack.index import IndexStore
from windowpack.ingest import IngestExecutor
from windowpack.pack import Packer
from windowpack.search import QueryEmbeddingCache
from windowpack.service.collection import Collection
from windowpack.service.context import StoreContext, Where
from windowpack.service.session import WindowSession, new_session
from windowpack.storage import (
    SESSION_TOKENS,
    ApiKeys,
    StoreSecrets,
    announce_change,
    repository,
    sqlite_url,
)
from windowpack.summarizer import Summarizer
from windowpack.types import (
    HEADER_STYLES,
    CollectionStats,
    HeaderStyle,
    Window,
)

_COLLECTION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_DATABASE_FILE = "windowpack.db"


# `Store.warm_up`'s pack: any question loads the same states; a small budget renders little.
WARM_UP_QUESTION = "warm-up"
WARM_UP_BUDGET = 1024


def open(
    target: str | os.PathLike[str] = DEFAULT_STORE,
    *,
    create: bool = True,
    index_dir: str | os.PathLike[str] | None = None,
    config: StoreConfig | None = None,
    summarizer: Summarizer | None = None,
    root: str | os.PathLike[str] | None = None,
) -> Store:
    """Open a store: a folder for the embedded default, or a database URL.

    A folder holds `windowpack.db` (SQLite, WAL) and the index files. A URL such as
    `postgresql+psycopg://...` needs `index_dir`, where the derived FAISS/BM25 files live.
    With `create=False` a store that is not there is a `StoreNotFoundError` (nothing is
    created); by default it is created. `summarizer` builds the summary tree (default: the
    extractive one, no LLM). `root` is the folder file ids are relative to (`Store.root`;
    default: the folder holding the store folder, or the working directory for a URL).
    """
    config = config or StoreConfig()
    text = os.fspath(target)
    if "://" in text:
        if index_dir is None:
            raise InvalidArgumentError("index_dir", f"is required with a database URL ({text})")
        base = Path(root) if root is not None else Path.cwd()
        return Store(text, Path(index_dir), config, summarizer, create=create, root=base)
    folder = Path(text)
    if folder.exists() and not folder.is_dir():
        raise InvalidArgumentError("target", f"{folder} exists and is not a folder")
    if not create and not (folder / _DATABASE_FILE).is_file():
        problem = "the folder has no windowpack.db" if folder.is_dir() else "no such folder"
        raise StoreNotFoundError(text, problem)
    folder.mkdir(parents=True, exist_ok=True)
    indexes = Path(index_dir) if index_dir is not None else folder / "indexes"
    base = Path(root) if root is not None else Path(os.path.abspath(folder)).parent
    url = sqlite_url(folder / _DATABASE_FILE)
    return Store(url, indexes, config, summarizer, create=create, root=base)


class Store:
    """A database of collections plus the folder of their derived index files."""

    def __init__(
        self,
        url: str,
        index_dir: Path,
        config: StoreConfig,
        summarizer: Summarizer | None = None,
        *,
        create: bool = True,
        root: Path | None = None,
    ) -> None:
        self.config = config
        self.url = url
        self._context = StoreContext.connect(
            url, index_dir, config, summarizer, create=create, root=root
        )
        self._api_keys = ApiKeys(self._context.sessions)

    @property
    def root(self) -> Path:
        """The folder file ids are relative to (`Collection.add_files`)."""
        return self._context.root

    @property
    def summarizer(self) -> Summarizer:
        """What builds the summary tree of every collection (default: extractive, no LLM)."""
        return self._context.summarizer

    def collection(
        self,
        name: str,
        *,
        create: bool = True,
        tokenizer: str | None = None,
        chunk_tokens: int | None = None,
    ) -> Collection:
        """The collection `name`; with `create=False` it must exist (else the error lists
        those that do).

        A new collection is created by its first write (`add`, `add_files`, ...), with
        `tokenizer` and `chunk_tokens`; until then reading it (search, pack, tree, ...) is a
        `CollectionNotFoundError`, so a misspelt name creates nothing.
        """
        _check_collection_name(name)
        context = self._context
        with context.sessions() as session:
            row = repository.get_collection(session, name)
        if row is not None:
            context.check_settings(row, tokenizer, chunk_tokens)
            return Collection.of_row(context, row)
        if not create:
            raise CollectionNotFoundError(name, existing=self.collections())
        context.check_new_settings(tokenizer, chunk_tokens)
        return Collection.pending(
            context,
            name,
            tokenizer or self.config.tokenizer,
            chunk_tokens or self.config.chunk_tokens,
        )

    def pack(
        self,
        query: str,
        *,
        collections: Sequence[str],
        budget: int,
        tokenizer: str = "o200k_base",
        overview_tokens: int | None = None,
        align: bool | int = False,
        evidence: EvidenceSettings | None = None,
        provider: str | None = None,
        headers: HeaderStyle = HEADER_STYLES[0],
        where: Where = None,
    ) -> Window:
        """One window over several collections, dividing the budget by relevance (§4.7).

        All sources compete for one budget: a collection with nothing relevant gives its
        share back. `where` filters the documents of every collection named. Options as
        for `Collection.pack`.
        """
        if not collections:
            raise InvalidArgumentError("collections", "name at least one collection")
        named = [self.collection(name, create=False) for name in dict.fromkeys(collections)]
        return self._context.pack(
            [(col.collection_id, col.name) for col in named],
            query,
            budget=budget,
            tokenizer=tokenizer,
            overview_tokens=overview_tokens,
            align=align,
            evidence=evidence,
            provider=provider,
            headers=headers,
            where=where,
        )

    def session(
        self,
        *,
        collections: Sequence[str],
        budget: int,
        tokenizer: str = "o200k_base",
        provider: str | None = None,
        overview_tokens: int | None = None,
        first_tokens: int | None = None,
        follow_up_tokens: int | None = None,
        token: str | None = None,
        where: Where = None,
        scope: str = "",
    ) -> WindowSession:
        """A session of follow-up questions over several collections (`Collection.session`);
        `where` filters the documents of every collection named, `scope` is who its tokens
        are signed for."""
        if not collections:
            raise InvalidArgumentError("collections", "name at least one collection")
        named = [self.collection(name, create=False) for name in dict.fromkeys(collections)]
        return new_session(
            self._context,
            [(col.collection_id, col.name) for col in named],
            budget=budget,
            tokenizer=tokenizer,
            provider=provider,
            overview_tokens=overview_tokens,
            first_tokens=first_tokens,
            follow_up_tokens=follow_up_tokens,
            token=token,
            where=where,
            scope=scope,
        )

    def create_collection(
        self, name: str, *, tokenizer: str | None = None, chunk_tokens: int | None = None
    ) -> Collection:
        """Create the collection `name`; a `ConflictError` if it exists already."""
        _check_collection_name(name)
        with self._context.write_lock, self._context.sessions.begin() as session:
            if repository.get_collection(session, name) is not None:
                raise ConflictError(f"collection {name!r} already exists")
            row = self._context.create_collection_row(session, name, tokenizer, chunk_tokens)
            return Collection.of_row(self._context, row)

    def collections(self) -> list[str]:
        """Names of every collection, sorted."""
        return self._context.collection_names()

    def stats(self) -> list[CollectionStats]:
        """Every collection's settings and size, by name (for listings: no embedder needed)."""
        with self._context.sessions() as session:
            rows = repository.list_collections(session)
        return [Collection.of_row(self._context, row).stats() for row in rows]

    def index_versions(self) -> dict[str, int]:
        """Each collection's current index version, by name."""
        with self._context.sessions() as session:
            return {row.name: row.index_version for row in repository.list_collections(session)}

    @property
    def embedder(self) -> Embedder:
        """The store's embedding model (shared per process), for embedding queries alike."""
        return self._context.embedder

    @property
    def window_cache_hits(self) -> int:
        """Packs answered from the window cache since the store was opened."""
        return self._context.packer.cache_hits

    # The store's parts, for diagnostics and benchmarks that read or time one of them apart
    # (a state load, an index load, the rows a write left); an application needs none of them.

    @property
    def engine(self) -> Engine:
        """The database engine (its URL, its dialect; workers take their leases through it)."""
        return self._context.engine

    @property
    def sessions(self) -> sessionmaker[Session]:
        """The database's session factory (read rows with `windowpack.storage.repository`)."""
        return self._context.sessions

    @property
    def indexes(self) -> IndexStore:
        """The collections' current indexes (`IndexStore.current(collection_id)`)."""
        return self._context.indexes

    @property
    def query_vectors(self) -> QueryEmbeddingCache:
        """The recent questions' vectors that search and pack share (`get` embeds one now)."""
        return self._context.query_vectors

    @property
    def packer(self) -> Packer:
        """What packs windows: per-version packing states and the window cache."""
        return self._context.packer

    @property
    def executor(self) -> IngestExecutor:
        """Where ingest parses, chunks and embeds (`StoreConfig.executor`)."""
        return self._context.executor

    def rotate_session_secret(self) -> None:
        """Replace the secret that signs session tokens: tokens signed before are refused
        from now on, by every process on this store (`service.session_tokens`)."""
        StoreSecrets(self._context.sessions).rotate(SESSION_TOKENS)

    @property
    def api_keys(self) -> ApiKeys:
        """The REST service's API keys, stored hashed in this store's database."""
        return self._api_keys

    def delete_collection(self, name: str, *, only_if_unwritten: bool = False) -> None:
        """Delete a collection, its documents and its index files.

        `only_if_unwritten`: only if nothing was ever written to it (no version published,
        no document), quietly keeping it otherwise or when it is gone: what a first write
        that never finished (an ingest job given up after its worker was killed) leaves."""
        if only_if_unwritten:
            with self._context.sessions() as session:
                row = repository.get_collection(session, name)
            if row is not None:
                with self._context.write_lock:
                    self._context.drop_unwritten(row.id, name)
            return
        with self._context.write_lock, self._context.sessions.begin() as session:
            row = repository.get_collection(session, name)
            if row is None:
                raise CollectionNotFoundError(name, existing=self.collections())
            collection_id = row.id
            session.delete(row)
            announce_change(session, collection_id)  # replicas let it go
        self._context.indexes.forget(collection_id)
        self._context.packer.forget(collection_id)

    def warm_up(
        self, *, tokenizer: str = "o200k_base", stop: threading.Event | None = None
    ) -> list[str]:
        """Load what the first requests would wait for: the query model, then each
        collection's indexes and packing state in `tokenizer` (one small pack of a fixed
        question each, which is cached like any other). Returns the collections warmed, in
        order; one deleted meanwhile is skipped; `stop` set ends it between collections.
        A server runs this in the background at start (`ApiSettings.warm_up`)."""
        warmed: list[str] = []
        self._context.query_vectors.get(WARM_UP_QUESTION)
        for name in self.collections():
            if stop is not None and stop.is_set():
                break
            try:
                collection = self.collection(name, create=False)
                collection.pack(WARM_UP_QUESTION, budget=WARM_UP_BUDGET, tokenizer=tokenizer)
            except CollectionNotFoundError:  # deleted since the listing (or while packing)
                continue
            warmed.append(name)
        return warmed

    def close(self) -> None:
        """Stop background work (version watcher, Ray workers) and close the database."""
        self._context.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _check_collection_name(name: str) -> None:
    if not isinstance(name, str) or not _COLLECTION_NAME.match(name):
        raise InvalidArgumentError(
            "collection",
            f"{name!r} is not a valid name (letters, digits, '_', '.', '-'; up to 64 characters)",
        )
