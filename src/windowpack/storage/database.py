"""Engine creation and schema migration (alembic), for SQLite and any SQLAlchemy URL."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, inspect, make_url, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from windowpack.errors import StorageError

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
_VERSION_TABLE = "alembic_version"
_REVISION = re.compile(r"^revision(?:\s*:\s*str)?\s*=\s*[\"']([\w.-]+)[\"']\s*$", re.MULTILINE)
_DOWN_REVISION = re.compile(
    r"^down_revision(?:\s*:[^=\n]*)?\s*=\s*(?:None|[\"']([\w.-]+)[\"'])\s*$", re.MULTILINE
)
_PASSWORD = re.compile(r"(://[^:/@]*:)[^@]*@")


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def shown_url(url: str) -> str:
    """`url` fit to print: its password (if any) replaced by `***`."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (SQLAlchemyError, ValueError):
        # Not even parseable as a URL: blank whatever sits between "://user:" and "@".
        return _PASSWORD.sub(r"\1***@", url)


def create_database_engine(url: str) -> Engine:
    """Create an engine for `url`; SQLite gets WAL, foreign keys and a busy timeout."""
    try:
        engine = create_engine(url, pool_pre_ping=not url.startswith("sqlite"))
    except (SQLAlchemyError, ImportError, ValueError) as error:
        raise StorageError(f"cannot use database URL {shown_url(url)!r}: {error}") from error
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _configure_sqlite)
    return engine


def _configure_sqlite(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets readers go on while an ingest writes; foreign keys make deletes cascade.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


_MIGRATION_LOCK = 0x77696E646F77  # "window": PostgreSQL advisory lock key of migrations


def migrate(engine: Engine) -> None:
    """Bring the schema to the latest alembic revision (creates it on an empty database).

    A database at the latest revision already, as at every open but the first, is found so
    by one query: alembic is not imported (~0.15 s of a cold CLI `pack`), nor its scripts
    read (`head_revision`)."""
    head = head_revision()
    if head is not None and current_revision(engine) == head:
        return
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    try:
        with engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                # Replicas starting at once on a new database: one migrates, the others wait
                # here and then find the schema at head (both creating it failed).
                connection.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK}
                )
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
    except SQLAlchemyError as error:
        raise StorageError(f"cannot migrate database {engine.url!r}: {error}") from error


def current_revision(engine: Engine) -> str | None:
    """The alembic revision the database is at, or None when it was never migrated: read
    from alembic's version table, as alembic reads it, without importing alembic."""
    try:
        with engine.connect() as connection:
            if not inspect(connection).has_table(_VERSION_TABLE):
                return None
            found = connection.execute(text(f"SELECT version_num FROM {_VERSION_TABLE}"))
            revisions = list(found.scalars())
    except SQLAlchemyError as error:
        raise StorageError(f"cannot read the schema revision of {engine.url!r}: {error}") from error
    if len(revisions) > 1:
        raise StorageError(f"the database {engine.url!r} is at several revisions: {revisions}")
    return str(revisions[0]) if revisions else None


@functools.cache
def head_revision() -> str | None:
    """The latest revision of `migrations/versions`, from each file's `revision` and
    `down_revision` lines; None when they do not make one simple chain (a merge, another
    spelling): `migrate` then leaves it to alembic."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in (MIGRATIONS_DIR / "versions").glob("*.py"):
        source = path.read_text(encoding="utf-8")
        revision = _REVISION.search(source)
        if revision is None:
            continue  # not a revision (the package's __init__)
        down_revision = _DOWN_REVISION.search(source)
        if down_revision is None:
            return None
        revisions.add(revision.group(1))
        if down_revision.group(1) is not None:
            parents.add(down_revision.group(1))
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 and parents <= revisions else None


def session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)
