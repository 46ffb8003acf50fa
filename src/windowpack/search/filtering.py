"""The units a metadata filter keeps, read from the database: what a filtered search stays
within (`index.KeptUnits`). A pack derives the same set from its packing state instead
(`pack.filtered`); both are cached under one key (`pack.Packer.kept_units`)."""

from __future__ import annotations

from sqlalchemy.orm import Session

from windowpack.filters import Filter
from windowpack.index import KeptUnits
from windowpack.storage import repository


def stored_kept_units(
    session: Session, collection: tuple[int, str], version: int, where: Filter
) -> KeptUnits:
    """The chunks and summary nodes of the collection's documents whose metadata `where`
    keeps (the collection-level nodes, which stand for many documents, are never kept),
    for the indexes at `version`: read at another version (a write landed since), the set
    is used once but not cached (`KeptUnits.cacheable`)."""
    collection_id, name = collection
    stored = repository.index_version(session, collection_id, name)
    rows = repository.document_metadata(session, collection_id)
    kept = [row_id for row_id, _, metadata in rows if where.matches(metadata)]
    chunks = repository.chunk_ids_of_documents(session, kept) if kept else []
    nodes = repository.node_ids_of_documents(session, kept) if kept else []
    return KeptUnits.of(chunks, nodes, cacheable=stored == version)
