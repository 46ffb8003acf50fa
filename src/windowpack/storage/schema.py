"""SQLAlchemy 2.0 models: the source of truth (design §2).

FAISS and BM25 files are derived from these tables and can always be rebuilt; the
`index_version` of a collection says whether a file on disk is current.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

# SQLite only auto-increments INTEGER PRIMARY KEY; PostgreSQL gets a BIGINT so chunk ids,
# which are also FAISS ids, have room for tens of millions of chunks and many re-ingests.
IdType = BigInteger().with_variant(Integer(), "sqlite")


def utc_now() -> datetime:
    return datetime.now(UTC)


_Row = TypeVar("_Row", bound="Base")


def new_row(table: type[_Row], record: object, **values: Any) -> _Row:
    """A new `table` row of `values`, every other column taken from `record`'s attribute of
    the same name (as `types.copied` does for dataclasses). The primary key is never copied:
    a new row gets its own (a `Document.id` is the caller's id, not the row's)."""
    columns = [
        column.key
        for column in table.__table__.columns
        if column.key not in values and not column.primary_key
    ]
    values.update({name: getattr(record, name) for name in columns if hasattr(record, name)})
    return table(**values)


class Base(DeclarativeBase):
    pass


class CollectionRow(Base):
    __tablename__ = "collections"

    id: Mapped[int] = mapped_column(IdType, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    tokenizer: Mapped[str] = mapped_column(String(512))
    embedder: Mapped[str] = mapped_column(String(512))
    chunk_tokens: Mapped[int] = mapped_column(Integer)
    index_version: Mapped[int] = mapped_column(Integer, default=0)
    next_position: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)

    documents: Mapped[list[DocumentRow]] = relationship(
        back_populates="collection", cascade="all, delete-orphan", passive_deletes=True
    )


class DocumentRow(Base):
    __tablename__ = "documents"
    __table_args__ = (
        UniqueConstraint("collection_id", "external_id", name="uq_documents_collection_external"),
        Index("ix_documents_collection_position", "collection_id", "position"),
        # On SQLite, migration 0004 also adds ix_documents_pack_fields: every field a packing
        # state reads, so that no load walks the overflow pages of a document's text to
        # reach the fields stored after it.
    )

    id: Mapped[int] = mapped_column(IdType, primary_key=True, autoincrement=True)
    collection_id: Mapped[int] = mapped_column(
        ForeignKey("collections.id", ondelete="CASCADE"), index=True
    )
    external_id: Mapped[str] = mapped_column(String(1024))
    title: Mapped[str | None] = mapped_column(String(1024), nullable=True)
    kind: Mapped[str] = mapped_column(String(32))
    text: Mapped[str] = mapped_column(Text)
    text_hash: Mapped[str] = mapped_column(String(64))
    units: Mapped[list[list[int]] | None] = mapped_column(JSON, nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)
    source: Mapped[str | None] = mapped_column(String(4096), nullable=True)
    position: Mapped[int] = mapped_column(Integer)
    token_count: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)

    collection: Mapped[CollectionRow] = relationship(back_populates="documents")
    chunks: Mapped[list[ChunkRow]] = relationship(
        back_populates="document",
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="ChunkRow.ordinal",
    )


class ChunkRow(Base):
    __tablename__ = "chunks"
    __table_args__ = (
        UniqueConstraint("document_id", "ordinal", name="uq_chunks_document_ordinal"),
        # What a packing state reads of every chunk, in its order: read from the index
        # alone, not from the table's pages, which hold the chunks' text (migration 0004).
        Index(
            "ix_chunks_pack_spans",
            "collection_id",
            "document_id",
            "ordinal",
            "id",
            "char_start",
            "char_end",
            "unit",
        ),
    )

    id: Mapped[int] = mapped_column(IdType, primary_key=True, autoincrement=True)
    collection_id: Mapped[int] = mapped_column(
        ForeignKey("collections.id", ondelete="CASCADE"), index=True
    )
    document_id: Mapped[int] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE"), index=True
    )
    ordinal: Mapped[int] = mapped_column(Integer)
    char_start: Mapped[int] = mapped_column(Integer)
    char_end: Mapped[int] = mapped_column(Integer)
    token_count: Mapped[int] = mapped_column(Integer)
    unit: Mapped[int | None] = mapped_column(Integer, nullable=True)
    text_hash: Mapped[str] = mapped_column(String(64))
    # Denormalised copy of document.text[char_start:char_end]: search returns chunk text
    # without loading whole documents.
    text: Mapped[str] = mapped_column(Text)

    document: Mapped[DocumentRow] = relationship(back_populates="chunks")


class EmbeddingRow(Base):
    """Embedding cache keyed by content hash and model id: unchanged text is never re-embedded."""

    __tablename__ = "embeddings"

    model_id: Mapped[str] = mapped_column(String(512), primary_key=True)
    text_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    dimension: Mapped[int] = mapped_column(Integer)
    vector: Mapped[bytes] = mapped_column(LargeBinary)


class TreeNodeRow(Base):
    """A summary node of the tree (design §3); level 0, the chunks, lives in `chunks`.

    Document-scope nodes (`document_id` set) span leaf ordinals `[leaf_start, leaf_end)` of
    their document's chunks and chars `[char_start, char_end)` of its text. Collection-scope
    nodes (`document_id` NULL) group document roots in collection order and span document
    positions `[leaf_start, leaf_end)`. `position` orders nodes of one scope and level.
    """

    __tablename__ = "tree_nodes"
    __table_args__ = (Index("ix_tree_nodes_collection_level", "collection_id", "level"),)

    id: Mapped[int] = mapped_column(IdType, primary_key=True, autoincrement=True)
    collection_id: Mapped[int] = mapped_column(
        ForeignKey("collections.id", ondelete="CASCADE"), index=True
    )
    document_id: Mapped[int | None] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE"), index=True, nullable=True
    )
    level: Mapped[int] = mapped_column(Integer)
    position: Mapped[int] = mapped_column(Integer)
    parent_id: Mapped[int | None] = mapped_column(IdType, nullable=True)
    leaf_start: Mapped[int] = mapped_column(Integer)
    leaf_end: Mapped[int] = mapped_column(Integer)
    char_start: Mapped[int | None] = mapped_column(Integer, nullable=True)
    char_end: Mapped[int | None] = mapped_column(Integer, nullable=True)
    text: Mapped[str] = mapped_column(Text)
    token_count: Mapped[int] = mapped_column(Integer)
    text_hash: Mapped[str] = mapped_column(String(64))
    children_hash: Mapped[str] = mapped_column(String(64))
    summarizer: Mapped[str] = mapped_column(String(256))


class SummaryRow(Base):
    """Summary cache: a node whose children hash is known is never summarised again."""

    __tablename__ = "summaries"

    children_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    text: Mapped[str] = mapped_column(Text)


class ApiKeyRow(Base):
    """An API key of the REST service, stored as a hash (the secret is shown once, at creation).

    `collections` lists the collection names the key may use (`["*"]`: all of them);
    `can_write` adds writes to reads. A revoked key keeps its row, so `keys list` shows it.
    """

    __tablename__ = "api_keys"

    key_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(256))
    secret_hash: Mapped[str] = mapped_column(String(64))
    collections: Mapped[list[str]] = mapped_column(JSON)
    can_write: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class StoreSecretRow(Base):
    """A secret of the store that its processes share, by purpose (`name`): the key that
    signs session tokens, so that any replica on the database verifies any other's. It is
    made on first use and replaced by a rotation (`storage.StoreSecrets`)."""

    __tablename__ = "store_secrets"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    secret: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)


class JobRow(Base):
    """An ingest job: what to ingest (`manifest`), where it stands, and how it ended.

    It lives in the store's database, so every replica and worker sees every job. `worker`
    and `worker_lock` name the process running it; whether that process is still alive is
    told by the lock (`jobs.liveness`), not by a clock. `attempts` counts the runs begun;
    `idempotency_key` (unique per collection) with `request_hash` makes a client's retry of
    the same request answer the same job.
    """

    __tablename__ = "jobs"
    __table_args__ = (
        UniqueConstraint("collection", "idempotency_key", name="uq_jobs_idempotency_key"),
        Index("ix_jobs_status_created", "status", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    collection: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(16))
    manifest: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16), default="queued")
    stage: Mapped[str] = mapped_column(String(32), default="queued")
    progress: Mapped[dict[str, int]] = mapped_column(JSON, default=dict)
    failures: Mapped[dict[str, str]] = mapped_column(JSON, default=dict)
    report: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    error_code: Mapped[str | None] = mapped_column(String(64), nullable=True)
    error_message: Mapped[str | None] = mapped_column(Text, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    worker: Mapped[str | None] = mapped_column(String(128), nullable=True)
    worker_lock: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    idempotency_key: Mapped[str | None] = mapped_column(String(255), nullable=True)
    request_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utc_now)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
