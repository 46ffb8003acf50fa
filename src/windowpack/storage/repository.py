"""Queries and writes over the schema, the one module other components call
(`repository.get_collection(session, name)`). Callers own the session and its transaction.

The queries live in a module per table they read (`collection_queries`, `document_queries`,
`chunk_queries`, `tree_queries`, `unit_queries` for what the indexes hold, `cache_queries`
for the embedding and summary caches); this module gathers them under one name, so that a
caller need not know which table answers, and a test can replace one query for every caller.
"""

from __future__ import annotations

from windowpack.storage.cache_queries import (
    cached_embeddings,
    cached_summaries,
    embedding_dimension,
    insert_ignoring_duplicates,
    store_embeddings,
    store_summaries,
)
from windowpack.storage.chunk_queries import (
    chunk_ids_of_document,
    chunk_rows,
    chunk_span_rows,
    chunk_spans,
    chunk_texts_and_ids,
)
from windowpack.storage.collection_queries import (
    bump_index_version,
    claim_positions,
    collection_totals,
    create_collection,
    get_collection,
    index_version,
    index_version_now,
    index_versions,
    list_collections,
)
from windowpack.storage.document_queries import (
    count_documents,
    delete_document,
    document_ids,
    document_texts_by_id,
    documents_by_external_id,
    documents_for_pack,
    list_documents,
    texts_and_units,
)
from windowpack.storage.tree_queries import (
    CollectionNodeRow,
    DocumentRootRow,
    all_node_ids,
    child_nodes,
    collection_node_rows,
    collection_scope_nodes,
    delete_nodes,
    document_root_rows,
    get_tree_node,
    move_nodes,
    node_ids_of_document,
    set_parents,
    tree_nodes,
    tree_nodes_for_pack,
)
from windowpack.storage.unit_queries import (
    TextAndHash,
    WithDocument,
    chunks_for_index,
    chunks_with_documents,
    nodes_for_index,
    nodes_with_documents,
    unit_count,
    unit_hashes,
    unit_texts_by_id,
)

__all__ = [
    "CollectionNodeRow",
    "DocumentRootRow",
    "TextAndHash",
    "WithDocument",
    "all_node_ids",
    "bump_index_version",
    "cached_embeddings",
    "cached_summaries",
    "child_nodes",
    "chunk_ids_of_document",
    "chunk_rows",
    "chunk_span_rows",
    "chunk_spans",
    "chunk_texts_and_ids",
    "chunks_for_index",
    "chunks_with_documents",
    "claim_positions",
    "collection_node_rows",
    "collection_scope_nodes",
    "collection_totals",
    "count_documents",
    "create_collection",
    "delete_document",
    "delete_nodes",
    "document_ids",
    "document_root_rows",
    "document_texts_by_id",
    "documents_by_external_id",
    "documents_for_pack",
    "embedding_dimension",
    "get_collection",
    "get_tree_node",
    "index_version",
    "index_version_now",
    "index_versions",
    "insert_ignoring_duplicates",
    "list_collections",
    "list_documents",
    "move_nodes",
    "node_ids_of_document",
    "nodes_for_index",
    "nodes_with_documents",
    "set_parents",
    "store_embeddings",
    "store_summaries",
    "texts_and_units",
    "tree_nodes",
    "tree_nodes_for_pack",
    "unit_count",
    "unit_hashes",
    "unit_texts_by_id",
]
