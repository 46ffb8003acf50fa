"""Alembic environment: windowpack always passes an open connection in `config.attributes`."""

from __future__ import annotations

from alembic import context

from windowpack.storage.schema import Base

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    # SQLite cannot ALTER most things in place; batch mode rebuilds tables when needed.
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
