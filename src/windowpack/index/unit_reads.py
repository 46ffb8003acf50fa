"""What a collection's indexes hold, read from the database: every unit (chunk or summary
node) by index id, their text hashes, and the texts of a few."""

from __future__ import annotations

from sqlalchemy.orm import Session, sessionmaker

from windowpack.index.base import Ids
from windowpack.index.ids import is_node_index_id, node_id_of, node_index_id, split_index_ids
from windowpack.index.unit_keys import UnitKeys
from windowpack.storage import repository


def every_unit(
    sessions: sessionmaker[Session], collection_id: int
) -> tuple[list[int], list[str], list[str]]:
    """Index ids, content hashes and texts of every chunk and summary node."""
    with sessions() as session:
        chunk_ids, chunk_hashes, chunk_texts = repository.chunks_for_index(session, collection_id)
        node_ids, node_hashes, node_texts = repository.nodes_for_index(session, collection_id)
    ids = chunk_ids + [node_index_id(node_id) for node_id in node_ids]
    return ids, chunk_hashes + node_hashes, chunk_texts + node_texts


def keys_now(sessions: sessionmaker[Session], collection_id: int) -> tuple[int, UnitKeys | None]:
    """The database's version and the keys of what it holds; None keys when a write
    committed between the reads (versions only grow, so equal versions mean none did)."""
    with sessions() as session:
        before = repository.index_version(session, collection_id)
        (chunk_ids, chunk_hashes), (node_ids, node_hashes) = repository.unit_hashes(
            session, collection_id
        )
        after = repository.index_version(session, collection_id)
    if before != after:
        return after, None
    ids = chunk_ids + [node_index_id(node_id) for node_id in node_ids]
    return after, UnitKeys.of(ids, chunk_hashes + node_hashes)


def texts_of(
    sessions: sessionmaker[Session], collection_id: int, index_ids: Ids
) -> tuple[list[str], list[str]] | None:
    """The texts and content hashes of these units, in order; None when one was deleted
    meanwhile."""
    is_chunk, node_ids = split_index_ids(index_ids)
    with sessions() as session:
        chunks, nodes = repository.unit_texts_by_id(
            session, collection_id, index_ids[is_chunk].tolist(), node_ids.tolist()
        )
    texts, hashes = [], []
    for index_id in index_ids.tolist():
        row = (
            nodes.get(node_id_of(index_id)) if is_node_index_id(index_id) else chunks.get(index_id)
        )
        if row is None:
            return None
        texts.append(row[0])
        hashes.append(row[1])
    return texts, hashes


def unit_count(sessions: sessionmaker[Session], collection_id: int) -> int:
    """Chunks plus summary nodes of the collection: what its indexes must hold."""
    with sessions() as session:
        return repository.unit_count(session, collection_id)


def embedding_dimension(sessions: sessionmaker[Session], model_id: str) -> int | None:
    """The cached vectors' dimension for this model (None when nothing is cached yet:
    asking the embedder would load a model for nothing)."""
    with sessions() as session:
        return repository.embedding_dimension(session, model_id)
