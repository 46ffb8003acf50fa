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

from windowpack.pack import SEPARATOR
from windowpack.types import Window, WindowItem


@dataclass(frozen=True, kw_only=True)
class WindowPiece:
    """One item of a window with the text that carries it and flat provenance metadata.

    `metadata` holds the document's own metadata, then windowpack's keys (which win on a
    clash): `kind` (chunk | summary | gap), `document_id`, `title`, `collection`,
    `document_index`, `level`, `char_start`/`char_end` (the document span the item holds or a
    summary stands for), `ordinal`/`last_ordinal` (its chunks), `unit` (turn or record),
    `tokens`, `window_offset`, and `cacheable` (the piece lies in the query-independent tier).
    `id` is stable for the same item across windows (gaps: within one window).
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
                id=_piece_id(item),
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
    span = item.span
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
    }


def _piece_id(item: WindowItem) -> str:
    # A gap marker has no chunks of its own: only its place in this window tells it apart.
    where = item.offset if item.kind == "gap" else (item.ordinal, item.last_ordinal, item.span)
    key = repr((item.collection, item.document_id, item.kind, item.level, where))
    return "wp-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
