"""store secrets: the key that signs session tokens

A session token travels through clients, so the server signs it (HMAC) with a secret every
replica reads here; `windowpack keys rotate-session-secret` replaces it.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "store_secrets",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("secret", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("store_secrets")
