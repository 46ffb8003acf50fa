"""llama-index's `MetadataFilters` as windowpack's `where` filter (Chroma's shape, `filters`).

    MetadataFilters(filters=[MetadataFilter(key="year", value=2020, operator=">=")])
    -> {"year": {"$gte": 2020}}

Operators: EQ, NE, GT, GTE, LT, LTE, IN, NIN, CONTAINS, and ANY / ALL (a list value holding
any / all of the given elements: `$contains` under `$or` / `$and`); conditions AND, OR and
NOT (none of the filters holds, as llama-index's own vector store reads it), nested filters
too, and the legacy `ExactMatchFilter`. TEXT_MATCH, TEXT_MATCH_INSENSITIVE and IS_EMPTY have
no counterpart: an `InvalidArgumentError` names the operator. Values are compared by
windowpack's rules (`filters`: by type, ranges on numbers and ISO dates).
"""

from __future__ import annotations

from typing import Any

from windowpack.errors import InvalidArgumentError, MissingDependencyError
from windowpack.filters import Filter, parse_filter

try:
    from llama_index.core.vector_stores.types import (
        FilterCondition,
        FilterOperator,
        MetadataFilters,
    )
except ImportError as error:
    raise MissingDependencyError("llama-index-core", "llama-index") from error

_COMPARISONS = {
    FilterOperator.EQ: "$eq",
    FilterOperator.NE: "$ne",
    FilterOperator.GT: "$gt",
    FilterOperator.GTE: "$gte",
    FilterOperator.LT: "$lt",
    FilterOperator.LTE: "$lte",
    FilterOperator.IN: "$in",
    FilterOperator.NIN: "$nin",
    FilterOperator.CONTAINS: "$contains",
}
_EACH = {FilterOperator.ANY: "$or", FilterOperator.ALL: "$and"}


def where_of(filters: MetadataFilters, argument: str = "filters") -> dict[str, Any]:
    """The `where` mapping that says what `filters` says (see the module)."""
    clauses = [_clause(item, f"{argument}.filters[{i}]") for i, item in enumerate(filters.filters)]
    if not clauses:
        raise InvalidArgumentError(argument, "holds no filter")
    condition = filters.condition or FilterCondition.AND
    if condition == FilterCondition.NOT:
        return {"$not": clauses[0] if len(clauses) == 1 else {"$or": clauses}}
    if len(clauses) == 1:
        return clauses[0]
    return {"$or" if condition == FilterCondition.OR else "$and": clauses}


def filter_of(filters: MetadataFilters, argument: str = "filters") -> Filter | None:
    """`where_of(filters)`, checked (`filters.parse_filter`, errors naming `argument`)."""
    return parse_filter(where_of(filters, argument), argument=argument)


def _clause(item: Any, path: str) -> dict[str, Any]:
    if isinstance(item, MetadataFilters):
        return where_of(item, path)
    # A MetadataFilter, or the legacy ExactMatchFilter (key and value: equality).
    operator = getattr(item, "operator", FilterOperator.EQ)
    if operator in _COMPARISONS:
        return {item.key: {_COMPARISONS[operator]: item.value}}
    if operator in _EACH:
        values = item.value if isinstance(item.value, list) else [item.value]
        return {_EACH[operator]: [{item.key: {"$contains": value}} for value in values]}
    raise InvalidArgumentError(
        f"{path}.operator",
        f"{operator.name} has no windowpack filter; use one of "
        + ", ".join(op.name for op in [*_COMPARISONS, *_EACH]),
    )
