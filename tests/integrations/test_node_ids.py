"""Every window item is its own node or document: ids unique within a window, stable across.

A regression test: collection-level summaries have no document, and two of them once got the
same id, so llama-index (one node per id) and LangChain's stores dropped one of them.
"""

from __future__ import annotations

import pytest

import windowpack as wp
from windowpack.integrations import WindowpackLangChainRetriever, WindowpackRetriever, window_pieces
from windowpack.types import HeaderStyle

QUESTION = "who signed off the radar work?"


# Budgets at which this tree's window holds two or more collection-level summaries (below
# ~1500 the allocator spends the room on verbatim chunks instead; at 4000 compact headers
# leave room for the whole collection, "full" ones do not); the test asserts it.
@pytest.mark.parametrize(
    ("budget", "headers"), [(1500, "compact"), (2000, "compact"), (3000, "compact"), (4000, "full")]
)
def test_piece_ids_are_unique_with_several_collection_level_summaries(
    many_collection: wp.Collection, budget: int, headers: HeaderStyle
) -> None:
    window = many_collection.pack(
        QUESTION, budget=budget, headers=headers, overview_tokens=budget // 8
    )
    collection_level = [i for i in window.items if i.kind == "summary" and i.document_id is None]

    ids = [piece.id for piece in window_pieces(window)]

    assert len(collection_level) >= 2
    assert len(set(ids)) == len(ids) == len(window.items)
    assert all(item.document_range is not None for item in collection_level)


def test_llama_index_keeps_every_item_as_its_own_node(many_collection: wp.Collection) -> None:
    retriever = WindowpackRetriever(many_collection, budget=2000, overview_tokens=250)

    nodes = retriever.retrieve(QUESTION)

    assert len({n.node.node_id for n in nodes}) == len(nodes) == len(retriever.pack(QUESTION).items)


def test_langchain_documents_have_distinct_ids(many_collection: wp.Collection) -> None:
    retriever = WindowpackLangChainRetriever(
        collection=many_collection, budget=2000, overview_tokens=250
    )

    documents = retriever.invoke(QUESTION)

    assert (
        len({d.id for d in documents})
        == len(documents)
        == len(many_collection.pack(QUESTION, budget=2000, overview_tokens=250).items)
    )


def test_a_collection_summary_keeps_its_id_across_questions(many_collection: wp.Collection) -> None:
    def overview_ids(question: str) -> dict[str, str]:
        window = many_collection.pack(question, budget=2000, overview_tokens=250)
        return {p.id: p.text for p in window_pieces(window) if p.metadata["cacheable"]}

    first, second = overview_ids(QUESTION), overview_ids("fuel pump valve checks")

    assert len(first) >= 3 and first == second
