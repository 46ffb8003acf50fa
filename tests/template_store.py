"""One migrated SQLite database per test session, copied into each new test store.

Running the alembic migrations costs a store tens of milliseconds; the suite opens hundreds.
`MigratedTemplate.copy_or_migrate` stands in for `windowpack.storage.migrate` where stores are
opened (tests/conftest.py): a new SQLite file (not there yet, so no connection holds it)
becomes a copy of a database that the real `migrate` brought to head once. Anything else (an
existing file, PostgreSQL), and every store while `enabled` is off, is migrated for real.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import Engine, text

from windowpack.storage import create_database_engine, sqlite_url


class MigratedTemplate:
    """A database file migrated to head on first use (at `path`), copied from then on."""

    def __init__(self, migrate: Callable[[Engine], None], path: Path | None = None) -> None:
        self.path = path
        """Where the template lives; until it is set, every store is migrated for real."""
        self.enabled = True
        """Off while a test about the migrations runs (`real_migrations`)."""
        self.copies = 0
        self._migrate = migrate
        self._built: Path | None = None
        self._lock = threading.Lock()

    def copy_or_migrate(self, engine: Engine) -> None:
        """Leave `engine`'s database as `migrate(engine)` would: a new SQLite file becomes a
        copy of the template."""
        target = _new_sqlite_file(engine)
        if not self.enabled or self.path is None or target is None:
            self._migrate(engine)
            return
        with self._lock:
            if self._built != self.path:
                self._build(self.path)
            shutil.copyfile(self.path, target)
            self.copies += 1

    def _build(self, path: Path) -> None:
        engine = create_database_engine(sqlite_url(path))
        try:
            self._migrate(engine)
            with engine.connect() as connection:
                # Everything in the main file, so that copying it alone copies the database.
                connection.execute(text("PRAGMA wal_checkpoint(TRUNCATE)"))
        finally:
            engine.dispose()
        self._built = path


def _new_sqlite_file(engine: Engine) -> Path | None:
    """The file of a SQLite `engine` whose database does not exist yet, else None."""
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        return None
    if engine.url.query:  # a URL with options (a URI, a mode) is opened as it says
        return None
    path = Path(database)
    if path.exists() or not path.parent.is_dir():
        return None
    return path
