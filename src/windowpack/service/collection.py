"""`Collection`: a named set of documents with its own tokenizer, chunk size and indexes."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from windowpack.config import EvidenceSettings
from windowpack.documents import (
    conversation_document,
    from_llama_documents,
    parse_paths,
    transcript_document,
)
from windowpack.embed import Vectors, embed_with_cache
from windowpack.errors import (
    DocumentNotFoundError,
    InvalidArgumentError,
)
from windowpack.filters import parse_filter
from windowpack.ingest import (
    IngestTarget,
    ProgressCallback,
    delete_documents,
    ingest_documents,
    rebuild_tree,
)
from windowpack.service.context import StoreContext, Where
from windowpack.service.session import WindowSession, new_session
from windowpack.storage import CollectionRow, DocumentRow, repository
from windowpack.summarizer import Summarizer, tree_node, tree_overview
from windowpack.text import content_hash, storable
from windowpack.types import (
    HEADER_STYLES,
    CollectionStats,
    DeleteReport,
    Document,
    DocumentInfo,
    DocumentKind,
    HeaderStyle,
    Hit,
    IngestReport,
    Span,
    TreeNode,
    TreeOverview,
    Window,
)

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


class Collection:
    """A named set of documents with its own tokenizer, chunk size and indexes.

    A collection no write has created yet (`Store.collection` of a new name) is created by
    its first `add`, `add_files`, ...; reading it before is a `CollectionNotFoundError`.
    """

    def __init__(
        self,
        context: StoreContext,
        *,
        name: str,
        tokenizer: str,
        chunk_tokens: int,
        collection_id: int | None,
    ) -> None:
        """Built by `Store`: `collection_id` is None for a collection no write has created."""
        self._context = context
        self._known_id = collection_id
        self.name = name
        self.tokenizer = tokenizer
        self.chunk_tokens = chunk_tokens

    @classmethod
    def of_row(cls, context: StoreContext, row: CollectionRow) -> Collection:
        """The collection stored as `row`."""
        return cls(
            context,
            name=row.name,
            tokenizer=row.tokenizer,
            chunk_tokens=row.chunk_tokens,
            collection_id=row.id,
        )

    @classmethod
    def pending(
        cls, context: StoreContext, name: str, tokenizer: str, chunk_tokens: int
    ) -> Collection:
        """A collection its first write will create, with these settings."""
        return cls(
            context, name=name, tokenizer=tokenizer, chunk_tokens=chunk_tokens, collection_id=None
        )

    @property
    def collection_id(self) -> int:
        """The row id; reading a collection no write has created yet is not found."""
        if self._known_id is None:
            self._adopt(self._context.collection_row(self.name))
        assert self._known_id is not None
        return self._known_id

    def _adopt(self, row: CollectionRow) -> None:
        self._known_id = row.id
        self.tokenizer, self.chunk_tokens = row.tokenizer, row.chunk_tokens

    @contextlib.contextmanager
    def _reading(self) -> Iterator[Session]:
        """A session to read the collection's rows in, once the row of its id is checked to
        still be this collection: SQLite gives a deleted collection's id to the next one
        created, whose rows a stale handle would otherwise read as its own."""
        with self._context.sessions() as session:
            repository.index_version(session, self.collection_id, self.name)
            yield session

    def add(
        self, documents: Iterable[Document | str], *, progress: ProgressCallback | None = None
    ) -> IngestReport:
        """Add documents in one transaction; a document whose id exists is replaced (upsert)."""
        items = [doc if isinstance(doc, Document) else Document(text=doc) for doc in documents]
        return self._ingest(items, progress=progress)

    def add_llama_documents(
        self,
        documents: Iterable[Any],
        *,
        progress: ProgressCallback | None = None,
        root: str | os.PathLike[str] | None = None,
    ) -> IngestReport:
        """Add llama-index `Document`s, keeping their `id_` (so re-adding upserts) and metadata.

        A reader's file paths (`file_path`, and an id that is one) are named as `add_files`
        names files: relative to `root` (default: `Store.root`), absolute outside it. Text a
        reader left as HTML markup, a raw PDF or Markdown is parsed as `add_files` parses
        those files. The title is a `title` metadata key, else the HTML or Markdown title,
        else `file_name`. llama-index itself is not needed here: the documents are read by
        their attributes.
        """
        config = self._context.config
        converted = from_llama_documents(
            documents,
            root=Path(root) if root is not None else self._context.root,
            max_bytes=config.max_file_bytes,
            max_pdf_pages=config.max_pdf_pages,
        )
        return self._ingest(converted, progress=progress)

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
        base = Path(root) if root is not None else self._context.root
        config = self._context.config
        parsed = parse_paths(
            paths,
            max_bytes=config.max_file_bytes,
            root=base,
            max_pdf_pages=config.max_pdf_pages,
            parse_many=self._context.executor.parse_files,
        )
        return self._ingest(parsed.documents, progress=progress, skipped=parsed.skipped)

    def add_conversation(
        self,
        messages: Sequence[Mapping[str, Any]] | str,
        *,
        id: str | None = None,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
        progress: ProgressCallback | None = None,
    ) -> IngestReport:
        """Add a chat as one document; each turn (request and its reply) is one unit.

        `messages` is a list of `{role, content}` messages, or one transcript text whose
        messages start lines with their role (`User: ...`, `Assistant: ...`).
        """
        if isinstance(messages, str):
            document = transcript_document(messages, id=id, title=title, metadata=metadata)
        else:
            document = conversation_document(messages, id=id, title=title, metadata=metadata)
        return self._ingest([document], progress=progress)

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        include_summaries: bool = False,
        where: Where = None,
    ) -> list[Hit]:
        """The k most relevant verbatim chunks, best first (dense + BM25, fused by z-scores).

        With `include_summaries=True` summary-tree nodes compete too (`Hit.kind`, `Hit.level`).
        `where` (Chroma's shape, `{"team": "ops", "year": {"$gte": 2020}}`, or a parsed
        `Filter`; docs/library.md) keeps the documents whose metadata it matches: every
        index is searched within them, so a filter keeping few documents still gives k hits
        when they hold k chunks, and one keeping none gives [].
        """
        return self._context.search(
            (self.collection_id, self.name),
            query,
            k,
            include_summaries=include_summaries,
            where=where,
        )

    def pack(
        self,
        query: str,
        *,
        budget: int,
        tokenizer: str = "o200k_base",
        overview_tokens: int | None = None,
        align: bool | int = False,
        evidence: EvidenceSettings | None = None,
        provider: str | None = None,
        headers: HeaderStyle = HEADER_STYLES[0],
        where: Where = None,
    ) -> Window:
        """The best window for `query` in at most `budget` tokens of `tokenizer` (design §4).

        The most relevant chunks verbatim, summaries of the rest, gap markers for what is left out,
        in document order; a query-independent overview first when `overview_tokens` asks for one
        (default: none; it earns no recall, docs/evidence.md), padded to a multiple of 256 tokens
        with `align=True`. `align=N` (e.g. 1024, see `PROMPT_CACHE_MINIMUMS`) also makes that tier
        at least N tokens, filled with more overview first, when N is at most half the budget;
        `window.prefix_cache()` says which providers' minimums it reaches. The same index version
        and request give the same bytes (cached). `evidence` turns this pack's
        evidence stages on or off (default: the store's `StoreConfig.evidence`;
        docs/evidence.md). `provider` (a key of `PROMPT_CACHE_MINIMUMS`) makes the stable tier
        reach that provider's cache minimum when at most half the budget allows it;
        `window.cache_plan(provider)` then lays the window out as that provider's request.
        `headers` is what the window says around its passages: "compact" (the default) each
        document's title once and of a passage only the heading path its text does not show,
        "full" every passage's document, chunks and characters, "none" nothing (the
        provenance is in `window.items` in every style; `HeaderStyle`). A text the
        collection holds under several document ids is shown once, under the first; its
        items name the others (`WindowItem.duplicates`). `where` packs only the documents
        whose metadata the filter keeps (as for `search`), with their own summaries: the
        collection-level ones, built from every document, are left out; a filter keeping
        none gives an empty window whose `reason` says so.
        """
        return self._context.pack(
            [(self.collection_id, self.name)],
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
        """A session of follow-up questions whose windows extend each other (docs/sessions.md).

        The first question gets a window of `first_tokens` (default: half the budget), each
        follow-up the previous window plus at most `follow_up_tokens` (default: a twentieth)
        of what it needs that is not shown yet, so that about ten questions share one budget
        and a prefix cache reuses each previous window whole. `token` (a `Session.token`)
        resumes a session, here or in another process on this store: tokens are signed with
        the store's secret for `scope` (the REST service passes the caller's API key id), and
        one of another store, collection or scope is an `InvalidArgumentError` naming
        `session`. `where` filters every window's documents as for `pack`; resume a token with
        the same filter (with another, the next window is packed afresh and `reason` says why).
        """
        return new_session(
            self._context,
            [(self.collection_id, self.name)],
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

    def delete(
        self, ids: str | Sequence[str] | None = None, *, where: Where = None, all: bool = False
    ) -> DeleteReport:
        """Delete documents by id, by metadata filter, or both, in one transaction and one
        new index version (their summaries go, the collection levels regroup once).

        `ids` is one id or a list. One id that is not stored is a `DocumentNotFoundError`
        (as it always was); in a list, the ids not stored are reported (`missing`). With
        both `ids` and `where`, the listed documents that the filter keeps are deleted (both
        must hold, as in Chroma). A call that deletes nothing leaves the index version as it
        was. To empty a collection, delete the collection: `where` alone must be a filter.
        A `where` that keeps every document of the collection is an `InvalidArgumentError`
        naming `all`, and nothing is deleted, unless `all=True` says that is what is meant (a
        filter is easy to get wider than intended; listed ids are explicit already).
        """
        single = isinstance(ids, str)
        listed = _delete_ids(ids)
        matching = parse_filter(where)
        if listed is None and matching is None:
            raise InvalidArgumentError("ids", "name documents to delete, or give where (or both)")
        with self._context.write_lock:
            report = delete_documents(
                self._ingest_target(), listed, matching, collection_name=self.name, every=all
            )
        if single and report.missing:
            raise DocumentNotFoundError(report.missing[0], self.name)
        return report

    def tree(self) -> TreeOverview:
        """The summary tree's shape: per level, node counts and token totals."""
        with self._reading() as session:
            return tree_overview(session, self.collection_id)

    def node(self, node_id: int) -> TreeNode:
        """One summary node: its text, span, parent and children."""
        with self._reading() as session:
            return tree_node(session, self.collection_id, node_id, collection=self.name)

    def rebuild_tree(
        self, summarizer: Summarizer | None = None, *, progress: ProgressCallback | None = None
    ) -> IngestReport:
        """Rebuild every summary node with `summarizer` (default: the store's), atomically."""
        with self._context.write_lock:
            return rebuild_tree(self._ingest_target(summarizer), progress)

    def get(self, document_id: str) -> Document:
        """The stored document with this id."""
        _check_lookup_id(document_id)
        with self._reading() as session:
            rows = repository.documents_by_external_id(session, self.collection_id, [document_id])
        if document_id not in rows:
            raise DocumentNotFoundError(document_id, self.name)
        return _document(rows[document_id])

    def documents(self, *, offset: int = 0, limit: int | None = None) -> list[DocumentInfo]:
        """Stored documents in collection order, without their text."""
        with self._reading() as session:
            rows = repository.list_documents(
                session, self.collection_id, offset=offset, limit=limit
            )
            return [_document_info(row) for row in rows]

    def stats(self) -> CollectionStats:
        """Settings and size of the collection: documents, chunks, tokens, index version."""
        collection_id = self.collection_id  # a collection no write created is not found
        with self._context.sessions() as session:
            version = repository.index_version(session, collection_id, self.name)
            documents, chunks, tokens = repository.collection_totals(session, collection_id)
        return CollectionStats(
            name=self.name,
            tokenizer=self.tokenizer,
            chunk_tokens=self.chunk_tokens,
            documents=documents,
            chunks=chunks,
            tokens=tokens,
            index_version=version,
        )

    def chunk_vectors(self) -> tuple[list[str], Vectors]:
        """Every chunk's text in document order, with the vector it was indexed under.

        For callers comparing other retrievers on the same chunks and vectors (the evals'
        baselines): the vectors come from the embedding cache, so nothing is embedded again.
        """
        sessions = self._context.sessions
        with self._reading() as session:
            _, texts = repository.chunk_texts_and_ids(session, self.collection_id)
        hashes = [content_hash(t) for t in texts]
        vectors, _ = embed_with_cache(sessions, self._context.embedder, texts, hashes)
        return texts, vectors

    def summary_vectors(self) -> tuple[list[str], Vectors]:
        """Every summary node's text, by id, with the vector it was indexed under (from the
        embedding cache, as `chunk_vectors`): for a baseline that retrieves over the tree."""
        sessions = self._context.sessions
        with self._reading() as session:
            _, hashes, texts = repository.nodes_for_index(session, self.collection_id)
        vectors, _ = embed_with_cache(sessions, self._context.embedder, texts, hashes)
        return texts, vectors

    def __len__(self) -> int:
        with self._reading() as session:
            return repository.count_documents(session, self.collection_id)

    @property
    def index_version(self) -> int:
        return repository.index_version_now(self._context.sessions, self.collection_id, self.name)

    def _ingest(
        self,
        documents: Sequence[Document],
        *,
        progress: ProgressCallback | None,
        skipped: dict[str, str] | None = None,
    ) -> IngestReport:
        with self._context.write_lock:
            created = False
            if self._known_id is None:  # the first write creates the collection
                row, created = self._context.row_for_write(
                    self.name, self.tokenizer, self.chunk_tokens
                )
                self._adopt(row)
            try:
                target = self._ingest_target()
                return ingest_documents(documents, target, progress=progress, skipped=skipped)
            except BaseException:
                if created:  # a failed first write leaves no empty collection behind
                    self._context.drop_unwritten(self.collection_id, self.name)
                    self._known_id = None
                raise

    def _ingest_target(self, summarizer: Summarizer | None = None) -> IngestTarget:
        return self._context.ingest_target(
            collection_id=self.collection_id,
            name=self.name,
            tokenizer=self.tokenizer,
            chunk_tokens=self.chunk_tokens,
            summarizer=summarizer,
        )


def _document(row: DocumentRow) -> Document:
    units = [Span(start=start, end=end) for start, end in row.units] if row.units else None
    return Document(
        text=row.text,
        title=row.title,
        id=row.external_id,
        metadata=dict(row.meta),
        # The store keeps only the kinds a `Document` was added with.
        kind=cast(DocumentKind, row.kind),
        units=units,
        source=row.source,
    )


def _document_info(row: DocumentRow) -> DocumentInfo:
    return DocumentInfo(
        id=row.external_id,
        title=row.title,
        kind=row.kind,
        tokens=row.token_count,
        chunks=len(row.chunks),
        position=row.position,
        metadata=dict(row.meta),
    )


def _delete_ids(ids: str | Sequence[str] | None) -> list[str] | None:
    """`delete`'s ids as a list (without repeats), each checked; None for none given."""
    if ids is None:
        return None
    if isinstance(ids, str):
        _check_lookup_id(ids)
        return [ids]
    if not isinstance(ids, Sequence):
        raise InvalidArgumentError(
            "ids", f"must be an id or a list of ids, got {type(ids).__name__}"
        )
    for document_id in ids:
        _check_lookup_id(document_id, argument="ids")
    return list(dict.fromkeys(ids))


def _check_lookup_id(document_id: str, argument: str = "document_id") -> None:
    """An id no document can have (not a string, NUL, a lone surrogate) is a clear error,
    not a database one (PostgreSQL cannot even compare text holding NUL)."""
    problem = (
        storable.lookup_id_problem(document_id)
        if isinstance(document_id, str)
        else "must be a string"
    )
    if problem is not None:
        raise InvalidArgumentError(argument, problem)
