"""The units a metadata filter keeps, read from the database: what a filtered search stays
within (`index.KeptUnits`). A pack derives the same set from its packing state instead
(`pack.filtered`); both are cached under one key (`pack.Packer.kept_units`)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from windowpack.filters import Filter
from windowpack.index import KeptUnits
from windowpack.storage import repository


def stored_kept_units(session: Session, collection_id: int, where: Filter) -> KeptUnits:
    """The chunks and summary nodes of the collection's documents whose metadata `where`
    keeps (the collection-level nodes, which stand for many documents, are never kept)."""
    rows = repository.document_metadata(session, collection_id)
    kept = [row_id for row_id, _, metadata in rows if where.matches(metadata)]
    if not kept:
        return KeptUnits.of([], [])
    return KeptUnits.of(
        repository.chunk_ids_of_documents(session, kept),
        repository.node_ids_of_documents(session, kept),
    )
