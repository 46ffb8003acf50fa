"""Index ids: chunk ids as they are, node ids shifted into one id space, encoded in one place."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from windowpack.index.ids import (
    NODE_ID_OFFSET,
    is_node_index_id,
    node_id_of,
    node_index_id,
    split_index_ids,
)

database_ids = st.integers(min_value=1, max_value=NODE_ID_OFFSET - 1)


@given(database_ids)
def test_a_node_id_round_trips_and_is_never_taken_for_a_chunk(node_id: int) -> None:
    index_id = node_index_id(node_id)
    assert is_node_index_id(index_id)
    assert node_id_of(index_id) == node_id
    assert not is_node_index_id(node_id)  # the same number as a chunk id stays a chunk


@given(st.lists(database_ids, max_size=20), st.lists(database_ids, max_size=20))
def test_split_recovers_which_ids_are_chunks_and_the_node_ids(
    chunks: list[int], nodes: list[int]
) -> None:
    mixed = [(c, True) for c in chunks] + [(node_index_id(n), False) for n in nodes]
    ids = np.asarray([index_id for index_id, _ in mixed], dtype=np.int64)
    is_chunk, node_ids = split_index_ids(ids)
    assert is_chunk.tolist() == [flag for _, flag in mixed]
    assert node_ids.tolist() == nodes


def test_node_index_ids_stay_exact_in_a_float64_for_json_clients() -> None:
    index_id = node_index_id(10**9)
    assert int(float(index_id)) == index_id
