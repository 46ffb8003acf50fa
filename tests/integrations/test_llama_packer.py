"""WindowpackPacker after other retrievers, inside a real llama-index query engine (MockLLM)."""

from __future__ import annotations

import pytest
from llama_index.core import Document as LlamaDocument
from llama_index.core import VectorStoreIndex
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import (
    NodeRelationship,
    NodeWithScore,
    QueryBundle,
    RelatedNodeInfo,
    TextNode,
)
from llama_index.core.utils import get_tokenizer

import windowpack as wp
from windowpack.integrations import WindowpackPacker

BUDGET = 400


class FixedRetriever(BaseRetriever):
    """Returns the nodes it was given: a stand-in for any app's own retriever."""

    def __init__(self, nodes: list[NodeWithScore]) -> None:
        super().__init__()
        self.nodes = nodes

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return list(self.nodes)


def _scored_nodes() -> list[NodeWithScore]:
    """Eight nodes over two documents, best first; node 5 (document b) scores highest."""
    scores = [0.2, 0.3, 0.1, 0.25, 0.15, 0.9, 0.05, 0.12]
    nodes = []
    for index, score in enumerate(scores):
        source = "ab"[index % 2]
        node = TextNode(
            id_=f"node-{index}",
            text=f"Fact {index}: the pump in bay {index} was checked by crew {index * 7}. " * 4,
            metadata={"page": index, "file_name": f"{source}.pdf"},
            start_char_idx=index * 1000,
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=f"doc-{source}")},
        )
        nodes.append(NodeWithScore(node=node, score=score))
    return sorted(nodes, key=lambda n: -(n.score or 0))


def _prompt(
    nodes: list[NodeWithScore], packer: WindowpackPacker
) -> tuple[str, list[NodeWithScore]]:
    engine = RetrieverQueryEngine.from_args(
        FixedRetriever(nodes), llm=MockLLM(), node_postprocessors=[packer]
    )
    response = engine.query("which crew checked the pump?")
    return str(response), response.source_nodes


def test_packed_nodes_reach_the_prompt_verbatim_within_budget() -> None:
    packer = WindowpackPacker(budget=BUDGET, tokenizer="cl100k_base")
    nodes = _scored_nodes()

    prompt, used = _prompt(nodes, packer)
    packed = packer.pack(nodes)
    window = packed.window

    assert window.text in prompt
    assert "\n\n".join(n.node.get_content() for n in used) == window.text
    assert len(get_tokenizer()(window.text)) == window.tokens <= BUDGET
    assert window.cacheable_prefix_tokens == 0  # the retrieved set depends on the question
    chunks = [n for n in used if n.node.metadata["kind"] == "chunk"]
    assert 0 < len(chunks) < len(nodes)  # the budget forced a choice
    assert any(n.node.metadata["kind"] == "gap" for n in used)


def test_the_best_nodes_win_and_keep_their_identity() -> None:
    nodes = _scored_nodes()
    by_id = {n.node.node_id: n for n in nodes}

    _, used = _prompt(nodes, WindowpackPacker(budget=BUDGET, tokenizer="cl100k_base"))

    chunks = [n for n in used if n.node.metadata["kind"] == "chunk"]
    kept = [n.node.node_id for n in chunks]
    assert "node-5" in kept and "node-6" not in kept
    for scored in chunks:
        original = by_id[scored.node.node_id]
        assert scored.score == original.score
        assert scored.node.get_content().endswith(original.node.get_content().strip())
        assert scored.node.metadata["page"] == original.node.metadata["page"]
        assert scored.node.ref_doc_id == original.node.ref_doc_id
    # Grouped by document (sorted by id), nodes in their document's order.
    places = [(n.node.ref_doc_id, n.node.metadata["page"]) for n in chunks]
    assert places == sorted(places)


def test_the_same_nodes_give_the_same_bytes_whatever_their_order() -> None:
    packer = WindowpackPacker(budget=5000, tokenizer="o200k_base")
    nodes = _scored_nodes()

    first = packer.pack(nodes).window
    again = packer.pack(list(reversed(nodes)) + nodes[:2]).window  # and duplicates

    assert first.text == again.text
    assert [i.kind for i in first.items] == ["chunk"] * len(nodes)  # all fit: lossless


def test_after_a_real_llama_index_vector_retriever() -> None:
    text = "\n\n".join(
        f"Paragraph {i}: the tide gauge read {i * 11} cm at noon." for i in range(60)
    )
    documents = [LlamaDocument(text=text, id_="tides", metadata={"file_name": "tides.txt"})]
    index = VectorStoreIndex.from_documents(
        documents,
        embed_model=MockEmbedding(embed_dim=8),
        transformations=[SentenceSplitter(chunk_size=64, chunk_overlap=0)],
    )
    retriever = index.as_retriever(similarity_top_k=12)
    packer = WindowpackPacker(budget=300, tokenizer="o200k_base")
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM(), node_postprocessors=[packer])

    response = engine.query("what did the tide gauge read?")
    window = packer.pack(retriever.retrieve("what did the tide gauge read?")).window

    assert window.text in str(response)
    assert window.tokens <= 300
    starts = [
        n.node.metadata["char_start"]
        for n in response.source_nodes
        if n.node.metadata["kind"] == "chunk"
    ]
    assert starts == sorted(starts) and starts
    assert all(
        n.node.metadata["file_name"] == "tides.txt"
        for n in response.source_nodes
        if n.node.metadata["kind"] == "chunk"
    )


def test_bad_settings_fail_at_construction() -> None:
    with pytest.raises(wp.InvalidArgumentError, match="budget"):
        WindowpackPacker(budget=0)
    with pytest.raises(wp.WindowpackError, match="no-such-tokenizer"):
        WindowpackPacker(budget=100, tokenizer="no-such-tokenizer")
