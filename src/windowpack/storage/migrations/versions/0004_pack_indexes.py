"""covering indexes for a packing state's load

A packing state reads every chunk's span and every document's header fields. Through the
old indexes each row was fetched from its table: the chunks' pages hold their text, and a
document's fields after its text (units, metadata, position) sit behind the text's overflow
pages, so a 100M-token collection's load read ~1 GB of the database, 74 s from a cold disk.
These indexes hold exactly what the load reads, in its order (the documents' one on SQLite
only, see below).

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_chunks_pack_spans",
        "chunks",
        ["collection_id", "document_id", "ordinal", "id", "char_start", "char_end", "unit"],
    )
    if op.get_bind().dialect.name != "sqlite":
        # PostgreSQL keeps a long text out of line (TOAST), so reading the fields after it
        # never reads it; and a btree entry there must stay under ~2.7 KB, which a long
        # conversation's units (a span per turn) would pass.
        return
    op.create_index(
        "ix_documents_pack_fields",
        "documents",
        [
            "collection_id",
            "position",
            "id",
            "external_id",
            "title",
            "kind",
            "text_hash",
            "units",
            "metadata",
        ],
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.drop_index("ix_documents_pack_fields", table_name="documents")
    op.drop_index("ix_chunks_pack_spans", table_name="chunks")
