"""The facade shared by the library, the CLI and the REST API: `open`, `Store`, `Collection`.

It wires storage, token counting, embedding and indexes together and delegates; the work is
done in the component packages.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from windowpack.budget.tokens import get_token_counter
from windowpack.config import DEFAULT_STORE, StoreConfig
from windowpack.errors import (
    CollectionNotFoundError,
    ConflictError,
    DocumentNotFoundError,
    InvalidArgumentError,
    StoreNotFoundError,
)
from windowpack.ingest import (
    IngestTarget,
    ProgressCallback,
    delete_document,
    ingest_documents,
    rebuild_tree,
)
from windowpack.packing import Packer, PackRequest, Source, validate_pack
from windowpack.retrieval.conversation import conversation_document
from windowpack.retrieval.embedder import Embedder, Vectors, get_embedder
from windowpack.retrieval.embedding_cache import content_hash, embed_with_cache
from windowpack.retrieval.indexes import IndexStore
from windowpack.retrieval.llama_documents import from_llama_documents
from windowpack.retrieval.parsing import parse_paths
from windowpack.retrieval.search import QueryEmbeddingCache, hybrid_search, validate_search
from windowpack.storage import repository
from windowpack.storage.api_keys import ApiKeys
from windowpack.storage.database import (
    create_database_engine,
    current_revision,
    migrate,
    session_factory,
    sqlite_url,
)
from windowpack.storage.schema import CollectionRow
from windowpack.summarizer.base import Summarizer
from windowpack.summarizer.extractive import ExtractiveSummarizer
from windowpack.summarizer.overview import TreeNode, TreeOverview, tree_node, tree_overview
from windowpack.types import (
    CollectionStats,
    Document,
    DocumentInfo,
    Hit,
    IngestReport,
    Span,
    Window,
)

_COLLECTION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_DATABASE_FILE = "windowpack.db"


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
    extractive one, no LLM). `root` is the folder file ids are relative to (`Store.root`).
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
        self._extractive = ExtractiveSummarizer()
        self.summarizer: Summarizer = summarizer or self._extractive
        self.url = url
        self.root = Path(os.path.abspath(root or Path.cwd()))
        """File ids are paths relative to this folder (`Collection.add_files`): by default the
        folder holding an embedded store's folder, or the working directory when a database
        URL is opened."""
        self._engine = create_database_engine(url)
        if not create and current_revision(self._engine) is None:
            shown = self._engine.url.render_as_string(hide_password=True)
            self._engine.dispose()
            raise StoreNotFoundError(shown, "the database holds no windowpack store")
        migrate(self._engine)
        self._sessions = session_factory(self._engine)
        self._embedder = get_embedder(config.embedder, batch_size=config.embed_batch_size)
        self._indexes = IndexStore(
            index_dir, self._sessions, self._embedder, ann_threshold=config.ann_threshold
        )
        self._query_vectors = QueryEmbeddingCache(self._embedder)
        self._packer = Packer(self._sessions)
        self._write_lock = threading.Lock()
        self._api_keys = ApiKeys(self._sessions)

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
        with self._sessions() as session:
            row = repository.get_collection(session, name)
        if row is not None:
            self._check_settings(row, tokenizer, chunk_tokens)
            return Collection(self, row.id, row.name, row.tokenizer, row.chunk_tokens)
        if not create:
            raise CollectionNotFoundError(name, existing=self.collections())
        self._check_new_settings(tokenizer, chunk_tokens)
        return Collection(
            self,
            None,
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
    ) -> Window:
        """One window over several collections, dividing the budget by relevance (§4.7).

        All sources compete for one budget: a collection with nothing relevant gives its
        share back. Options as for `Collection.pack`.
        """
        if not collections:
            raise InvalidArgumentError("collections", "name at least one collection")
        request = PackRequest(
            query=query,
            budget=budget,
            tokenizer=tokenizer,
            overview_tokens=overview_tokens,
            align=align,
        )
        validate_pack(request)
        ids = [
            (self.collection(name, create=False)._id, name) for name in dict.fromkeys(collections)
        ]

        def sources() -> list[Source]:
            return [(cid, name, self._indexes.current(cid)) for cid, name in ids]

        return self._packer.pack(
            sources, request, query_vectors=self._query_vectors, writes_paused=self._write_lock
        )

    def create_collection(
        self, name: str, *, tokenizer: str | None = None, chunk_tokens: int | None = None
    ) -> Collection:
        """Create the collection `name`; a `ConflictError` if it exists already."""
        _check_collection_name(name)
        with self._write_lock, self._sessions.begin() as session:
            if repository.get_collection(session, name) is not None:
                raise ConflictError(f"collection {name!r} already exists")
            row = self._create_collection_row(session, name, tokenizer, chunk_tokens)
            return Collection(self, row.id, row.name, row.tokenizer, row.chunk_tokens)

    def collections(self) -> list[str]:
        """Names of every collection, sorted."""
        with self._sessions() as session:
            return [row.name for row in repository.list_collections(session)]

    def stats(self) -> list[CollectionStats]:
        """Every collection's settings and size, by name (for listings: no embedder needed)."""
        with self._sessions() as session:
            return [_stats(session, row) for row in repository.list_collections(session)]

    def index_versions(self) -> dict[str, int]:
        """Each collection's current index version, by name."""
        with self._sessions() as session:
            return {row.name: row.index_version for row in repository.list_collections(session)}

    @property
    def embedder(self) -> Embedder:
        """The store's embedding model (shared per process), for embedding queries alike."""
        return self._embedder

    @property
    def window_cache_hits(self) -> int:
        """Packs answered from the window cache since the store was opened."""
        return self._packer.cache_hits

    @property
    def api_keys(self) -> ApiKeys:
        """The REST service's API keys, stored hashed in this store's database."""
        return self._api_keys

    def delete_collection(self, name: str) -> None:
        """Delete a collection, its documents and its index files."""
        with self._write_lock, self._sessions.begin() as session:
            row = repository.get_collection(session, name)
            if row is None:
                raise CollectionNotFoundError(name, existing=self.collections())
            collection_id = row.id
            session.delete(row)
        self._indexes.forget(collection_id)

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _existing_row(self, name: str) -> CollectionRow:
        """The collection's row; not there is a `CollectionNotFoundError` naming those that are."""
        with self._sessions() as session:
            row = repository.get_collection(session, name)
        if row is None:
            raise CollectionNotFoundError(name, existing=self.collections())
        return row

    def _row_for_write(self, name: str, tokenizer: str, chunk_tokens: int) -> CollectionRow:
        """The collection's row, created now if this is its first write (under the write lock)."""
        with self._sessions.begin() as session:
            row = repository.get_collection(session, name)
            if row is None:
                row = self._create_collection_row(session, name, tokenizer, chunk_tokens)
            self._check_settings(row, tokenizer, chunk_tokens)
            return row

    def _check_new_settings(self, tokenizer: str | None, chunk_tokens: int | None) -> None:
        get_token_counter(tokenizer or self.config.tokenizer)  # fail now, naming the tokenizer
        if chunk_tokens is not None:
            StoreConfig(chunk_tokens=chunk_tokens)  # same validation as the store option

    def _create_collection_row(
        self, session: Any, name: str, tokenizer: str | None, chunk_tokens: int | None
    ) -> CollectionRow:
        tokenizer = tokenizer or self.config.tokenizer
        self._check_new_settings(tokenizer, chunk_tokens)
        return repository.create_collection(
            session,
            name=name,
            tokenizer=tokenizer,
            embedder=self._embedder.model_id,
            chunk_tokens=chunk_tokens or self.config.chunk_tokens,
        )

    def _check_settings(
        self, row: CollectionRow, tokenizer: str | None, chunk_tokens: int | None
    ) -> None:
        if row.embedder != self._embedder.model_id:
            raise ConflictError(
                f"collection {row.name!r} was built with embedder {row.embedder!r}; "
                f"open the store with StoreConfig(embedder={row.embedder!r})"
            )
        if tokenizer is not None and tokenizer != row.tokenizer:
            raise ConflictError(f"collection {row.name!r} uses tokenizer {row.tokenizer!r}")
        if chunk_tokens is not None and chunk_tokens != row.chunk_tokens:
            raise ConflictError(f"collection {row.name!r} uses chunk_tokens={row.chunk_tokens}")


class Collection:
    """A named set of documents with its own tokenizer, chunk size and indexes."""

    def __init__(
        self,
        store: Store,
        collection_id: int | None,
        name: str,
        tokenizer: str,
        chunk_tokens: int,
    ) -> None:
        self._store = store
        self._known_id = collection_id  # None until the collection's first write creates it
        self.name = name
        self.tokenizer = tokenizer
        self.chunk_tokens = chunk_tokens

    @property
    def _id(self) -> int:
        """The row id; reading a collection that no write has created yet is not found."""
        if self._known_id is None:
            self._adopt(self._store._existing_row(self.name))
        assert self._known_id is not None
        return self._known_id

    def _adopt(self, row: CollectionRow) -> None:
        self._known_id = row.id
        self.tokenizer, self.chunk_tokens = row.tokenizer, row.chunk_tokens

    def _created(self) -> None:
        """Create the collection if this is its first write (the caller holds the write lock)."""
        if self._known_id is None:
            self._adopt(self._store._row_for_write(self.name, self.tokenizer, self.chunk_tokens))

    def add(
        self, documents: Iterable[Document | str], *, progress: ProgressCallback | None = None
    ) -> IngestReport:
        """Add documents in one transaction; a document whose id exists is replaced (upsert)."""
        items = [doc if isinstance(doc, Document) else Document(text=doc) for doc in documents]
        return self._ingest(items, progress=progress)

    def add_llama_documents(
        self, documents: Iterable[Any], *, progress: ProgressCallback | None = None
    ) -> IngestReport:
        """Add llama-index `Document`s, keeping their `id_` (so re-adding upserts) and metadata.

        The title comes from a `title` or `file_name` metadata key. llama-index itself is not
        needed here: the documents are read by their attributes.
        """
        return self._ingest(from_llama_documents(documents), progress=progress)

    def add_files(
        self,
        paths: Sequence[str | os.PathLike[str]],
        *,
        progress: ProgressCallback | None = None,
        root: str | os.PathLike[str] | None = None,
    ) -> IngestReport:
        """Parse files and folders and add them; files skipped inside folders are reported.

        Ids are the files' paths relative to `root` (default: `Store.root`, the folder that
        holds the store folder), whatever the working directory; a file outside it keeps its
        absolute path. Markdown and HTML files are titled by their first level-1 heading.
        """
        base = Path(root) if root is not None else self._store.root
        parsed = parse_paths(paths, max_bytes=self._store.config.max_file_bytes, root=base)
        return self._ingest(parsed.documents, progress=progress, skipped=parsed.skipped)

    def add_conversation(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        id: str | None = None,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> IngestReport:
        """Add a chat as one document; each turn (request and its reply) is one unit."""
        document = conversation_document(messages, id=id, title=title, metadata=metadata)
        return self._ingest([document], progress=None)

    def search(self, query: str, k: int = 10, *, include_summaries: bool = False) -> list[Hit]:
        """The k most relevant verbatim chunks, best first (dense + BM25, fused by z-scores).

        With `include_summaries=True` summary-tree nodes compete too (`Hit.kind`, `Hit.level`).
        """
        validate_search(query, k)
        store = self._store
        return hybrid_search(
            query,
            k,
            indexes=store._indexes.current(self._id),
            query_vectors=store._query_vectors,
            sessions=store._sessions,
            include_summaries=include_summaries,
        )

    def pack(
        self,
        query: str,
        *,
        budget: int,
        tokenizer: str = "o200k_base",
        overview_tokens: int | None = None,
        align: bool | int = False,
    ) -> Window:
        """The best window for `query` in at most `budget` tokens of `tokenizer` (design §4).

        The most relevant chunks verbatim, summaries of the rest, gap markers for what is left
        out, in document order; a query-independent overview first (`overview_tokens` caps it;
        default: an eighth of the budget, at most 4,096), padded to a multiple of 256 tokens
        with `align=True`. `align=N` (e.g. 1024, see `PROMPT_CACHE_MINIMUMS`) also makes that
        tier at least N tokens, filled with more overview first, when N is at most half the
        budget; `window.prefix_cache()` says which providers' minimums it reaches. The same
        index version and request give the same bytes (cached).
        """
        store = self._store
        request = PackRequest(
            query=query,
            budget=budget,
            tokenizer=tokenizer,
            overview_tokens=overview_tokens,
            align=align,
        )
        validate_pack(request)

        def sources() -> list[Source]:
            return [(self._id, self.name, store._indexes.current(self._id))]

        return store._packer.pack(
            sources, request, query_vectors=store._query_vectors, writes_paused=store._write_lock
        )

    def delete(self, document_id: str) -> None:
        """Delete one document by its id (its summaries go, the collection levels regroup)."""
        with self._store._write_lock:
            delete_document(document_id, self.name, self._target(self._store.summarizer))

    def tree(self) -> TreeOverview:
        """The summary tree's shape: per level, node counts and token totals."""
        with self._store._sessions() as session:
            return tree_overview(session, self._id)

    def node(self, node_id: int) -> TreeNode:
        """One summary node: its text, span, parent and children."""
        with self._store._sessions() as session:
            return tree_node(session, self._id, node_id, collection=self.name)

    def rebuild_tree(
        self, summarizer: Summarizer | None = None, *, progress: ProgressCallback | None = None
    ) -> IngestReport:
        """Rebuild every summary node with `summarizer` (default: the store's), atomically."""
        with self._store._write_lock:
            return rebuild_tree(self._target(summarizer or self._store.summarizer), progress)

    def get(self, document_id: str) -> Document:
        """The stored document with this id."""
        with self._store._sessions() as session:
            rows = repository.documents_by_external_id(session, self._id, [document_id])
        if document_id not in rows:
            raise DocumentNotFoundError(document_id, self.name)
        row = rows[document_id]
        units = [Span(start=start, end=end) for start, end in row.units] if row.units else None
        return Document(
            text=row.text,
            title=row.title,
            id=row.external_id,
            metadata=dict(row.meta),
            kind=row.kind,  # type: ignore[arg-type]
            units=units,
            source=row.source,
        )

    def documents(self, *, offset: int = 0, limit: int | None = None) -> list[DocumentInfo]:
        """Stored documents in collection order, without their text."""
        with self._store._sessions() as session:
            rows = repository.list_documents(session, self._id, offset=offset, limit=limit)
            return [
                DocumentInfo(
                    id=row.external_id,
                    title=row.title,
                    kind=row.kind,
                    tokens=row.token_count,
                    chunks=len(row.chunks),
                    position=row.position,
                    metadata=dict(row.meta),
                )
                for row in rows
            ]

    def stats(self) -> CollectionStats:
        """Settings and size of the collection: documents, chunks, tokens, index version."""
        row = self._store._existing_row(self.name)
        with self._store._sessions() as session:
            return _stats(session, row)

    def chunk_vectors(self) -> tuple[list[str], Vectors]:
        """Every chunk's text in document order, with the vector it was indexed under.

        For callers comparing other retrievers on the same chunks and vectors (the evals'
        baselines): the vectors come from the embedding cache, so nothing is embedded again.
        """
        sessions = self._store._sessions
        with sessions() as session:
            _, texts = repository.chunk_texts_and_ids(session, self._id)
        vectors, _ = embed_with_cache(
            sessions, self._store.embedder, texts, [content_hash(t) for t in texts]
        )
        return texts, vectors

    def __len__(self) -> int:
        with self._store._sessions() as session:
            return repository.count_documents(session, self._id)

    @property
    def index_version(self) -> int:
        with self._store._sessions() as session:
            return repository.index_version(session, self._id)

    def _ingest(
        self,
        documents: Sequence[Document],
        *,
        progress: ProgressCallback | None,
        skipped: dict[str, str] | None = None,
    ) -> IngestReport:
        # One writer per store at a time keeps index versions and deltas in step.
        with self._store._write_lock:
            self._created()
            target = self._target(self._store.summarizer)
            return ingest_documents(documents, target, progress=progress, skipped=skipped)

    def _target(self, summarizer: Summarizer) -> IngestTarget:
        store = self._store
        return IngestTarget(
            collection_id=self._id,
            counter=get_token_counter(self.tokenizer),
            chunk_tokens=self.chunk_tokens,
            embedder=store._embedder,
            indexes=store._indexes,
            sessions=store._sessions,
            summarizer=summarizer,
            fallback_summarizer=store._extractive,
            fanout=store.config.fanout,
        )


def _stats(session: Any, row: CollectionRow) -> CollectionStats:
    documents, chunks, tokens = repository.collection_totals(session, row.id)
    return CollectionStats(
        name=row.name,
        tokenizer=row.tokenizer,
        chunk_tokens=row.chunk_tokens,
        documents=documents,
        chunks=chunks,
        tokens=tokens,
        index_version=repository.index_version(session, row.id),
    )


def _check_collection_name(name: str) -> None:
    if not isinstance(name, str) or not _COLLECTION_NAME.match(name):
        raise InvalidArgumentError(
            "collection",
            f"{name!r} is not a valid name (letters, digits, '_', '.', '-'; up to 64 characters)",
        )
