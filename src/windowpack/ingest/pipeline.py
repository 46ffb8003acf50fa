"""The ingest pipeline: validate → chunk → summarise → embed → one transaction → publish.

Atomicity: nothing becomes visible before the single database transaction that writes the
documents, their chunks, their summary nodes, the collection-level nodes and the new index
version. A failure before it (bad document, embedding error, crash during the tree build)
leaves the store, its tree included, exactly as it was. Embeddings and summaries computed
before a failure stay in their caches, so a retry does not pay for them again. Index files
are derived and follow the commit.

This module runs the stages and writes (the transaction, then the publish); `prepared` holds
the documents until they are written, `target` what they are written to, `progress` what the
caller is told as it goes, and `reports` the report.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy.orm import Session

from windowpack.documents import reject_duplicate_ids
from windowpack.embed import InContextEmbedder, Vectors, embed_with_cache
from windowpack.errors import InvalidArgumentError
from windowpack.filters import Filter
from windowpack.index import IndexDelta, embed_pieces, node_index_id
from windowpack.ingest.prepared import (
    PreparedDocument,
    leaves_of,
    prepare_document,
    split_unchanged,
    stored_chunk_items,
    stored_outline,
    texts_to_index,
)
from windowpack.ingest.progress import ProgressCallback, ProgressTracker
from windowpack.ingest.reports import ingest_report, merged_stats
from windowpack.ingest.target import IngestTarget
from windowpack.storage import ChunkRow, DocumentRow, TreeNodeRow, new_row, repository
from windowpack.summarizer import (
    BuiltNode,
    CommittingSummaryCache,
    SessionSummaryCache,
    TreeCost,
    TreeItem,
    TreeStats,
    document_outline,
    estimate_tree_cost,
    insert_levels,
    update_collection_levels,
)
from windowpack.text import content_hash
from windowpack.types import DeleteReport, Document, IngestReport


@dataclass(frozen=True, kw_only=True)
class _Written:
    """What the transaction changed, for the indexes."""

    version: int
    added_ids: list[int]
    removed_ids: list[int]
    replaced: int
    collection_nodes: list[TreeNodeRow]
    tree: TreeStats


_LOG = logging.getLogger("windowpack")
# Chunked in this process, about 25K tokens (a fraction of a second) between two reports.
_CHUNK_SLICE_CHARS = 100_000


def ingest_documents(
    documents: Sequence[Document],
    target: IngestTarget,
    *,
    progress: ProgressCallback | None = None,
    skipped: dict[str, str] | None = None,
) -> IngestReport:
    """Add or replace `documents` (upsert by id) in one transaction and publish the indexes."""
    tracker = ProgressTracker(len(documents), progress)
    prepared = [prepare_document(document, index) for index, document in enumerate(documents)]
    reject_duplicate_ids(item.external_id for item in prepared)
    changed, unchanged = split_unchanged(prepared, target)
    duplicates = _duplicates(changed, target)
    if not changed:  # nothing to do: not even the embedding model is loaded
        with target.sessions() as session:
            current = repository.index_version(
                session, target.collection_id, target.collection_name
            )
        tracker.stage("done")
        return ingest_report(prepared, unchanged=unchanged, version=current, skipped=skipped)
    tracker.step("chunk", total=len(changed))
    for part in _chunk_slices(changed, target):
        chunked = target.executor.chunk(
            [item.document for item in part],
            tokenizer=target.counter.name,
            chunk_tokens=target.chunk_tokens,
        )
        for item, chunks in zip(part, chunked, strict=True):
            item.chunks = chunks
            item.leaves = leaves_of(item)
            tracker.chunked(item.chunks)
    tracker.step("summarize", total=len(changed))
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
        tracker.document_summarised()
    texts, hashes = texts_to_index(changed)
    # Sentences first: embedded in their chunks' passes, they leave the chunks' vectors in
    # the cache, and the texts' step embeds only the summaries.
    embedded = _embed_sentences(changed, target, tracker)
    tracker.step("embed", unit="texts")
    vectors, fresh = _embed(texts, hashes, target, tracker)
    embedded += fresh
    tracker.stage("index")
    written = _commit(changed, texts, target)
    embedded += _publish(target, written, vectors, texts)
    tracker.stage("done")
    return ingest_report(
        prepared,
        unchanged=unchanged,
        version=written.version,
        skipped=skipped,
        replaced=written.replaced,
        embedded=embedded,
        tree=merged_stats(builder.stats, written.tree),
        duplicates=duplicates,
    )


def _duplicates(changed: list[PreparedDocument], target: IngestTarget) -> dict[str, str]:
    """Each document of `changed` (in input order) whose text another document of the
    collection has after this call, mapped to that one's id: one already stored (the first
    in collection order) that this call does not rewrite, else one before it in `changed`.
    They are reported, not refused: two ids may hold one text on purpose."""
    if not changed:
        return {}
    rewritten = {item.external_id for item in changed}
    with target.sessions() as session:
        stored = repository.documents_with_texts(
            session, target.collection_id, [item.text_hash for item in changed]
        )
    first: dict[str, str] = {}
    for external_id, text_hash in stored:
        if external_id not in rewritten:
            first.setdefault(text_hash, external_id)
    found = {}
    for item in changed:
        original = first.setdefault(item.text_hash, item.external_id)
        if original != item.external_id:
            found[item.external_id] = original
    return found


def delete_documents(
    target: IngestTarget,
    ids: Sequence[str] | None,
    where: Filter | None,
    *,
    collection_name: str,
    every: bool = False,
) -> DeleteReport:
    """Delete the documents with these ids that `where` keeps (all of them without `where`;
    every document it keeps without `ids`) in one transaction: the collection levels are
    regrouped and the version bumped once, however many go, and the indexes published once.
    Deleting nothing writes nothing: the version stays. A `where` that keeps every document
    of the collection deletes them only with `every` (else `InvalidArgumentError("all")`)."""
    with target.sessions.begin() as session:
        # Checked first: a collection deleted since (whose id SQLite may have given to
        # another) is the deletion's error, not "missing" documents.
        version = repository.index_version(session, target.collection_id, collection_name)
        rows = repository.document_metadata(session, target.collection_id, ids)
        found = {external_id for _, external_id, _ in rows}
        missing = tuple(i for i in ids if i not in found) if ids is not None else ()
        if where is not None:
            rows = [row for row in rows if where.matches(row[2])]
            total = repository.count_documents(session, target.collection_id)
            if rows and len(rows) == total and not every:
                raise InvalidArgumentError(
                    "all",
                    f"the filter keeps all {total:,} documents of collection "
                    f"{collection_name!r}; pass all=True (CLI --all) to delete every one",
                )
        if not rows:
            return DeleteReport(deleted=(), missing=missing, index_version=version)
        removed = _delete(session, [row[0] for row in rows])
        written = _finish_transaction(session, target, [], removed, 0)
    _publish(target, written, np.zeros((0, 0), dtype=np.float32), [])
    deleted = tuple(external_id for _, external_id, _ in rows)
    return DeleteReport(deleted=deleted, missing=missing, index_version=written.version)


def rebuild_tree(target: IngestTarget, progress: ProgressCallback | None = None) -> IngestReport:
    """Recompute every summary node with `target.summarizer` and publish it atomically."""
    with target.sessions() as session:
        documents = repository.list_documents(session, target.collection_id)
        chunks = {doc.id: repository.chunk_rows(session, doc.id) for doc in documents}
    tracker = ProgressTracker(len(documents), progress)
    tracker.step("summarize", total=len(documents))
    counts = [[row.token_count for row in chunks[doc.id]] for doc in documents]
    _announce_cost(target, counts, tracker)
    builder = target.tree_builder(CommittingSummaryCache(target.sessions), tracker)
    levels: dict[int, list[list[BuiltNode]]] = {}
    for doc in documents:
        levels[doc.id] = builder.levels_above(
            stored_chunk_items(chunks[doc.id]),
            label=doc.external_id,
            outline=stored_outline(doc, chunks[doc.id]),
        )
        tracker.document_summarised()
    node_texts = [node.text for doc in documents for level in levels[doc.id] for node in level]
    tracker.step("embed", unit="texts")
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
    tree = merged_stats(builder.stats, written.tree)
    return IngestReport(
        index_version=written.version,
        embedded=embedded,
        summaries=tree.summarised,
        summary_failures=dict(tree.failures),
    )


def _announce_cost(
    target: IngestTarget, documents: list[list[int]], tracker: ProgressTracker
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


def _embed(
    texts: list[str], hashes: list[str], target: IngestTarget, tracker: ProgressTracker
) -> tuple[Vectors, int]:
    return embed_with_cache(
        target.sessions,
        target.embedder,
        texts,
        hashes,
        on_embedded=tracker.embedded,
        on_total=tracker.total,
    )


def _embed_sentences(
    changed: list[PreparedDocument], target: IngestTarget, tracker: ProgressTracker
) -> int:
    """Embed the new chunks' sentences into the cache (when the store keeps a sentence
    index), in the embed stage, so that publishing the version embeds nothing; how many
    texts were embedded afresh (counted in `embedded` with the chunks and summaries)."""
    if not target.indexes.sentence_index:
        return 0
    # In context, a chunk's pass embeds its sentences: the step counts chunks; the sentences
    # foreign to their chunks are embedded alone after it, a step counting sentences.
    in_context = isinstance(target.embedder, InContextEmbedder)
    tracker.step("embed", unit="chunks" if in_context else "sentences")
    chunk_texts = [leaf.text for item in changed for leaf in item.leaves]
    _, fresh = embed_pieces(
        target.sessions,
        target.embedder,
        chunk_texts,
        on_embedded=tracker.embedded,
        on_total=tracker.total,
        on_alone=lambda: tracker.step("embed", unit="sentences"),
    )
    return fresh


def _chunk_slices(
    changed: list[PreparedDocument], target: IngestTarget
) -> Iterator[list[PreparedDocument]]:
    """The documents in the runs they are chunked in: in this process a run of about
    `_CHUNK_SLICE_CHARS` (or one document), so that the chunk step's count moves as it goes;
    an executor that fans out gets them all at once, to share them among its workers."""
    if target.executor.name != "local":
        yield changed
        return
    part: list[PreparedDocument] = []
    chars = 0
    for item in changed:
        part.append(item)
        chars += len(item.document.text)
        if chars >= _CHUNK_SLICE_CHARS:
            yield part
            part, chars = [], 0
    if part:
        yield part


def _commit(changed: list[PreparedDocument], texts: list[str], target: IngestTarget) -> _Written:
    removed: list[int] = []
    added: list[int] = []
    with target.sessions.begin() as session:
        existing = repository.documents_by_external_id(
            session, target.collection_id, [item.external_id for item in changed]
        )
        for row in existing.values():
            removed.extend(_delete(session, [row.id]))
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
    # Only the nodes whose children changed are rendered and written; the rest keep their rows.
    levels = update_collection_levels(
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


def _delete(session: Session, document_ids: Sequence[int]) -> list[int]:
    """Delete documents (by row id); returns the index ids of their chunks and nodes."""
    chunk_ids, node_ids = repository.delete_documents(session, document_ids)
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


def _insert(session: Session, item: PreparedDocument, target: IngestTarget) -> list[int]:
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
