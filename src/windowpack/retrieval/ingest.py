"""The ingest pipeline: validate → chunk → embed → one transaction → publish indexes.

Atomicity: nothing becomes visible before the single database transaction that writes the
documents, their chunks and the new index version. A failure before it (bad document,
embedding error) leaves the store exactly as it was; embeddings already computed stay in the
cache, so a retry does not pay for them again. Index files are derived and follow the commit.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from windowpack.budget.tokens import TokenCounter
from windowpack.errors import EmptyDocumentError, InvalidInputError
from windowpack.retrieval.chunking import ChunkSpan, chunk_document
from windowpack.retrieval.embedder import Embedder
from windowpack.retrieval.embedding_cache import content_hash, embed_with_cache
from windowpack.retrieval.indexes import IndexDelta, IndexStore
from windowpack.storage import repository
from windowpack.storage.schema import ChunkRow, DocumentRow
from windowpack.types import Document, IngestProgress, IngestReport


@dataclass(frozen=True, kw_only=True)
class IngestTarget:
    """The collection being written and the parts that process it."""

    collection_id: int
    counter: TokenCounter
    chunk_tokens: int
    embedder: Embedder
    indexes: IndexStore
    sessions: sessionmaker[Session]


@dataclass(kw_only=True)
class _Prepared:
    document: Document
    external_id: str
    text_hash: str
    chunks: list[ChunkSpan]
    position: int | None = None


ProgressCallback = Callable[[IngestProgress], None]


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
    _reject_duplicate_ids(prepared)
    changed, unchanged = _split_unchanged(prepared, target)
    if not changed:  # nothing to do: not even the embedding model is loaded
        with target.sessions() as session:
            current = repository.index_version(session, target.collection_id)
        tracker.stage("done")
        return _report(prepared, 0, unchanged, 0, current, skipped)
    for item in changed:
        item.chunks = chunk_document(item.document, target.counter, target.chunk_tokens)
        tracker.chunked(item)
    texts, hashes = _chunk_texts(changed)
    tracker.stage("embed")
    vectors, embedded = embed_with_cache(
        target.sessions, target.embedder, texts, hashes, on_embedded=tracker.embedded
    )
    tracker.stage("index")
    version, delta, replaced = _commit(changed, vectors, hashes, target)
    target.indexes.publish(target.collection_id, version, delta)
    tracker.stage("done")
    return _report(prepared, replaced, unchanged, embedded, version, skipped)


def _prepare(document: Document, index: int) -> _Prepared:
    label = document.id or document.title or f"documents[{index}]"
    if not isinstance(document.text, str):
        raise InvalidInputError(f"{label}: text must be a string")
    if not document.text.strip():
        raise EmptyDocumentError(label, "has no text")
    try:
        json.dumps(document.metadata)
    except (TypeError, ValueError) as error:
        raise InvalidInputError(f"{label}: metadata is not JSON-serialisable: {error}") from error
    for unit in document.units or []:
        if not 0 <= unit.start <= unit.end <= len(document.text):
            raise InvalidInputError(f"{label}: unit span {unit} is outside the text")
    text_hash = content_hash(document.text)
    external_id = document.id if document.id is not None else f"sha256:{text_hash[:32]}"
    if not external_id.strip():
        raise InvalidInputError(f"documents[{index}]: id must not be empty")
    return _Prepared(document=document, external_id=external_id, text_hash=text_hash, chunks=[])


def _reject_duplicate_ids(prepared: Sequence[_Prepared]) -> None:
    seen: set[str] = set()
    for item in prepared:
        if item.external_id in seen:
            raise InvalidInputError(f"document id {item.external_id!r} appears twice in one add")
        seen.add(item.external_id)


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
    return _hash_fields(item.text_hash, document.title, document.kind, document.metadata, units)


def _fingerprint_of_row(row: DocumentRow) -> str:
    return _hash_fields(row.text_hash, row.title, row.kind, row.meta, row.units)


def _hash_fields(*fields: object) -> str:
    encoded = json.dumps(fields, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()


def _chunk_texts(changed: Sequence[_Prepared]) -> tuple[list[str], list[str]]:
    texts = [
        item.document.text[chunk.start : chunk.end] for item in changed for chunk in item.chunks
    ]
    return texts, [content_hash(text) for text in texts]


def _commit(
    changed: list[_Prepared], vectors: np.ndarray, hashes: list[str], target: IngestTarget
) -> tuple[int, IndexDelta, int]:
    removed: list[int] = []
    added: list[int] = []
    replaced = 0
    with target.sessions.begin() as session:
        existing = repository.documents_by_external_id(
            session, target.collection_id, [item.external_id for item in changed]
        )
        for row in existing.values():
            removed.extend(repository.delete_document(session, row))
            replaced += 1
        new_count = sum(1 for item in changed if item.position is None)
        next_position = repository.claim_positions(session, target.collection_id, new_count)
        for item in changed:
            if item.position is None:
                item.position, next_position = next_position, next_position + 1
            added.extend(_insert(session, item, target, hashes[len(added) :]))
        version = repository.bump_index_version(session, target.collection_id)
    delta = IndexDelta(
        added_ids=np.asarray(added, dtype=np.int64),
        added_vectors=vectors,
        removed_ids=np.asarray(removed, dtype=np.int64),
    )
    return version, delta, replaced


def _insert(
    session: Session, item: _Prepared, target: IngestTarget, hashes: Sequence[str]
) -> list[int]:
    document = item.document
    assert item.position is not None
    row = DocumentRow(
        collection_id=target.collection_id,
        external_id=item.external_id,
        title=document.title,
        kind=document.kind,
        text=document.text,
        text_hash=item.text_hash,
        units=[[unit.start, unit.end] for unit in document.units] if document.units else None,
        meta=document.metadata,
        source=document.source,
        position=item.position,
        token_count=sum(chunk.tokens for chunk in item.chunks),
    )
    session.add(row)
    session.flush()
    chunk_rows = [
        ChunkRow(
            collection_id=target.collection_id,
            document_id=row.id,
            ordinal=ordinal,
            char_start=chunk.start,
            char_end=chunk.end,
            token_count=chunk.tokens,
            unit=chunk.unit,
            text_hash=hashes[ordinal],
            text=document.text[chunk.start : chunk.end],
        )
        for ordinal, chunk in enumerate(item.chunks)
    ]
    session.add_all(chunk_rows)
    session.flush()
    return [chunk.id for chunk in chunk_rows]


def _report(
    prepared: Sequence[_Prepared],
    replaced: int,
    unchanged: int,
    embedded: int,
    version: int,
    skipped: dict[str, str] | None,
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

    def stage(self, name: str) -> None:
        self._progress.stage = name
        self._emit()

    def _emit(self) -> None:
        if self._callback is not None:
            self._callback(self._progress)
