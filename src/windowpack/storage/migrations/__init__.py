"""Alembic migrations of the store schema: `env.py` runs them, `versions/` holds the revisions."""
