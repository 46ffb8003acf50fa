"""The refill (`pack.window`): a window takes the largest room on the shared grid whose draft
still fits its budget, also after a draft over the budget made it ask for less (the
allocator's costs fell short), so a turn cut for want of room is completed by what the
budget still has (design §4.8)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from windowpack.pack.window import _grid_index_at_most, _grid_room, _refilled


def _drafts(tokens_of: Any, asked: list[int]) -> Any:
    def packed(room: int) -> Any:
        asked.append(room)
        return SimpleNamespace(tokens=tokens_of(room), room=room)

    return packed


def _largest_fitting(tokens_of: Any, budget: int, low: int, high: int) -> int:
    rooms = [
        _grid_room(i)
        for i in range(_grid_index_at_most(low), _grid_index_at_most(high) + 1)
        if low <= _grid_room(i) < high
    ]
    return max(room for room in rooms if tokens_of(room) <= budget)


def test_a_trimmed_draft_is_refilled_below_the_room_found_over_the_budget() -> None:
    def tokens_of(room: int) -> int:
        return room - 6 if room < 300 else room + 40  # a jump: a unit's rest comes in at 300

    asked: list[int] = []
    start = SimpleNamespace(tokens=tokens_of(275), room=275)
    chosen = _refilled(start, _drafts(tokens_of, asked), 275, 315, (315, tokens_of(315)))
    assert chosen.room == _largest_fitting(tokens_of, 315, 275, 315)
    assert chosen.room > 275
    assert asked and all(275 < room < 315 for room in asked)


def test_without_a_room_over_the_budget_the_refill_gallops_up_to_it() -> None:
    def tokens_of(room: int) -> int:
        return room // 2

    asked: list[int] = []
    start = SimpleNamespace(tokens=tokens_of(200), room=200)
    chosen = _refilled(start, _drafts(tokens_of, asked), 200, 300)
    assert chosen.tokens <= 300
    assert chosen.room == _largest_fitting(tokens_of, 300, 200, 601)


def test_a_draft_that_fills_the_budget_is_kept() -> None:
    asked: list[int] = []
    start = SimpleNamespace(tokens=300, room=250)
    assert _refilled(start, _drafts(lambda room: room, asked), 250, 300) is start
    assert asked == []
