"""llama-index's `MetadataFilters` through the adapter: translated to windowpack's `where`,
agreeing with llama-index's own reading of them, and applied by `WindowpackRetriever`."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document as LangChainDocument
from llama_index.core.vector_stores.types import (
    ExactMatchFilter,
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)
from llama_index.core.vector_stores.utils import build_metadata_filter_fn

import windowpack as wp
from windowpack.filters import parse_filter
from windowpack.integrations import WindowpackLangChainRetriever, WindowpackRetriever, where_of

SCALAR_OPERATORS = ["==", "!=", ">", ">=", "<", "<="]


def test_each_operator_and_condition_has_its_where_shape() -> None:
    filters = MetadataFilters(
        filters=[
            MetadataFilter(key="team", value="ops"),
            MetadataFilter(key="rank", value=2, operator=FilterOperator.GTE),
            MetadataFilter(key="rank", value=5, operator=FilterOperator.LT),
            MetadataFilter(key="tier", value=["a", "b"], operator=FilterOperator.IN),
            MetadataFilter(key="tier", value=["z"], operator=FilterOperator.NIN),
            MetadataFilter(key="tags", value="urgent", operator=FilterOperator.CONTAINS),
            MetadataFilter(key="owner", value="amira", operator=FilterOperator.NE),
            MetadataFilter(key="size", value=1.5, operator=FilterOperator.GT),
            MetadataFilter(key="size", value=9, operator=FilterOperator.LTE),
            ExactMatchFilter(key="kind", value="log"),
            MetadataFilters(
                filters=[
                    MetadataFilter(key="day", value="2024-05-01", operator=FilterOperator.GTE),
                    MetadataFilter(key="tags", value=["x", "y"], operator=FilterOperator.ANY),
                ],
                condition=FilterCondition.OR,
            ),
            MetadataFilters(
                filters=[
                    MetadataFilter(key="team", value="infra"),
                    MetadataFilter(key="tags", value=["p", "q"], operator=FilterOperator.ALL),
                ],
                condition=FilterCondition.NOT,
            ),
        ]
    )
    assert where_of(filters) == {
        "$and": [
            {"team": {"$eq": "ops"}},
            {"rank": {"$gte": 2}},
            {"rank": {"$lt": 5}},
            {"tier": {"$in": ["a", "b"]}},
            {"tier": {"$nin": ["z"]}},
            {"tags": {"$contains": "urgent"}},
            {"owner": {"$ne": "amira"}},
            {"size": {"$gt": 1.5}},
            {"size": {"$lte": 9}},
            {"kind": {"$eq": "log"}},
            {
                "$or": [
                    {"day": {"$gte": "2024-05-01"}},
                    {"$or": [{"tags": {"$contains": "x"}}, {"tags": {"$contains": "y"}}]},
                ]
            },
            {
                "$not": {
                    "$or": [
                        {"team": {"$eq": "infra"}},
                        {"$and": [{"tags": {"$contains": "p"}}, {"tags": {"$contains": "q"}}]},
                    ]
                }
            },
        ]
    }
    assert parse_filter(where_of(filters)) is not None  # a valid windowpack filter


@pytest.mark.parametrize(
    "operator",
    [FilterOperator.TEXT_MATCH, FilterOperator.TEXT_MATCH_INSENSITIVE, FilterOperator.IS_EMPTY],
)
def test_an_operator_without_a_counterpart_is_an_error_naming_it(
    operator: FilterOperator,
) -> None:
    filters = MetadataFilters(
        filters=[
            MetadataFilter(key="team", value="ops"),
            MetadataFilter(key="title", value="log", operator=operator),
        ]
    )
    with pytest.raises(wp.InvalidArgumentError) as raised:
        where_of(filters)
    assert raised.value.argument == "filters.filters[1].operator"
    assert operator.name in str(raised.value)


def _filter_strategy() -> st.SearchStrategy[MetadataFilters]:
    scalar = st.builds(
        lambda key, op, value: MetadataFilter(key=key, value=value, operator=FilterOperator(op)),
        st.sampled_from(["a", "b"]),
        st.sampled_from(SCALAR_OPERATORS),
        st.integers(0, 4),
    )
    membership = st.builds(
        lambda key, op, values: MetadataFilter(key=key, value=values, operator=op),
        st.sampled_from(["a", "b"]),
        st.sampled_from([FilterOperator.IN, FilterOperator.NIN]),
        st.lists(st.integers(0, 4), min_size=1, max_size=3),
    )
    contains = st.builds(
        lambda value: MetadataFilter(key="tags", value=value, operator=FilterOperator.CONTAINS),
        st.integers(0, 4),
    )
    return st.builds(
        lambda items, condition: MetadataFilters(filters=items, condition=condition),
        st.lists(st.one_of(scalar, membership, contains), min_size=1, max_size=4),
        st.sampled_from(list(FilterCondition)),
    )


@settings(max_examples=200, deadline=None)
@given(
    filters=_filter_strategy(),
    metadata=st.fixed_dictionaries(
        {
            "a": st.integers(0, 4),
            "b": st.integers(0, 4),
            "tags": st.lists(st.integers(0, 4), max_size=3),
        }
    ),
)
def test_the_translation_keeps_what_llama_index_itself_keeps(
    filters: MetadataFilters, metadata: dict[str, Any]
) -> None:
    """On metadata holding every key filtered on (windowpack, as Chroma, reads a comparison
    on an absent key as false, `$ne` included: see docs/integrations.md)."""
    parsed = parse_filter(where_of(filters))
    assert parsed is not None
    llama_keeps = build_metadata_filter_fn(lambda _: metadata, filters)("node")
    assert parsed.matches(metadata) is llama_keeps


def test_the_retriever_packs_only_the_documents_its_filters_keep(
    ops_collection: wp.Collection, question: str
) -> None:
    filters = MetadataFilters(
        filters=[
            MetadataFilter(key="rank", value=1, operator=FilterOperator.GTE),
            MetadataFilter(key="rank", value=3, operator=FilterOperator.LTE),
        ]
    )
    retriever = WindowpackRetriever(ops_collection, budget=3000, filters=filters)
    nodes = retriever.retrieve(question)
    ranks = {node.node.metadata.get("document_id") for node in nodes}
    assert ranks - {None} == {"ferry-notes", "radar-notes", "barometer-notes"}
    same = WindowpackRetriever(
        ops_collection, budget=3000, where={"rank": {"$gte": 1, "$lte": 3}}
    ).pack(question)
    assert same.text == retriever.pack(question).text
    with pytest.raises(wp.InvalidArgumentError):
        WindowpackRetriever(ops_collection, budget=300, filters=filters, where={"team": "ops"})


def test_the_langchain_retriever_takes_where_here_or_in_invoke(
    ops_collection: wp.Collection, question: str
) -> None:
    retriever = WindowpackLangChainRetriever(
        collection=ops_collection, budget=3000, where={"rank": {"$in": [0, 5]}}
    )
    documents: list[LangChainDocument] = retriever.invoke(question)
    shown = {doc.metadata.get("document_id") for doc in documents} - {None}
    assert shown == {"generator-notes", "fuel-notes"}
    other = retriever.invoke(question, where={"rank": 2})
    assert {doc.metadata.get("document_id") for doc in other} - {None} == {"radar-notes"}
    with pytest.raises(wp.InvalidArgumentError):
        WindowpackLangChainRetriever(collection=ops_collection, budget=300, where={"rank": {}})
