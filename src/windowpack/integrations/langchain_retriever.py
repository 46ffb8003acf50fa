"""`WindowpackLangChainRetriever`: a LangChain retriever whose documents are a packed window."""

from __future__ import annotations

from typing import Any

from windowpack.errors import MissingDependencyError
from windowpack.integrations.pieces import window_pieces
from windowpack.pack import check_budget

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document as LangChainDocument
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ConfigDict, model_validator
except ImportError as error:
    raise MissingDependencyError("langchain-core", "langchain") from error


class WindowpackLangChainRetriever(BaseRetriever):
    """Returns `collection.pack(query, budget=..., tokenizer=...)` as LangChain documents.

    One document per window item, in window order; `page_content` is the item's piece of the
    window (headers included) and `metadata` its provenance (see `WindowPiece`), so joining
    the documents with a blank line (the "stuff" chain's default) gives the window's text.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    collection: Any  # a windowpack Collection (anything with its `pack`)
    budget: int
    tokenizer: str = "o200k_base"
    overview_tokens: int | None = None
    align: bool = False

    @model_validator(mode="after")
    def _valid_budget(self) -> WindowpackLangChainRetriever:
        check_budget(self.budget)
        return self

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[LangChainDocument]:
        window = self.collection.pack(
            query,
            budget=self.budget,
            tokenizer=self.tokenizer,
            overview_tokens=self.overview_tokens,
            align=self.align,
        )
        return [
            LangChainDocument(page_content=piece.text, metadata=piece.metadata, id=piece.id)
            for piece in window_pieces(window)
        ]
