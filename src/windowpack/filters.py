"""Metadata filters: which documents a search, a pack or a delete may touch.

A filter is written in Chroma's `where` shape, the one vector-store users know:

    {"team": "ops"}                                   equality
    {"year": {"$gte": 2020, "$lt": 2024}}             ranges on numbers
    {"date": {"$gte": "2024-01-01"}}                  ranges on ISO dates and times
    {"team": {"$in": ["ops", "infra"]}}               membership ($nin: not in)
    {"tags": {"$contains": "urgent"}}                 a list value holding an element
    {"owner": {"$exists": False}}                     the key is absent
    {"$and": [...]}, {"$or": [...]}, {"$not": {...}}  combinations

Several keys in one mapping must all hold (an implicit `$and`). Operators: `$eq`, `$ne`,
`$gt`, `$gte`, `$lt`, `$lte`, `$in`, `$nin`, `$contains`, `$exists`. llama-index's
`MetadataFilters` are translated to this shape by `windowpack.integrations`.

Rules, the same everywhere a filter is taken (library, CLI, REST, client, MCP):

- Values are compared by type: a string never equals a number, and `True` is not `1`;
  `1` equals `1.0`.
- A range compares numbers with numbers, and an ISO date or date-time (`"2024-05-01"`,
  `"2024-05-01T12:00:00+02:00"`) with another; a date-time without an offset is read as
  UTC, a date as its midnight. A value of another kind never satisfies a range.
- A comparison on a key the document lacks is false, `$ne` and `$nin` included (as in
  Chroma); `$not` negates a whole clause, so `{"$not": {"team": "ops"}}` keeps documents
  without a `team`. `{"k": {"$exists": False}}` asks for the absent key itself.
- Keys name top-level metadata keys; a document's id is not metadata (delete takes `ids`).

`parse_filter` checks a filter once, naming the argument and the path of what is wrong
(`where.$and[1].year: $gt needs a number or an ISO date, got 'soon'`); a parsed `Filter`
knows whether a metadata mapping matches and has a canonical `key` for caches.

Limits, so that a filter's cost is bounded whoever sends it (a filter is matched against
every document's metadata, and keys the caches): at most `MAX_DEPTH` levels of nesting, at
most `MAX_LIST` entries in any list (`$in`, `$nin`, `$and`, `$or`), and at most
`MAX_CONDITIONS` key conditions and clauses in the whole filter. Keys and strings must be
valid Unicode (no lone surrogate) without NUL, as stored metadata is.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from windowpack.errors import InvalidArgumentError

Scalar = str | int | float | bool
"""What a filter compares a metadata value with."""

COMPARISONS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$contains", "$exists")
"""The operators a key's condition may use."""
COMBINATIONS = ("$and", "$or", "$not")
"""The operators that combine clauses."""

_RANGES = ("$gt", "$gte", "$lt", "$lte")
MAX_DEPTH = 32
"""The deepest a filter may nest clauses."""
MAX_LIST = 10_000
"""The most entries of any one list in a filter (`$in`, `$nin`, `$and`, `$or`)."""
MAX_CONDITIONS = 1_000
"""The most clauses and key conditions a whole filter may hold: a filter runs once per
document, so its size multiplies the cost of every filtered request."""


@dataclass(frozen=True, eq=False)
class Filter:
    """A checked metadata filter (`parse_filter`): `matches(metadata)` says whether a
    document with that metadata is kept; `key` is its canonical JSON, equal for filters
    that say the same thing in the same words (key order aside). Filters are equal, and
    hash alike, by `key`, so a request holding one can key a cache."""

    where: Mapping[str, Any]
    key: str
    _test: Callable[[Mapping[str, Any]], bool]

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        """Whether a document with this metadata passes the filter."""
        return self._test(metadata)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Filter) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"Filter({self.key})"


def parse_filter(
    where: Mapping[str, Any] | Filter | None, argument: str = "where"
) -> Filter | None:
    """The checked filter of `where` (None for None or an empty mapping: no filter).

    A malformed filter is an `InvalidArgumentError` naming `argument` and the path inside
    it of the part that is wrong.
    """
    if where is None or isinstance(where, Filter):
        return where
    if not isinstance(where, Mapping):
        raise InvalidArgumentError(
            argument, f"must be a mapping such as {{'team': 'ops'}}, got {type(where).__name__}"
        )
    if not where:
        return None
    test = _clause(where, argument, 0, _Tally())
    canonical = json.loads(json.dumps(where))  # a plain copy: callers may mutate theirs
    key = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return Filter(canonical, key, test)


class _Tally:
    """The conditions a filter has held so far, checked against `MAX_CONDITIONS` as each
    is read, so that an oversized filter is refused before the rest of it is looked at."""

    def __init__(self) -> None:
        self.conditions = 0

    def count(self, path: str) -> None:
        self.conditions += 1
        if self.conditions > MAX_CONDITIONS:
            raise InvalidArgumentError(
                path, f"the filter holds more than {MAX_CONDITIONS:,} clauses and conditions"
            )


def _clause(
    where: Any, path: str, depth: int, tally: _Tally
) -> Callable[[Mapping[str, Any]], bool]:
    if depth > MAX_DEPTH:
        raise InvalidArgumentError(path, f"nests deeper than {MAX_DEPTH} levels")
    if not isinstance(where, Mapping) or not where:
        raise InvalidArgumentError(path, "must be a non-empty mapping of keys to conditions")
    tests = []
    for name, condition in where.items():
        if not isinstance(name, str) or not name:
            raise InvalidArgumentError(path, f"keys must be non-empty strings, got {name!r}")
        if _not_unicode(name):
            raise InvalidArgumentError(
                path, f"key {name!r} is not valid Unicode (a lone surrogate) or holds a NUL"
            )
        tally.count(f"{path}.{name}")
        if name in COMBINATIONS:
            tests.append(_combination(name, condition, f"{path}.{name}", depth, tally))
        elif name.startswith("$"):
            raise InvalidArgumentError(
                f"{path}.{name}",
                f"unknown operator here; combine clauses with {', '.join(COMBINATIONS)}",
            )
        else:
            tests.append(_condition(name, condition, f"{path}.{name}"))
    return tests[0] if len(tests) == 1 else _all(tests)


def _combination(
    name: str, operand: Any, path: str, depth: int, tally: _Tally
) -> Callable[..., bool]:
    if name == "$not":
        inner = _clause(operand, path, depth + 1, tally)
        return lambda metadata: not inner(metadata)
    if isinstance(operand, str | bytes) or not isinstance(operand, Sequence) or not operand:
        raise InvalidArgumentError(path, "must be a non-empty list of clauses")
    if len(operand) > MAX_LIST:
        raise InvalidArgumentError(path, f"lists at most {MAX_LIST:,} clauses")
    tests = [_clause(item, f"{path}[{i}]", depth + 1, tally) for i, item in enumerate(operand)]
    return _all(tests) if name == "$and" else _any(tests)


def _all(tests: list[Callable[[Mapping[str, Any]], bool]]) -> Callable[..., bool]:
    return lambda metadata: all(test(metadata) for test in tests)


def _any(tests: list[Callable[[Mapping[str, Any]], bool]]) -> Callable[..., bool]:
    return lambda metadata: any(test(metadata) for test in tests)


def _condition(key: str, condition: Any, path: str) -> Callable[[Mapping[str, Any]], bool]:
    """The test of one key's condition: a value (equality) or a mapping of operators."""
    if not isinstance(condition, Mapping):
        return _compare(key, "$eq", _scalar(condition, path, "$eq"), path)
    if not condition:
        raise InvalidArgumentError(path, "an empty condition; give a value or an operator")
    tests = []
    for operator, operand in condition.items():
        if operator not in COMPARISONS:
            known = ", ".join(COMPARISONS)
            raise InvalidArgumentError(
                f"{path}.{operator}", f"unknown operator; use one of {known}"
            )
        tests.append(_compare(key, operator, _operand(operator, operand, path), path))
    return tests[0] if len(tests) == 1 else _all(tests)


def _operand(operator: str, operand: Any, path: str) -> Any:
    if operator in ("$in", "$nin"):
        if isinstance(operand, str | bytes) or not isinstance(operand, Sequence):
            raise InvalidArgumentError(f"{path}.{operator}", "needs a list of values")
        if len(operand) > MAX_LIST:
            raise InvalidArgumentError(f"{path}.{operator}", f"lists at most {MAX_LIST:,} values")
        return [_scalar(value, path, operator) for value in operand]
    if operator == "$exists":
        if not isinstance(operand, bool):
            raise InvalidArgumentError(f"{path}.$exists", f"needs true or false, got {operand!r}")
        return operand
    value = _scalar(operand, path, operator)
    if operator in _RANGES and _ordered(value) is None:
        raise InvalidArgumentError(
            f"{path}.{operator}", f"needs a number or an ISO date, got {operand!r}"
        )
    return value


def _scalar(value: Any, path: str, operator: str) -> Scalar:
    if isinstance(value, str) and _not_unicode(value):
        raise InvalidArgumentError(
            f"{path}.{operator}" if operator != "$eq" else path,
            f"is not valid Unicode (a lone surrogate) or holds a NUL, got {value!r}",
        )
    if isinstance(value, bool | int | str):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    raise InvalidArgumentError(
        f"{path}.{operator}" if operator != "$eq" else path,
        f"compares with a string, a number or a boolean, got {value!r}",
    )


def _not_unicode(text: str) -> bool:
    """Whether `text` holds a lone surrogate or a NUL: no stored metadata can
    (`text.storable`), the canonical key would fail to encode a surrogate, and a session
    token, whose settings hold the key, refuses both."""
    if "\x00" in text:
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _compare(
    key: str, operator: str, operand: Any, path: str
) -> Callable[[Mapping[str, Any]], bool]:
    missing = object()
    if operator == "$exists":
        return lambda metadata: (key in metadata) is operand
    if operator in ("$eq", "$ne"):
        want = operator == "$eq"
        return lambda metadata: (
            (value := metadata.get(key, missing)) is not missing and _equal(value, operand) is want
        )
    if operator in ("$in", "$nin"):
        want = operator == "$in"
        return lambda metadata: (
            (value := metadata.get(key, missing)) is not missing
            and any(_equal(value, item) for item in operand) is want
        )
    if operator == "$contains":
        return lambda metadata: _contains(metadata.get(key), operand)
    bound = _ordered(operand)
    assert bound is not None  # checked by _operand
    holds = _RANGE_TESTS[operator]
    return lambda metadata: _in_range(metadata.get(key, missing), bound, holds)


_RANGE_TESTS: dict[str, Callable[[Any, Any], bool]] = {
    "$gt": lambda value, bound: value > bound,
    "$gte": lambda value, bound: value >= bound,
    "$lt": lambda value, bound: value < bound,
    "$lte": lambda value, bound: value <= bound,
}


def _equal(value: Any, operand: Scalar) -> bool:
    if isinstance(value, bool) or isinstance(operand, bool):
        return isinstance(value, bool) and isinstance(operand, bool) and value is operand
    if isinstance(value, int | float) and isinstance(operand, int | float):
        return value == operand
    return type(value) is type(operand) and bool(value == operand)


def _contains(value: Any, operand: Scalar) -> bool:
    if isinstance(value, list | tuple):
        return any(_equal(item, operand) for item in value)
    if isinstance(value, str) and isinstance(operand, str):
        return operand in value
    return False


def _in_range(value: Any, bound: tuple[int, Any], holds: Callable[[Any, Any], bool]) -> bool:
    ordered = _ordered(value)
    if ordered is None or ordered[0] != bound[0]:
        return False
    return holds(ordered[1], bound[1])


def _ordered(value: Any) -> tuple[int, Any] | None:
    """A value's place on one of two scales: (0, number) or (1, UTC date-time); None for a
    value no range can compare (a boolean, a string that is no ISO date, a list...)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return (0, value) if not (isinstance(value, float) and math.isnan(value)) else None
    if isinstance(value, str):
        moment = _iso_moment(value.strip())
        return (1, moment) if moment is not None else None
    return None


def _iso_moment(text: str) -> datetime | None:
    if not 8 <= len(text) <= 40 or not text[:4].isdigit():
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        try:
            day = date.fromisoformat(text)
        except ValueError:
            return None
        moment = datetime(day.year, day.month, day.day)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
