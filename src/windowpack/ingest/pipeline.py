"""The ingest pipeline: validate → chunk → summarise → embed → one transaction → publish.

Atomicity: nothing becomes visible before the single database transaction that writes the
documents, their chunks, their summary nodes, the collection-level nodes and the new index
version. A failure before it (bad document, embedding error, crash during the tree build)
leaves the store, its tree included, exactly as it was. Embeddings and summaries computed
before a failure stay in their caches, so a retry does not pay for them again. Index files
are derived and follow the commit.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from windowpack.documents import (
    Chunk,
    checked_identity,
    fingerprint,
    natural_units,
    reject_duplicate_ids,
)
from windowpack.embed import Embedder, Vectors, embed_with_cache
from windowpack.index import IndexDelta, IndexStore, node_index_id
from windowpack.ingest.executor import IngestExecutor, LocalExecutor
from windowpack.storage import ChunkRow, DocumentRow, TreeNodeRow, new_row, repository
from windowpack.summarizer import (
    BuiltNode,
    CommittingSummaryCache,
    DocumentOutline,
    SessionSummaryCache,
    Summarizer,
    SummaryCache,
    TreeBuilder,
    TreeCost,
    TreeItem,
    TreeStats,
    document_outline,
    estimate_tree_cost,
    insert_levels,
    rebuild_collection_levels,
)
from windowpack.text import TokenCounter, content_hash
from windowpack.types import Document, IngestProgress, IngestReport, Span


@dataclass(frozen=True, kw_only=True)
class IngestTarget:
    """The collection being written and the parts that process it."""

    collection_id: int
    collection_name: str
    counter: TokenCounter
    chunk_tokens: int
    embedder: Embedder
    indexes: IndexStore
    sessions: sessionmaker[Session]
    summarizer: Summarizer
    fallback_summarizer: Summarizer
    fanout: int
    # Where chunking and embedding run; `embedder` is the executor's (see `ingest.executor`).
    executor: IngestExecutor = field(default_factory=LocalExecutor)

    def tree_builder(self, cache: SummaryCache, tracker: _Tracker | None = None) -> TreeBuilder:
        return TreeBuilder(
            self.summarizer,
            self.counter,
            cache,
            fallback=self.fallback_summarizer,
            fanout=self.fanout,
            on_node=tracker.summarised if tracker is not None else None,
        )


@dataclass(kw_only=True)
class _Prepared:
    document: Document
    external_id: str
    text_hash: str
    chunks: list[Chunk]
    position: int | None = None
    # The chunks as tree leaves: each chunk's text sliced and hashed once, reused by the tree,
    # the embedding and the insert.
    leaves: list[TreeItem] = field(default_factory=list)
    levels: list[list[BuiltNode]] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class _Written:
    """What the transaction changed, for the indexes."""

    version: int
    added_ids: list[int]
    removed_ids: list[int]
    replaced: int
    collection_nodes: list[TreeNodeRow]
    tree: TreeStats


ProgressCallback = Callable[[IngestProgress], None]
_LOG = logging.getLogger("windowpack")


def ingest_documents(
    documents: Sequence[Document],
    target: IngestTarget,
    *,
    progress: ProgressCallback | None = None,
    skipped: dict[str, str] | None = None,
) -> IngestReport:
    """Add or replace `documents` (upsert by id) in one transaction and publish the indexes."""
    tracker = _Tracker(len(documents), progress)
    prepared = [_prepare(document, index) for index, document in enumerate(documents)]
    reject_duplicate_ids(item.external_id for item in prepared)
    changed, unchanged = _split_unchanged(prepared, target)
    if not changed:  # nothing to do: not even the embedding model is loaded
        with target.sessions() as session:
            current = repository.index_version(
                session, target.collection_id, target.collection_name
            )
        tracker.stage("done")
        return _report(prepared, unchanged=unchanged, version=current, skipped=skipped)
    chunked = target.executor.chunk(
        [item.document for item in changed],
        tokenizer=target.counter.name,
        chunk_tokens=target.chunk_tokens,
    )
    for item, chunks in zip(changed, chunked, strict=True):
        item.chunks = chunks
        item.leaves = _leaves(item)
        tracker.chunked(item)
    tracker.stage("summarize")
    _announce_cost(target, [[chunk.tokens for chunk in item.chunks] for item in changed], tracker)
    builder = target.tree_builder(CommittingSummaryCache(target.sessions), tracker)
    for item in changed:
        outline = document_outline(
            text=item.document.text,
            kind=item.document.kind,
            units=item.document.units,
            chunk_units=[chunk.unit for chunk in item.chunks],
        )
        item.levels = builder.levels_above(item.leaves, label=item.external_id, outline=outline)
    texts, hashes = _texts_to_index(changed)
    tracker.stage("embed")
    vectors, embedded = _embed(texts, hashes, target, tracker)
    tracker.stage("index")
    written = _commit(changed, texts, target)
    embedded += _publish(target, written, vectors, texts)
    tracker.stage("done")
    return _report(
        prepared,
        unchanged=unchanged,
        version=written.version,
        skipped=skipped,
        replaced=written.replaced,
        embedded=embedded,
        tree=_merged(builder.stats, written.tree),
    )


def delete_document(document_id: str, collection_name: str, target: IngestTarget) -> int:
    """Delete one document, regroup the collection-level nodes; returns the new version."""
    from windowpack.errors import DocumentNotFoundError

    with target.sessions.begin() as session:
        rows = repository.documents_by_external_id(session, target.collection_id, [document_id])
        if document_id not in rows:
            # Not found in a collection deleted since (whose id SQLite may have given to
            # another) is the deletion's error. A document found there goes with the
            # rollback that the version's bump brings (`bump_index_version`).
            repository.index_version(session, target.collection_id, collection_name)
            raise DocumentNotFoundError(document_id, collection_name)
        removed = _delete(session, rows[document_id])
        written = _finish_transaction(session, target, [], removed, 0)
    _publish(target, written, np.zeros((0, 0), dtype=np.float32), [])
    return written.version


def _prepare(document: Document, index: int) -> _Prepared:
    external_id, text_hash = checked_identity(document, index)
    # A chat's turns and a markdown document's sections are its units unless the caller set
    # them: windows keep them whole. A copy, so the caller's document is left as it was.
    document = replace(document, units=natural_units(document))
    return _Prepared(document=document, external_id=external_id, text_hash=text_hash, chunks=[])


def _split_unchanged(
    prepared: list[_Prepared], target: IngestTarget
) -> tuple[list[_Prepared], int]:
    with target.sessions() as session:
        existing = repository.documents_by_external_id(
            session, target.collection_id, [item.external_id for item in prepared]
        )
        changed = []
        for item in prepared:
            row = existing.get(item.external_id)
            if row is not None and _fingerprint_of_row(row) == _fingerprint(item):
                continue
            item.position = row.position if row is not None else None
            changed.append(item)
    return changed, len(prepared) - len(changed)


def _fingerprint(item: _Prepared) -> str:
    document = item.document
    units = [[unit.start, unit.end] for unit in document.units] if document.units else None
    return fingerprint(item.text_hash, document.title, document.kind, document.metadata, units)


def _fingerprint_of_row(row: DocumentRow) -> str:
    return fingerprint(row.text_hash, row.title, row.kind, row.meta, row.units)


def rebuild_tree(target: IngestTarget, progress: ProgressCallback | None = None) -> IngestReport:
    """Recompute every summary node with `target.summarizer` and publish it atomically."""
    with target.sessions() as session:
        documents = repository.list_documents(session, target.collection_id)
        chunks = {doc.id: repository.chunk_rows(session, doc.id) for doc in documents}
    tracker = _Tracker(len(documents), progress)
    tracker.stage("summarize")
    counts = [[row.token_count for row in chunks[doc.id]] for doc in documents]
    _announce_cost(target, counts, tracker)
    builder = target.tree_builder(CommittingSummaryCache(target.sessions), tracker)
    levels = {
        doc.id: builder.levels_above(
            _stored_chunk_items(chunks[doc.id]),
            label=doc.external_id,
            outline=_stored_outline(doc, chunks[doc.id]),
        )
        for doc in documents
    }
    node_texts = [node.text for doc in documents for level in levels[doc.id] for node in level]
    tracker.stage("embed")
    node_hashes = [content_hash(text) for text in node_texts]
    vectors, embedded = _embed(node_texts, node_hashes, target, tracker)
    tracker.stage("index")
    with target.sessions.begin() as session:
        old_nodes = repository.all_node_ids(session, target.collection_id)
        repository.delete_nodes(session, old_nodes)
        removed = [node_index_id(node_id) for node_id in old_nodes]
        added: list[int] = []
        for doc in documents:
            rows = insert_levels(
                session,
                levels[doc.id],
                collection_id=target.collection_id,
                document_id=doc.id,
                summarizer_id=target.summarizer.summarizer_id,
            )
            added.extend(node_index_id(row.id) for level in rows for row in level)
        written = _finish_transaction(session, target, added, removed, 0)
    embedded += _publish(target, written, vectors, node_texts)
    tracker.stage("done")
    tree = _merged(builder.stats, written.tree)
    return IngestReport(
        index_version=written.version,
        embedded=embedded,
        summaries=tree.summarised,
        summary_failures=dict(tree.failures),
    )


def _stored_outline(document: DocumentRow, rows: Sequence[ChunkRow]) -> DocumentOutline | None:
    return document_outline(
        text=document.text,
        kind=document.kind,
        units=[Span(start=start, end=end) for start, end in document.units or []],
        chunk_units=[row.unit for row in rows],
    )


def _stored_chunk_items(rows: Sequence[ChunkRow]) -> list[TreeItem]:
    return [
        _leaf(row.text, row.token_count, row.text_hash, row.ordinal, row.char_start, row.char_end)
        for row in rows
    ]


def _leaf(text: str, tokens: int, text_hash: str, ordinal: int, start: int, end: int) -> TreeItem:
    """A chunk as a level-0 item of the summary tree."""
    return TreeItem(
        text=text,
        tokens=tokens,
        content_hash=text_hash,
        level=0,
        leaf_start=ordinal,
        leaf_end=ordinal + 1,
        char_start=start,
        char_end=end,
    )


def _announce_cost(
    target: IngestTarget, documents: list[list[int]], tracker: _Tracker
) -> TreeCost | None:
    """Before an LLM summarizer starts, say what the build may cost (logged and reported)."""
    estimate_cost = getattr(target.summarizer, "estimate_cost", None)
    if estimate_cost is None:  # the extractive summarizer costs nothing worth announcing
        return None
    # The prompt of a one-word job is the template's own cost, paid once per call.
    overhead = estimate_cost([(["."], 1)], counter=target.counter).input_tokens
    cost = estimate_tree_cost(documents, fanout=target.fanout, overhead_per_call=overhead)
    _LOG.info("summary tree build with %s: %s", target.summarizer.summarizer_id, cost)
    tracker.note(f"summary tree with {target.summarizer.summarizer_id}: {cost}")
    return cost


def _leaves(item: _Prepared) -> list[TreeItem]:
    leaves = []
    for ordinal, chunk in enumerate(item.chunks):
        text = item.document.text[chunk.start : chunk.end]
        leaves.append(
            _leaf(text, chunk.tokens, content_hash(text), ordinal, chunk.start, chunk.end)
        )
    return leaves


def _texts_to_index(changed: Sequence[_Prepared]) -> tuple[list[str], list[str]]:
    """Texts and hashes of the chunks, then nodes bottom-up, per document, in `_insert` order."""
    texts: list[str] = []
    hashes: list[str] = []
    for item in changed:
        texts.extend(leaf.text for leaf in item.leaves)
        hashes.extend(leaf.content_hash for leaf in item.leaves)
        node_texts = [node.text for level in item.levels for node in level]
        texts.extend(node_texts)
        hashes.extend(content_hash(text) for text in node_texts)
    return texts, hashes


def _embed(
    texts: list[str], hashes: list[str], target: IngestTarget, tracker: _Tracker
) -> tuple[Vectors, int]:
    return embed_with_cache(
        target.sessions, target.embedder, texts, hashes, on_embedded=tracker.embedded
    )


def _commit(changed: list[_Prepared], texts: list[str], target: IngestTarget) -> _Written:
    removed: list[int] = []
    added: list[int] = []
    with target.sessions.begin() as session:
        existing = repository.documents_by_external_id(
            session, target.collection_id, [item.external_id for item in changed]
        )
        for row in existing.values():
            removed.extend(_delete(session, row))
        new_count = sum(1 for item in changed if item.position is None)
        next_position = repository.claim_positions(
            session, target.collection_id, new_count, target.collection_name
        )
        for item in changed:
            if item.position is None:
                item.position, next_position = next_position, next_position + 1
            added.extend(_insert(session, item, target))
        assert len(added) == len(texts)
        return _finish_transaction(session, target, added, removed, len(existing))


def _finish_transaction(
    session: Session,
    target: IngestTarget,
    added: list[int],
    removed: list[int],
    replaced: int,
) -> _Written:
    """Regroup the collection-level nodes and bump the version, inside the open transaction."""
    builder = target.tree_builder(SessionSummaryCache(session))
    levels = rebuild_collection_levels(
        session, target.collection_id, builder, summarizer_id=target.summarizer.summarizer_id
    )
    version = repository.bump_index_version(session, target.collection_id, target.collection_name)
    return _Written(
        version=version,
        added_ids=added,
        removed_ids=removed + [node_index_id(node_id) for node_id in levels.removed_ids],
        replaced=replaced,
        collection_nodes=levels.added,
        tree=builder.stats,
    )


def _delete(session: Session, row: DocumentRow) -> list[int]:
    """Delete a document; returns the index ids of its chunks and nodes."""
    node_ids = repository.node_ids_of_document(session, row.id)
    chunk_ids = repository.delete_document(session, row)
    return chunk_ids + [node_index_id(node_id) for node_id in node_ids]


def _publish(
    target: IngestTarget, written: _Written, vectors: Vectors, texts: Sequence[str]
) -> int:
    """Embed the collection-level nodes (after the commit: they may hit the cache) and publish;
    `texts` are those of `written.added_ids`, so the lexical index only adds them."""
    node_texts = [node.text for node in written.collection_nodes]
    node_vectors, embedded = embed_with_cache(
        target.sessions, target.embedder, node_texts, [content_hash(t) for t in node_texts]
    )
    ids = written.added_ids + [node_index_id(node.id) for node in written.collection_nodes]
    parts = [part for part in (vectors, node_vectors) if len(part)]
    delta = IndexDelta(
        added_ids=np.asarray(ids, dtype=np.int64),
        added_vectors=np.vstack(parts) if parts else np.zeros((0, 0), dtype=np.float32),
        removed_ids=np.asarray(written.removed_ids, dtype=np.int64),
        added_texts=[*texts, *node_texts],
    )
    target.indexes.publish(target.collection_id, written.version, delta)
    return embedded


def _insert(session: Session, item: _Prepared, target: IngestTarget) -> list[int]:
    """Insert the document, its chunks and its nodes; returns their index ids in text order."""
    document = item.document
    assert item.position is not None
    units = [[unit.start, unit.end] for unit in document.units] if document.units else None
    identity = {"external_id": item.external_id, "text_hash": item.text_hash}
    tokens = sum(chunk.tokens for chunk in item.chunks)
    # Text, title, kind and source are the document's own; the rest is where it is stored.
    row = new_row(
        DocumentRow,
        document,
        **identity,
        collection_id=target.collection_id,
        units=units,
        meta=document.metadata,
        position=item.position,
        token_count=tokens,
    )
    session.add(row)
    session.flush()
    owner = {"collection_id": target.collection_id, "document_id": row.id}
    chunk_rows = [
        new_row(ChunkRow, leaf, **owner, ordinal=ordinal, unit=chunk.unit, **_leaf_hashes(leaf))
        for ordinal, (chunk, leaf) in enumerate(zip(item.chunks, item.leaves, strict=True))
    ]
    session.add_all(chunk_rows)
    session.flush()
    node_rows = insert_levels(
        session,
        item.levels,
        collection_id=target.collection_id,
        document_id=row.id,
        summarizer_id=target.summarizer.summarizer_id,
    )
    node_ids = [node_index_id(node.id) for level in node_rows for node in level]
    return [chunk.id for chunk in chunk_rows] + node_ids


def _leaf_hashes(leaf: TreeItem) -> dict[str, object]:
    """A leaf's count and hash under their chunk column names (its text and span share them)."""
    return {"token_count": leaf.tokens, "text_hash": leaf.content_hash}


def _merged(first: TreeStats, second: TreeStats) -> TreeStats:
    return TreeStats(
        summarised=first.summarised + second.summarised,
        cached=first.cached + second.cached,
        outlined=first.outlined + second.outlined,
        failures={**first.failures, **second.failures},
    )


def _report(
    prepared: Sequence[_Prepared],
    *,
    unchanged: int,
    version: int,
    skipped: dict[str, str] | None,
    replaced: int = 0,
    embedded: int = 0,
    tree: TreeStats | None = None,
) -> IngestReport:
    written = [item for item in prepared if item.chunks]
    return IngestReport(
        added=len(prepared) - unchanged - replaced,
        replaced=replaced,
        unchanged=unchanged,
        chunks=sum(len(item.chunks) for item in written),
        tokens=sum(chunk.tokens for item in written for chunk in item.chunks),
        embedded=embedded,
        index_version=version,
        skipped=dict(skipped or {}),
        summaries=tree.summarised if tree else 0,
        summary_failures=dict(tree.failures) if tree else {},
    )


class _Tracker:
    """Counts work done and reports it to the progress callback, if any."""

    def __init__(self, total: int, callback: ProgressCallback | None) -> None:
        self._callback = callback
        self._progress = IngestProgress(stage="chunk", documents_total=total)

    def chunked(self, item: _Prepared) -> None:
        self._progress.documents += 1
        self._progress.chunks += len(item.chunks)
        self._progress.tokens += sum(chunk.tokens for chunk in item.chunks)
        self._emit()

    def embedded(self, count: int) -> None:
        self._progress.stage = "embed"
        self._progress.embedded += count
        self._emit()

    def summarised(self, count: int) -> None:
        self._progress.summaries += count
        self._emit()

    def note(self, text: str) -> None:
        self._progress.note = text
        self._emit()
        self._progress.note = None

    def stage(self, name: str) -> None:
        self._progress.stage = name
        self._emit()

    def _emit(self) -> None:
        if self._callback is not None:
            self._callback(self._progress)
