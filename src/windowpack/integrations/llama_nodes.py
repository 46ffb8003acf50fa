"""Windows as llama-index nodes, and llama-index nodes as passages to pack.

Every llama-index import of the integration goes through here, so a missing extra fails in
one place, naming it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from windowpack.errors import MissingDependencyError
from windowpack.integrations.pieces import WindowPiece, best_pieces, window_pieces
from windowpack.pack import PackedPassages, Passage
from windowpack.types import Window

try:
    from llama_index.core.schema import (
        MetadataMode,
        NodeRelationship,
        NodeWithScore,
        RelatedNodeInfo,
        TextNode,
    )
except ImportError as error:
    raise MissingDependencyError("llama-index-core", "llama-index") from error


def window_nodes(window: Window, *, k: int | None = None) -> list[NodeWithScore]:
    """The window's items as nodes, in window order.

    A node's text is its piece of the window (headers included), so a synthesizer that joins
    node texts with a blank line rebuilds `window.text` byte for byte; chunk text inside it is
    verbatim. Metadata is provenance (`WindowPiece`), kept out of the LLM's and the
    embedder's view so that it does not change the prompt. With `k`, only the k best-scored
    chunks and summaries (see `best_pieces`).
    """
    pieces = best_pieces(window_pieces(window), k)
    return [_node(piece, dict(piece.metadata), piece.id, piece.score) for piece in pieces]


def window_node(window: Window) -> NodeWithScore:
    """The whole window as one node: its text is `window.text`, its metadata the window's
    figures (hidden from the LLM). Its id is stable for the same window bytes."""
    metadata: dict[str, Any] = {
        "kind": "window",
        "tokens": window.tokens,
        "budget": window.budget,
        "tokenizer": window.tokenizer,
        "cacheable_prefix_tokens": window.cacheable_prefix_tokens,
        "cacheable_prefix_chars": window.cacheable_prefix_chars,
        "index_version": window.index_version,
        "items": len(window.items),
    }
    digest = hashlib.sha256(window.text.encode("utf-8")).hexdigest()[:32]
    node = TextNode(
        id_=f"wp-window-{digest}",
        text=window.text,
        metadata=metadata,
        excluded_llm_metadata_keys=list(metadata),
        excluded_embed_metadata_keys=list(metadata),
    )
    return NodeWithScore(node=node, score=None)


def packed_nodes(packed: PackedPassages) -> list[NodeWithScore]:
    """Nodes for a window of packed passages: a chunk keeps its source node's id, metadata
    and score; windowpack's provenance keys are added (and win on a clash)."""
    nodes = []
    for piece in window_pieces(packed.window):
        passage = packed.passage(piece.item)
        if passage is None:
            nodes.append(_node(piece, dict(piece.metadata), piece.id, piece.score))
        else:
            metadata = {**passage.metadata, **piece.metadata}
            nodes.append(_node(piece, metadata, passage.id, passage.score))
    return nodes


def node_passages(nodes: Sequence[NodeWithScore]) -> list[Passage]:
    """Nodes from any retriever as passages: text without metadata, grouped by source
    document (the node itself when it has none), titled by a `title` or `file_name` key."""
    passages = []
    for scored in nodes:
        node = scored.node
        metadata = dict(node.metadata)
        title = metadata.get("title") or metadata.get("file_name")
        passages.append(
            Passage(
                id=node.node_id,
                text=node.get_content(metadata_mode=MetadataMode.NONE),
                document_id=node.ref_doc_id or node.node_id,
                title=str(title) if title else None,
                start=getattr(node, "start_char_idx", None),
                score=scored.score,
                metadata=metadata,
            )
        )
    return passages


def _node(
    piece: WindowPiece, metadata: dict[str, Any], node_id: str, score: float | None
) -> NodeWithScore:
    document_id = piece.item.document_id
    relationships = (
        {NodeRelationship.SOURCE: RelatedNodeInfo(node_id=document_id)}
        if document_id is not None
        else {}
    )
    node = TextNode(
        id_=node_id,
        text=piece.text,
        metadata=metadata,
        excluded_llm_metadata_keys=list(metadata),
        excluded_embed_metadata_keys=list(metadata),
        relationships=relationships,
    )
    return NodeWithScore(node=node, score=score)
