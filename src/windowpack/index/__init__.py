"""A collection's indexes: dense (FAISS), lexical (BM25) and sentence vectors (FAISS), saved
per version, kept current.

`base` holds the `VectorIndex` / `LexicalIndex` protocols and `factory` builds and loads the
kinds in use (`dense` + `appendable_dense`, `lexical` over `segments`). `IndexStore` applies
each write to them, saves them under the new version with a manifest (`files`, `folders`)
and serves readers the current one; `ids` packs chunk and node ids into index ids,
`sentences` holds a vector per sentence of each chunk (a chunk ranked by its best
sentence), `unit_keys` tells which units a version holds, and `VersionWatcher` follows
versions written by other processes. `kept` holds the units a metadata filter keeps
(`KeptUnits`), which every index searches within (`within=`), and their cache.
"""

from __future__ import annotations

from windowpack.index.base import (
    DEFAULT_ANN,
    AnnSettings,
    Ids,
    LexicalIndex,
    Matrix,
    Scores,
    UnitFilter,
    VectorIndex,
)
from windowpack.index.collection_indexes import CollectionIndexes, IndexDelta
from windowpack.index.factory import build_lexical_index, build_vector_index
from windowpack.index.files import verified_record, write_record
from windowpack.index.ids import is_node_index_id, node_id_of, node_index_id, split_index_ids
from windowpack.index.kept import DEFAULT_KEPT_CACHE_BYTES, BoundedCache, KeptCache, KeptUnits
from windowpack.index.sentences import (
    PIECES_PER_CHUNK,
    SentenceIndex,
    best_per_chunk,
    chunk_ids_of,
    embed_pieces,
    novel_pieces,
    ordinals_of,
    sentence_pieces,
)
from windowpack.index.store import IndexStore
from windowpack.index.timing import timed_calls
from windowpack.index.unit_keys import UnitKeys
from windowpack.index.version_watch import VersionWatcher

__all__ = [
    "DEFAULT_ANN",
    "DEFAULT_KEPT_CACHE_BYTES",
    "PIECES_PER_CHUNK",
    "AnnSettings",
    "BoundedCache",
    "CollectionIndexes",
    "Ids",
    "IndexDelta",
    "IndexStore",
    "KeptCache",
    "KeptUnits",
    "LexicalIndex",
    "Matrix",
    "Scores",
    "SentenceIndex",
    "UnitFilter",
    "UnitKeys",
    "VectorIndex",
    "VersionWatcher",
    "best_per_chunk",
    "build_lexical_index",
    "build_vector_index",
    "chunk_ids_of",
    "embed_pieces",
    "is_node_index_id",
    "node_id_of",
    "node_index_id",
    "novel_pieces",
    "ordinals_of",
    "sentence_pieces",
    "split_index_ids",
    "timed_calls",
    "verified_record",
    "write_record",
]
