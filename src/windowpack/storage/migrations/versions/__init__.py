"""The schema revisions, oldest first; each file is one alembic revision (upgrade and downgrade)."""
