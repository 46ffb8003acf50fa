"""A packed window cut into one piece per item, for frameworks that take a list of texts.

A piece is its item as rendered plus whatever the layout put before it since the previous
item (the document's title line, the collection and overview headers) and any alignment
padding after it. So the pieces joined by a blank line are the window's text exactly, and a
framework that joins its nodes or documents with "\n\n" (llama-index's response
synthesizers, LangChain's "stuff" chains) puts the window into the prompt verbatim: same
bytes, same token count, same cacheable prefix.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from windowpack.errors import InvalidArgumentError
from windowpack.pack import SEPARATOR
from windowpack.types import Window, WindowItem


@dataclass(frozen=True, kw_only=True)
class WindowPiece:
    """One item of a window with the text that carries it and flat provenance metadata.

    `metadata` holds the document's own metadata, then windowpack's keys (which win on a
    clash): `kind` (chunk | summary | gap), `document_id`, `title`, `collection`,
    `document_index`, `level`, `char_start`/`char_end` (the document span the item holds or a
    summary stands for), `ordinal`/`last_ordinal` (its chunks), `unit` (turn or record),
    `tokens`, `window_offset`, `cacheable` (the piece lies in the query-independent tier), and
    for a collection-level summary `first_document_index`/`last_document_index`.
    `id` is unique within a window and stable for the same item across windows of one index
    version (gaps: within one window).
    """

    id: str
    text: str
    score: float
    item: WindowItem
    metadata: dict[str, Any]


def window_pieces(window: Window) -> list[WindowPiece]:
    """The window's items as pieces, in window order; `SEPARATOR.join` of their texts is
    `window.text`."""
    pieces: list[WindowPiece] = []
    start = 0
    for index, item in enumerate(window.items):
        end = item.offset + len(item.text)
        cut = window.text.find(SEPARATOR, end) if index + 1 < len(window.items) else -1
        cut = len(window.text) if cut < 0 else cut
        cacheable = cut <= window.cacheable_prefix_chars
        pieces.append(
            WindowPiece(
                id=_piece_id(item, cacheable=cacheable),
                text=window.text[start:cut],
                score=item.score,
                item=item,
                metadata=provenance(item, cacheable=cacheable),
            )
        )
        start = cut + len(SEPARATOR)
    return pieces


def provenance(item: WindowItem, *, cacheable: bool) -> dict[str, Any]:
    """Flat, JSON-friendly metadata for one item (see `WindowPiece`)."""
    span, documents = item.span, item.document_range
    return {
        **item.metadata,
        "kind": item.kind,
        "document_id": item.document_id,
        "title": item.title,
        "collection": item.collection,
        "document_index": item.document_index,
        "level": item.level,
        "char_start": span.start if span is not None else None,
        "char_end": span.end if span is not None else None,
        "ordinal": item.ordinal,
        "last_ordinal": item.last_ordinal,
        "unit": item.unit,
        "tokens": item.tokens,
        "window_offset": item.offset,
        "cacheable": cacheable,
        "first_document_index": documents[0] if documents is not None else None,
        "last_document_index": documents[1] if documents is not None else None,
    }


def best_pieces(pieces: list[WindowPiece], k: int | None) -> list[WindowPiece]:
    """The `k` best-scored chunks and summaries, still in window order (all pieces if None).

    Gap markers hold no content and never count among the best; ties go to the earlier
    piece. The pieces kept are no longer the whole window, so their texts joined are not
    `window.text`.
    """
    if k is None:
        return pieces
    validate_k(k)
    ranked = sorted(
        (i for i, piece in enumerate(pieces) if piece.item.kind != "gap"),
        key=lambda i: (-pieces[i].score, i),
    )
    return [pieces[i] for i in sorted(ranked[:k])]


def validate_k(k: int | None) -> None:
    """`k` is None (every item) or a positive integer."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise InvalidArgumentError("k", f"must be a positive integer or None, got {k!r}")


def _piece_id(item: WindowItem, *, cacheable: bool) -> str:
    # A gap marker has no chunks of its own: only its place in this window tells it apart. A
    # collection-level summary has no document: the documents it stands for tell it apart.
    # The same summary can be in the overview and again in the question's material: the tier
    # tells those two apart.
    where: object = (item.ordinal, item.last_ordinal, item.span, item.document_range)
    if item.kind == "gap":
        where = item.offset
    key = repr((item.collection, item.document_id, item.kind, item.level, where, cacheable))
    return "wp-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
