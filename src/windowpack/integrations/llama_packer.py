"""`WindowpackPacker`: a llama-index node postprocessor that packs any retriever's nodes."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import field_validator

from windowpack.errors import MissingDependencyError
from windowpack.pack import PackedPassages, check_budget, pack_passages
from windowpack.text import get_token_counter

try:
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import NodeWithScore, QueryBundle

    from windowpack.integrations.llama_nodes import node_passages, packed_nodes
except ImportError as error:
    raise MissingDependencyError("llama-index-core", "llama-index") from error


class WindowpackPacker(BaseNodePostprocessor):
    """Packs the nodes of any retriever into `budget` tokens of `tokenizer`, exactly.

    windowpack's allocator takes the most relevant nodes while they fit (their scores,
    standardised; retrieval order where there are none), and its layout renders them grouped
    by source document (`ref_doc_id`), in document position order, each under its document's
    header, with gap markers for what was left out. The returned nodes keep their source
    node's id, metadata and score, and add windowpack's provenance; their texts joined by a
    blank line are the packed window. Documents are ordered by id and nodes by position,
    never by score, so the same nodes give the same bytes for every question.
    """

    budget: int
    tokenizer: str = "o200k_base"

    # windowpack's own errors pass through pydantic unwrapped (they are not ValueErrors).
    @field_validator("budget")
    @classmethod
    def _valid_budget(cls, budget: int) -> int:
        check_budget(budget)
        return budget

    @field_validator("tokenizer")
    @classmethod
    def _known_tokenizer(cls, tokenizer: str) -> str:
        get_token_counter(tokenizer)  # fail now, naming the tokenizer
        return tokenizer

    @classmethod
    def class_name(cls) -> str:
        return "WindowpackPacker"

    def pack(self, nodes: Sequence[NodeWithScore], query: str = "") -> PackedPassages:
        """The packed window of these nodes, with the nodes by document to map items back."""
        return pack_passages(
            node_passages(nodes), budget=self.budget, tokenizer=self.tokenizer, query=query
        )

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        query = query_bundle.query_str if query_bundle is not None else ""
        return packed_nodes(self.pack(nodes, query))
