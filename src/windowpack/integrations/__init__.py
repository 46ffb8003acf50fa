"""Adapters for RAG frameworks: llama-index (extra `llama-index`) and LangChain (`langchain`).

    from windowpack.integrations import WindowpackRetriever, WindowpackPacker
    retriever = WindowpackRetriever(collection, budget=8_000, tokenizer="o200k_base")
    engine = RetrieverQueryEngine.from_args(retriever, llm=llm)

Names load on first use, so importing this package needs neither framework; a missing one
raises `MissingDependencyError` naming the extra to install.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from windowpack.integrations.langchain_retriever import WindowpackLangChainRetriever
    from windowpack.integrations.llama_filters import where_of
    from windowpack.integrations.llama_nodes import window_node, window_nodes
    from windowpack.integrations.llama_packer import WindowpackPacker
    from windowpack.integrations.llama_retriever import WindowpackRetriever
    from windowpack.integrations.pieces import WindowPiece, best_pieces, window_pieces
    from windowpack.pack import PackedPassages, Passage, pack_passages

__all__ = [
    "PackedPassages",
    "Passage",
    "WindowPiece",
    "WindowpackLangChainRetriever",
    "WindowpackPacker",
    "WindowpackRetriever",
    "best_pieces",
    "pack_passages",
    "where_of",
    "window_node",
    "window_nodes",
    "window_pieces",
]

# Packing passages is the pack component's public function, re-exported for adapter users.
_MODULES = {
    "PackedPassages": "windowpack.pack",
    "Passage": "windowpack.pack",
    "WindowPiece": "windowpack.integrations.pieces",
    "WindowpackLangChainRetriever": "windowpack.integrations.langchain_retriever",
    "WindowpackPacker": "windowpack.integrations.llama_packer",
    "WindowpackRetriever": "windowpack.integrations.llama_retriever",
    "best_pieces": "windowpack.integrations.pieces",
    "pack_passages": "windowpack.pack",
    "window_node": "windowpack.integrations.llama_nodes",
    "window_nodes": "windowpack.integrations.llama_nodes",
    "window_pieces": "windowpack.integrations.pieces",
    "where_of": "windowpack.integrations.llama_filters",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'windowpack.integrations' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
