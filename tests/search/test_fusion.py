"""Tests for fusing the dense and lexical rankings (z-scores, and reciprocal rank)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windowpack.search.fusion import RRF_K, reciprocal_rank_fusion, z_score_fusion


def _ranking(*ids: int) -> np.ndarray:
    return np.asarray(ids, dtype=np.int64)


def test_scores_match_a_hand_computation_with_the_default_constant() -> None:
    assert RRF_K == 60
    fused = reciprocal_rank_fusion([_ranking(1, 2, 3), _ranking(3, 4)])
    assert [chunk_id for chunk_id, _ in fused] == [3, 1, 2, 4]
    scores = dict(fused)
    assert scores[3] == pytest.approx(1 / 63 + 1 / 61)
    assert scores[1] == pytest.approx(1 / 61)
    assert scores[2] == pytest.approx(1 / 62)
    assert scores[4] == pytest.approx(1 / 62)


def test_scores_match_a_hand_computation_with_a_small_constant() -> None:
    fused = reciprocal_rank_fusion([_ranking(10, 20, 30), _ranking(30, 10)], k=1)
    # 10: 1/2 + 1/3, 20: 1/3, 30: 1/4 + 1/2
    assert fused == [
        (10, pytest.approx(1 / 2 + 1 / 3)),
        (30, pytest.approx(1 / 4 + 1 / 2)),
        (20, pytest.approx(1 / 3)),
    ]


def test_results_are_plain_python_ints_and_floats() -> None:
    fused = reciprocal_rank_fusion([_ranking(7, 8)])
    assert all(type(chunk_id) is int and type(score) is float for chunk_id, score in fused)


def test_an_id_in_both_lists_beats_the_top_of_a_single_list() -> None:
    fused = reciprocal_rank_fusion([_ranking(1, 2, 3, 4, 5), _ranking(6, 7, 8, 9, 5)])
    assert fused[0][0] == 5


@settings(max_examples=100, deadline=None)
@given(
    data=st.lists(st.integers(0, 200), min_size=0, max_size=60, unique=True),
    other=st.lists(st.integers(0, 200), min_size=0, max_size=60, unique=True),
)
def test_every_id_in_both_lists_beats_every_id_in_one(data: list[int], other: list[int]) -> None:
    # Holds for lists up to RRF_K + 1 long: 2/(k + n) > 1/(k + 1) when n < k + 2.
    fused = reciprocal_rank_fusion([_ranking(*data), _ranking(*other)])
    scores = dict(fused)
    both = set(data) & set(other)
    one = set(data) ^ set(other)
    assert set(scores) == set(data) | set(other)
    for shared in both:
        for single in one:
            assert scores[shared] > scores[single]
    values = [score for _, score in fused]
    assert values == sorted(values, reverse=True)


def test_ties_are_broken_by_the_smaller_id() -> None:
    fused = reciprocal_rank_fusion([_ranking(9, 4), _ranking(4, 9)])
    assert [chunk_id for chunk_id, _ in fused] == [4, 9]
    assert fused[0][1] == pytest.approx(fused[1][1])
    # The same ids ranked the other way round in each list: same order.
    swapped = reciprocal_rank_fusion([_ranking(4, 9), _ranking(9, 4)])
    assert [chunk_id for chunk_id, _ in swapped] == [4, 9]
    # Equal ranks in separate lists tie too.
    apart = reciprocal_rank_fusion([_ranking(50), _ranking(3)])
    assert [chunk_id for chunk_id, _ in apart] == [3, 50]


@settings(max_examples=50, deadline=None)
@given(
    lists=st.lists(st.lists(st.integers(0, 30), max_size=15, unique=True), min_size=1, max_size=4)
)
def test_fusion_does_not_depend_on_the_order_of_the_rankings(lists: list[list[int]]) -> None:
    forward = reciprocal_rank_fusion([_ranking(*ids) for ids in lists])
    backward = reciprocal_rank_fusion([_ranking(*ids) for ids in reversed(lists)])
    assert [chunk_id for chunk_id, _ in forward] == [chunk_id for chunk_id, _ in backward]
    for (_, a), (_, b) in zip(forward, backward, strict=True):
        assert a == pytest.approx(b)


@pytest.mark.parametrize(
    "rankings", [[], [_ranking()], [_ranking(), _ranking()]], ids=["none", "one", "two"]
)
def test_empty_inputs_give_an_empty_result(rankings: list[np.ndarray]) -> None:
    assert reciprocal_rank_fusion(rankings) == []


def test_one_empty_ranking_leaves_the_other_as_is() -> None:
    fused = reciprocal_rank_fusion([_ranking(), _ranking(5, 2)])
    assert fused == [(5, pytest.approx(1 / 61)), (2, pytest.approx(1 / 62))]


def _ranked(ids: list[int], scores: list[float]) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(ids, dtype=np.int64), np.asarray(scores, dtype=np.float32)


def test_z_score_fusion_matches_a_hand_computation() -> None:
    dense = _ranked([1, 2, 3], [0.9, 0.6, 0.3])  # mean 0.6, std 0.2449: z = 1.2247, 0, -1.2247
    lexical = _ranked([3, 4], [8.0, 2.0])  # mean 5, std 3: z = 1, -1
    fused = dict(z_score_fusion([dense, lexical]))
    assert fused[1] == pytest.approx(1.2247449 + -1.0)  # missing from lexical: its lowest z
    assert fused[2] == pytest.approx(0.0 + -1.0)
    assert fused[3] == pytest.approx(-1.2247449 + 1.0)
    assert fused[4] == pytest.approx(-1.2247449 + -1.0)


def test_z_score_fusion_keeps_a_decisive_lexical_margin_that_rrf_loses() -> None:
    """A needle: BM25 scores it 4x anything else, dense ranks it 10th of 20 candidates."""
    others = list(range(100, 119))
    dense_ids = [*others[:9], 7, *others[9:]]
    dense_scores = list(np.linspace(0.50, 0.30, 20))
    lexical_ids = [7, *others[:19]]
    lexical_scores = [16.0, *np.linspace(4.0, 2.0, 19)]
    dense, lexical = _ranked(dense_ids, dense_scores), _ranked(lexical_ids, lexical_scores)
    assert z_score_fusion([dense, lexical])[0][0] == 7
    assert reciprocal_rank_fusion([dense[0], lexical[0]])[0][0] != 7


def test_z_score_fusion_of_constant_scores_uses_membership() -> None:
    fused = z_score_fusion([_ranked([5, 6], [1.0, 1.0]), _ranked([6, 7], [3.0, 1.0])])
    assert [chunk_id for chunk_id, _ in fused] == [6, 5, 7]


def test_a_lone_lexical_hit_outranks_the_dense_lists_best() -> None:
    """One chunk holds the query's rare term: BM25 finds it alone, dense ranks it last of 20.
    As a flat 1 it lost to every dense hit above the middle; standardised against the ids
    it is missing, it wins."""
    dense = _ranked(list(range(100, 120)), list(np.linspace(0.9, 0.1, 20)))
    lexical = _ranked([119], [7.5])
    fused = z_score_fusion([dense, lexical])
    assert fused[0][0] == 119
    assert [i for i, _ in fused[1:]] == list(range(100, 119))  # the dense order otherwise


def test_z_score_fusion_of_nothing_is_empty() -> None:
    assert z_score_fusion([]) == []
    assert z_score_fusion([_ranked([], [])]) == []
