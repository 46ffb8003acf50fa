"""Storage: the SQLAlchemy schema (the source of truth), migrations, queries, API keys.

`database` creates engines and migrates (alembic), `schema` holds the models, `repository`
the queries and writes (callers own the session and transaction), `notifications` tells other
processes of a new index version or job (PostgreSQL NOTIFY), `api_keys` keeps the REST
service's keys, `secrets` the store's own (the key that signs session tokens) and
`job_table` the ingest jobs.
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
from windowpack.storage.job_table import JobOutcome, JobTable, new_job_row
from windowpack.storage.notifications import JOBS_CHANNEL, VersionListener, announce_change
from windowpack.storage.schema import (
    ChunkRow,
    CollectionRow,
    DocumentRow,
    JobRow,
    TreeNodeRow,
    new_row,
)
from windowpack.storage.secrets import SESSION_TOKENS, StoreSecrets

__all__ = [
    "JOBS_CHANNEL",
    "SESSION_TOKENS",
    "ApiKeys",
    "ChunkRow",
    "CollectionRow",
    "DocumentRow",
    "JobOutcome",
    "JobRow",
    "JobTable",
    "StoreSecrets",
    "TreeNodeRow",
    "VersionListener",
    "announce_change",
    "create_database_engine",
    "current_revision",
    "migrate",
    "new_job_row",
    "new_row",
    "repository",
    "session_factory",
    "sqlite_url",
]
