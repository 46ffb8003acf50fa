"""`WindowpackRetriever`: a llama-index retriever whose results are a packed window."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from windowpack.errors import InvalidArgumentError, MissingDependencyError
from windowpack.filters import Filter, parse_filter
from windowpack.integrations.pieces import validate_k
from windowpack.pack import check_budget
from windowpack.text import get_token_counter
from windowpack.types import Window

try:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.llms import LLM
    from llama_index.core.schema import NodeWithScore, QueryBundle
    from llama_index.core.vector_stores.types import MetadataFilters

    from windowpack.integrations.llama_context import context_room, llama_tokens, settings_llm
    from windowpack.integrations.llama_filters import filter_of
    from windowpack.integrations.llama_nodes import window_node, window_nodes
except ImportError as error:
    raise MissingDependencyError("llama-index-core", "llama-index") from error

if TYPE_CHECKING:
    from windowpack.service import Collection

_FIT_ROUNDS = 4
"""Packs tried to fit an LLM's context: the budget counts in the window's tokenizer, the
context in llama-index's, so a window that overshoots is packed again, smaller by the
overshoot (one more pack at most, in practice)."""


class WindowpackRetriever(BaseRetriever):
    """Retrieves the window `collection.pack(query, budget=..., tokenizer=...)` as nodes.

    Nodes come in window order: the query-independent overview first, then documents in
    collection order, chunks verbatim, summaries and gap markers flagged by
    `metadata["kind"]`, with provenance metadata (see `WindowPiece`). Their texts joined by
    a blank line — what llama-index's response synthesizers do — are the window's text, so
    the prompt holds the window verbatim and within `budget` tokens. Put nothing that
    reorders or drops nodes (rerankers, similarity cut-offs) after this retriever: packing
    already chose and ordered them.

    `k` keeps only the k best-scored chunks and summaries (in window order; then the nodes
    are not the whole window). `one_node=True` returns the whole window as one node instead,
    so that synthesizers that make one LLM call per node (`refine`, `accumulate`) make one.

    The window fits one call of the LLM: `budget` is lowered, when it must be, to what the
    LLM's context window leaves once llama-index's question prompt and the room for the answer
    are counted (`llama_context`), so that no synthesizer splits it over calls. The LLM is
    `llm`, else `Settings.llm` (the one `RetrieverQueryEngine.from_args` uses when given none);
    with neither, `budget` is used as it is.

    `filters` (llama-index's `MetadataFilters`, as a vector index retriever takes them) or
    `where` (windowpack's own shape) packs only the documents whose metadata they keep; a
    filter operator windowpack has no counterpart for is an `InvalidArgumentError` naming it
    (`llama_filters`).
    """

    def __init__(
        self,
        collection: Collection,
        *,
        budget: int,
        tokenizer: str = "o200k_base",
        overview_tokens: int | None = None,
        align: bool | int = False,
        k: int | None = None,
        one_node: bool = False,
        filters: MetadataFilters | None = None,
        where: Mapping[str, Any] | Filter | None = None,
        llm: LLM | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        check_budget(budget)
        if filters is not None and where is not None:
            raise InvalidArgumentError("where", "give filters or where, not both")
        self.where = filter_of(filters) if filters is not None else parse_filter(where)
        validate_k(k)
        if one_node and k is not None:
            raise InvalidArgumentError("k", "cannot be combined with one_node=True")
        if llm is not None and not isinstance(llm, LLM):
            raise InvalidArgumentError("llm", f"must be a llama-index LLM, got {type(llm)!r}")
        get_token_counter(tokenizer)  # fail now, naming the tokenizer, not at the first query
        super().__init__(callback_manager=callback_manager, verbose=verbose)
        self.collection = collection
        self.budget = budget
        self.tokenizer = tokenizer
        self.overview_tokens = overview_tokens
        self.align = align
        self.k = k
        self.one_node = one_node
        self.llm = llm

    def pack(self, query: str) -> Window:
        """The window behind `retrieve(query)` (cached by the store: calling both is cheap),
        within `budget` and within one call of the LLM."""
        llm = self.llm if self.llm is not None else settings_llm()
        if llm is None:
            return self._pack(query, self.budget)
        room = context_room(llm, query)
        if room < 1:
            context = llm.metadata.context_window
            raise InvalidArgumentError(
                "llm", f"its context window ({context:,} tokens) leaves no room for a window"
            )
        budget = min(self.budget, room)
        for _ in range(_FIT_ROUNDS):
            window = self._pack(query, budget)
            used = llama_tokens(window.text)
            if used <= room or budget == 1:
                return window
            budget = max(1, min(budget - 1, budget * room // used))
        return window

    def _pack(self, query: str, budget: int) -> Window:
        return self.collection.pack(
            query,
            budget=budget,
            tokenizer=self.tokenizer,
            overview_tokens=self.overview_tokens,
            align=self.align,
            where=self.where,
        )

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        window = self.pack(query_bundle.query_str)
        return [window_node(window)] if self.one_node else window_nodes(window, k=self.k)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        # Packing is CPU and database work: keep it off the event loop.
        return await asyncio.to_thread(self._retrieve, query_bundle)
