"""Storage: the SQLAlchemy schema (the source of truth), migrations, queries, API keys.

`database` creates engines and migrates (alembic), `schema` holds the models, `repository`
the queries and writes (callers own the session and transaction), `notifications` tells other
processes of a new index version (PostgreSQL NOTIFY) and `api_keys` keeps the REST service's
keys.
"""

from __future__ import annotations

from windowpack.storage import repository
from windowpack.storage.api_keys import ApiKeys
from windowpack.storage.database import (
    create_database_engine,
    current_revision,
    migrate,
    session_factory,
    sqlite_url,
)
from windowpack.storage.notifications import VersionListener, announce_change
from windowpack.storage.schema import ChunkRow, CollectionRow, DocumentRow, TreeNodeRow, new_row

__all__ = [
    "ApiKeys",
    "ChunkRow",
    "CollectionRow",
    "DocumentRow",
    "TreeNodeRow",
    "VersionListener",
    "announce_change",
    "create_database_engine",
    "current_revision",
    "migrate",
    "new_row",
    "repository",
    "session_factory",
    "sqlite_url",
]
