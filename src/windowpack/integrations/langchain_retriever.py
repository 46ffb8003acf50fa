"""`WindowpackLangChainRetriever`: a LangChain retriever whose documents are a packed window."""

from __future__ import annotations

from typing import Any

from windowpack.errors import InvalidArgumentError, MissingDependencyError
from windowpack.filters import parse_filter
from windowpack.integrations.pieces import best_pieces, validate_k, window_pieces
from windowpack.pack import check_budget

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document as LangChainDocument
    from langchain_core.retrievers import BaseRetriever
    from pydantic import ConfigDict, model_validator
except ImportError as error:
    raise MissingDependencyError("langchain-core", "langchain") from error

# LangChain itself reads `verbose` from `invoke`'s keyword arguments and passes it on.
_INVOKE_ARGUMENTS = frozenset({"k", "verbose", "where"})


class WindowpackLangChainRetriever(BaseRetriever):
    """Returns `collection.pack(query, budget=..., tokenizer=...)` as LangChain documents.

    One document per window item, in window order; `page_content` is the item's piece of the
    window (headers included) and `metadata` its provenance (see `WindowPiece`), so joining
    the documents with a blank line (the "stuff" chain's default) gives the window's text.
    With `k` (here or in `invoke(query, k=...)`) only the k best-scored chunks and summaries
    of the window come back, still in window order: then they are not the whole window.
    `where` (here or in `invoke(query, where=...)`: windowpack's metadata filter, Chroma's
    shape) packs only the documents whose metadata it keeps. An unknown argument is an
    `InvalidArgumentError` naming it.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    collection: Any  # a windowpack Collection (anything with its `pack`)
    budget: int
    tokenizer: str = "o200k_base"
    overview_tokens: int | None = None
    align: bool | int = False
    k: int | None = None
    where: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _known_arguments(cls, values: Any) -> Any:
        # BaseRetriever ignores unknown fields: a typo (or `top_k`) would be silently dropped.
        if isinstance(values, dict):
            unknown = sorted(set(values) - set(cls.model_fields))
            if unknown:
                known = ", ".join(sorted(cls.model_fields))
                raise InvalidArgumentError(unknown[0], f"is not an argument (known: {known})")
            validate_k(values.get("k"))  # before pydantic turns True or 2.0 into an int
        return values

    @model_validator(mode="after")
    def _valid_budget(self) -> WindowpackLangChainRetriever:
        check_budget(self.budget)
        parse_filter(self.where)
        return self

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[LangChainDocument]:
        unknown = sorted(set(kwargs) - _INVOKE_ARGUMENTS)
        if unknown:
            raise InvalidArgumentError(unknown[0], "is not an argument of invoke (known: k, where)")
        window = self.collection.pack(
            query,
            budget=self.budget,
            tokenizer=self.tokenizer,
            overview_tokens=self.overview_tokens,
            align=self.align,
            where=kwargs.get("where", self.where),
        )
        pieces = best_pieces(window_pieces(window), kwargs.get("k", self.k))
        return [
            LangChainDocument(page_content=piece.text, metadata=piece.metadata, id=piece.id)
            for piece in pieces
        ]
