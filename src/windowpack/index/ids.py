"""The one id space of a collection's indexes: chunk ids as they are, node ids shifted.

Both indexes hold chunks and summary-tree nodes. Chunk and node ids are database keys of two
tables, so a node's index id is its id plus `NODE_ID_OFFSET` (2**52, far above any chunk id
and still exact in a float64, which JSON clients use). Encoding and decoding happen here only.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

NODE_ID_OFFSET = 1 << 52

IndexIds = npt.NDArray[np.int64]


def node_index_id(node_id: int) -> int:
    """The index id of summary node `node_id`."""
    return NODE_ID_OFFSET + node_id


def is_node_index_id(index_id: int) -> bool:
    """Whether an index id is a summary node's (else it is a chunk id)."""
    return index_id >= NODE_ID_OFFSET


def node_id_of(index_id: int) -> int:
    """The summary node id an index id stands for (`is_node_index_id` must hold)."""
    return index_id - NODE_ID_OFFSET


def split_index_ids(ids: IndexIds) -> tuple[npt.NDArray[np.bool_], IndexIds]:
    """For an array of index ids: which are chunk ids, and the node ids of the others."""
    is_chunk = ids < NODE_ID_OFFSET
    return is_chunk, ids[~is_chunk] - NODE_ID_OFFSET
