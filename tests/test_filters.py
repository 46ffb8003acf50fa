"""Metadata filters (`windowpack.filters`): the Chroma `where` shape, checked once, with the
same rules wherever a filter is taken."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from windowpack.errors import InvalidArgumentError
from windowpack.filters import MAX_CONDITIONS, MAX_DEPTH, MAX_LIST, Filter, parse_filter


def _nested(depth: int) -> dict[str, Any]:
    where: dict[str, Any] = {"team": "ops"}
    for _ in range(depth):
        where = {"$not": where}
    return where


DOCS: dict[str, dict[str, Any]] = {
    "a": {"team": "ops", "year": 2021, "date": "2024-03-05", "tags": ["urgent", "db"]},
    "b": {"team": "infra", "year": 2019.5, "date": "2023-12-31T23:30:00-02:00"},
    "c": {"team": "ops", "year": "2022", "flag": True},
    "d": {"flag": 1, "score": 0.5},
    "e": {},
}


def kept(where: Any) -> list[str]:
    parsed = parse_filter(where)
    assert parsed is not None
    return [name for name, metadata in DOCS.items() if parsed.matches(metadata)]


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ({"team": "ops"}, ["a", "c"]),
        ({"team": {"$eq": "ops"}}, ["a", "c"]),
        ({"team": {"$ne": "ops"}}, ["b"]),  # a missing key fails $ne, as in Chroma
        ({"$not": {"team": "ops"}}, ["b", "d", "e"]),  # $not negates the whole clause
        ({"team": {"$in": ["infra", "sales"]}}, ["b"]),
        ({"team": {"$nin": ["infra"]}}, ["a", "c"]),
        ({"year": {"$gte": 2020}}, ["a"]),  # "2022" is a string, not a number
        ({"year": {"$gt": 2019, "$lt": 2020}}, ["b"]),
        ({"year": 2021.0}, ["a"]),  # 1 equals 1.0
        ({"flag": True}, ["c"]),  # True is not 1
        ({"flag": 1}, ["d"]),
        ({"date": {"$gte": "2024-01-01"}}, ["a", "b"]),  # 23:30 at -02:00 is 2024 in UTC
        ({"date": {"$lt": "2024-01-01T00:00:00Z"}}, []),
        ({"date": {"$lte": "2024-03-05"}}, ["a", "b"]),
        ({"tags": {"$contains": "db"}}, ["a"]),
        ({"flag": {"$exists": True}}, ["c", "d"]),
        ({"team": {"$exists": False}}, ["d", "e"]),
        ({"$or": [{"team": "infra"}, {"score": {"$lt": 1}}]}, ["b", "d"]),
        ({"$and": [{"team": "ops"}, {"year": {"$gte": 2000}}]}, ["a"]),
        ({"team": "ops", "flag": True}, ["c"]),  # several keys: all hold
        ({"$not": {"$or": [{"team": "ops"}, {"team": "infra"}]}}, ["d", "e"]),
    ],
)
def test_each_operator_keeps_exactly_the_documents_it_says(
    where: dict[str, Any], expected: list[str]
) -> None:
    assert kept(where) == expected


@pytest.mark.parametrize(
    ("where", "names"),
    [
        ("team", "where: must be a mapping"),
        ({"team": {"$like": "o%"}}, "where.team.$like: unknown operator"),
        ({"$xor": []}, "where.$xor: unknown operator"),
        ({"$and": {"team": "ops"}}, "where.$and: must be a non-empty list"),
        ({"$or": [{"team": "ops"}, {}]}, "where.$or[1]: must be a non-empty mapping"),
        ({"year": {"$gt": "soon"}}, "where.year.$gt: needs a number or an ISO date"),
        ({"year": {"$gt": True}}, "where.year.$gt: needs a number or an ISO date"),
        ({"team": {"$in": "ops"}}, "where.team.$in: needs a list"),
        ({"team": ["ops"]}, "where.team: compares with a string"),
        ({"team": None}, "where.team: compares with a string"),
        ({"team": {}}, "where.team: an empty condition"),
        ({"team": {"$exists": "yes"}}, "where.team.$exists: needs true or false"),
        ({"score": float("nan")}, "where.score: compares with a string"),
        ({"team": "\ud800x"}, "where.team: is not valid Unicode"),
        ({"team": {"$in": ["ops", "\udfff"]}}, "where.team.$in: is not valid Unicode"),
        ({"team": "a\x00b"}, "where.team: is not valid Unicode (a lone surrogate) or holds a NUL"),
        ({"$or": [{"t\ud800": 1}]}, "where.$or[0]: key 't\\ud800' is not valid Unicode"),
        ({"$and": [{"n": i} for i in range(MAX_LIST + 1)]}, "where.$and: lists at most 10,000"),
        ({"$or": [{"n": i} for i in range(MAX_CONDITIONS)]}, "where.$or[999].n: the filter holds"),
        (_nested(MAX_DEPTH + 1), "where" + ".$not" * (MAX_DEPTH + 1) + ": nests deeper than 32"),
    ],
)
def test_a_malformed_filter_names_the_argument_and_the_path(where: Any, names: str) -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        parse_filter(where)
    argument, _, problem = names.partition(": ")
    assert raised.value.argument == argument
    assert problem in raised.value.message


def test_no_filter_and_the_empty_filter_are_none_and_a_parsed_one_passes_through() -> None:
    assert parse_filter(None) is None
    assert parse_filter({}) is None
    parsed = parse_filter({"team": "ops"})
    assert isinstance(parsed, Filter)
    assert parse_filter(parsed) is parsed


def test_the_key_is_canonical_and_the_filter_owns_its_copy() -> None:
    where: dict[str, Any] = {"year": {"$lt": 3, "$gt": 1}, "team": "ops"}
    one = parse_filter(where)
    two = parse_filter({"team": "ops", "year": {"$gt": 1, "$lt": 3}})
    assert one is not None and two is not None
    assert one.key == two.key
    where["team"] = "infra"
    assert one.matches({"team": "ops", "year": 2})


def test_filters_are_equal_and_hash_alike_by_their_key() -> None:
    one = parse_filter({"team": "ops", "year": {"$gt": 1}})
    two = parse_filter({"year": {"$gt": 1}, "team": "ops"})
    other = parse_filter({"team": "infra"})
    assert one == two and hash(one) == hash(two)
    assert one != other and one != one.key
    assert len({one, two, other}) == 2


def test_the_argument_named_is_the_callers() -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        parse_filter({"a": {"$bad": 1}}, argument="--where")
    assert raised.value.argument == "--where.a.$bad"


values = st.one_of(st.integers(-5, 5), st.sampled_from(["x", "y", "2024-01-02"]), st.booleans())
metadata = st.dictionaries(st.sampled_from(["k", "m"]), values, max_size=2)
leaf = st.builds(
    lambda key, op, value: {key: {op: value}},
    st.sampled_from(["k", "m"]),
    st.sampled_from(["$eq", "$ne", "$in", "$nin"]),
    values,
).map(lambda clause: _list_operands(clause))


def _list_operands(clause: dict[str, Any]) -> dict[str, Any]:
    ((key, condition),) = clause.items()
    ((op, value),) = condition.items()
    return {key: {op: [value] if op in ("$in", "$nin") else value}}


clauses = st.recursive(
    leaf,
    lambda inner: st.one_of(
        st.builds(lambda items: {"$and": items}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda items: {"$or": items}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda item: {"$not": item}, inner),
    ),
    max_leaves=8,
)


@given(clause=clauses, other=clauses, meta=metadata)
def test_combinations_follow_boolean_logic(
    clause: dict[str, Any], other: dict[str, Any], meta: dict[str, Any]
) -> None:
    def holds(where: dict[str, Any]) -> bool:
        parsed = parse_filter(where)
        assert parsed is not None
        return parsed.matches(meta)

    assert holds({"$not": clause}) is not holds(clause)
    assert holds({"$and": [clause, other]}) is (holds(clause) and holds(other))
    assert holds({"$or": [clause, other]}) is (holds(clause) or holds(other))
    # $in of one value is $eq; $nin of one value is $ne
    ((key, condition),) = _first_leaf(clause).items()
    ((op, value),) = condition.items()
    if op == "$in":
        assert holds({key: {"$in": value}}) is holds({key: {"$eq": value[0]}})
    if op == "$nin":
        assert holds({key: {"$nin": value}}) is holds({key: {"$ne": value[0]}})


def _first_leaf(clause: dict[str, Any]) -> dict[str, Any]:
    ((name, operand),) = clause.items()
    if name == "$not":
        return _first_leaf(operand)
    if name in ("$and", "$or"):
        return _first_leaf(operand[0])
    return clause


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["team", "year", "$and", "$or", "$not", "$in", "$gt", "$exists", "x"])
            | st.text(max_size=4),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@given(where=json_values, meta=metadata)
def test_any_input_is_a_filter_or_an_error_naming_where(where: Any, meta: dict[str, Any]) -> None:
    """Whatever a caller sends (lone surrogates included: st.text makes them), the outcome is
    a filter whose key encodes and whose test runs, or an InvalidArgumentError."""
    try:
        parsed = parse_filter(where)
    except InvalidArgumentError as error:
        assert error.argument is not None and error.argument.startswith("where")
        return
    if parsed is not None:
        parsed.key.encode("utf-8")
        assert parsed.matches(meta) in (True, False)
