"""summary tree

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "summaries",
        sa.Column("children_hash", sa.String(length=64), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("children_hash"),
    )
    op.create_table(
        "tree_nodes",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column(
            "collection_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column(
            "document_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True
        ),
        sa.Column("level", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("parent_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("leaf_start", sa.Integer(), nullable=False),
        sa.Column("leaf_end", sa.Integer(), nullable=False),
        sa.Column("char_start", sa.Integer(), nullable=True),
        sa.Column("char_end", sa.Integer(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("token_count", sa.Integer(), nullable=False),
        sa.Column("text_hash", sa.String(length=64), nullable=False),
        sa.Column("children_hash", sa.String(length=64), nullable=False),
        sa.Column("summarizer", sa.String(length=256), nullable=False),
        sa.ForeignKeyConstraint(["collection_id"], ["collections.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["document_id"], ["documents.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("tree_nodes", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_tree_nodes_collection_id"), ["collection_id"], unique=False
        )
        batch_op.create_index(
            "ix_tree_nodes_collection_level", ["collection_id", "level"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_tree_nodes_document_id"), ["document_id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("tree_nodes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tree_nodes_document_id"))
        batch_op.drop_index("ix_tree_nodes_collection_level")
        batch_op.drop_index(batch_op.f("ix_tree_nodes_collection_id"))

    op.drop_table("tree_nodes")
    op.drop_table("summaries")
