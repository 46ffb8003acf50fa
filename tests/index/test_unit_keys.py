"""`UnitKeys`: what an index version holds, and the delta that turns one version into another."""

from __future__ import annotations

import hashlib

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from windowpack.index.unit_keys import UnitKeys


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _keys(units: dict[int, str]) -> UnitKeys:
    return UnitKeys.of(list(units), [_hash(text) for text in units.values()])


def test_delta_names_new_gone_and_rewritten_units() -> None:
    old = _keys({1: "a", 2: "b", 3: "c"})
    new = _keys({2: "b", 3: "changed", 4: "d"})
    added, removed = old.delta_to(new)
    assert added.tolist() == [3, 4]
    assert removed.tolist() == [1, 3]


def test_changed_applies_a_writers_delta() -> None:
    old = _keys({5: "a", 1: "b"})
    after = old.changed(np.array([5]), _keys({5: "new text", 9: "c"}))
    expected = _keys({1: "b", 5: "new text", 9: "c"})
    assert after.ids.tolist() == [1, 5, 9]
    assert np.array_equal(after.hashes, expected.hashes)


units = st.dictionaries(st.integers(0, 60), st.sampled_from(["a", "b", "c", "d"]), max_size=40)


@given(units, units)
def test_applying_the_delta_reaches_the_newer_keys(
    before: dict[int, str], after: dict[int, str]
) -> None:
    old, new = _keys(before), _keys(after)
    added, removed = old.delta_to(new)
    held = {i: t for i, t in before.items() if i not in set(removed.tolist())}
    assert not set(added.tolist()) & set(held)  # nothing added twice
    held.update({i: after[i] for i in added.tolist()})
    assert held == after
    rebuilt = old.changed(removed, _keys({i: after[i] for i in added.tolist()}))
    assert np.array_equal(rebuilt.ids, new.ids) and np.array_equal(rebuilt.hashes, new.hashes)
