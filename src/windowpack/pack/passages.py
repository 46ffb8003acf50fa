"""Packing passages retrieved elsewhere with windowpack's own allocator and layout.

An app that keeps its own retriever hands over passages (text, document id, score, where
they sit in their document). They are grouped into one synthetic document per source
document, each passage its own unit so that it keeps its own header and maps back to its
source, and packed like a collection: `state_from_views` counts them exactly in the
requested tokenizer, the allocator takes the best ones while they fit, the layout renders
them by document with gap markers for what was left out, and the rendered text is counted
exactly and trimmed if it is ever over. A passage header's chars count in the passages of
its document joined by a blank line (the source text between them is not known).

Same bytes for the same passages, whatever their scores or retrieval order: documents are
sorted by id and passages by position, so prompts over overlapping results share their
longest prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from windowpack.pack.layout import SEPARATOR, DocumentView
from windowpack.pack.request import PackRequest
from windowpack.pack.state import state_from_views
from windowpack.pack.window import Part, pack_parts
from windowpack.text import content_hash, get_token_counter
from windowpack.types import HEADER_STYLES, HeaderStyle, Window, WindowItem

# Passage-level "units": each passage gets a header of its own, "[passage 2 of 5 · ...]".
_UNIT_NAME = "passage"


@dataclass(frozen=True, kw_only=True)
class Passage:
    """A retrieved text from elsewhere.

    `id` identifies the passage (a duplicate id keeps its best score); `start` is its char
    offset in its document, to order passages; `score` any relevance, higher is better
    (None: retrieval order stands in).
    """

    id: str
    text: str
    document_id: str
    title: str | None = None
    start: int | None = None
    score: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class PackedPassages:
    """The window, and the passages by document in window order (to map items back)."""

    window: Window
    documents: list[list[Passage]]

    def passage(self, item: WindowItem) -> Passage | None:
        """The passage a chunk item renders (None for gaps)."""
        if item.kind != "chunk" or item.document_index is None or item.ordinal is None:
            return None
        return self.documents[item.document_index][item.ordinal]


def pack_passages(
    passages: Sequence[Passage],
    *,
    budget: int,
    tokenizer: str = "o200k_base",
    query: str = "",
    headers: HeaderStyle = HEADER_STYLES[0],
) -> PackedPassages:
    """The best window of at most `budget` tokens of `tokenizer` from these passages, with
    `headers` as in `Collection.pack` (`types.HeaderStyle`).

    `cacheable_prefix_tokens` is 0: which passages came back depends on the question.
    Passages are rendered without their outer whitespace; empty ones are dropped. Documents
    of the same passages (the same text) are shown once, under the first document's id.
    """
    request = PackRequest(
        query=query, budget=budget, tokenizer=tokenizer, overview_tokens=0, headers=headers
    )
    counter = get_token_counter(tokenizer)
    # Outer whitespace goes: blank lines separate passages in the layout, and frameworks strip
    # the texts they join (llama-index's repacking does), which would change the bytes.
    stripped = [replace(p, text=p.text.strip()) for p in passages]
    ranked = _deduplicated([p for p in stripped if p.text])
    relevance = _standardised(ranked)
    documents = _by_document(ranked)
    state = state_from_views(
        name="passages", version=0, documents=[_view(d) for d in documents], counter=counter
    )
    scores = np.asarray([relevance[p.id] for document in documents for p in document])
    part = Part(state=state, corpus=state.corpus.with_scores(scores, np.zeros(0)))
    window = pack_parts([part], request, counter)
    window = replace(window, cacheable_prefix_tokens=0, cacheable_prefix_chars=0)
    return PackedPassages(window=window, documents=documents)


def _deduplicated(passages: list[Passage]) -> list[Passage]:
    """First occurrence of each id (in retrieval order), with the best score seen for it."""
    best: dict[str, Passage] = {}
    for passage in passages:
        kept = best.get(passage.id)
        if kept is None:
            best[passage.id] = passage
        elif passage.score is not None and (kept.score is None or passage.score > kept.score):
            best[passage.id] = replace(kept, score=passage.score)
    return list(best.values())


def _standardised(ranked: list[Passage]) -> dict[str, float]:
    """Z-scores, so the allocator's neighbour margin means what it means for a collection.

    Other retrievers' scores come on any scale (cosine, BM25, rerankers); without scores the
    retrieval order stands in.
    """
    if not ranked:
        return {}
    if any(p.score is None for p in ranked):
        raw = -np.arange(len(ranked), dtype=np.float64)
    else:
        raw = np.asarray([p.score for p in ranked], dtype=np.float64)
    spread = raw.std()
    standard = (raw - raw.mean()) / spread if spread > 0 else np.zeros(len(raw))
    return {p.id: float(z) for p, z in zip(ranked, standard, strict=True)}


def _by_document(passages: list[Passage]) -> list[list[Passage]]:
    groups: dict[str, list[Passage]] = {}
    for passage in passages:
        groups.setdefault(passage.document_id, []).append(passage)
    return [sorted(groups[document], key=_place) for document in sorted(groups)]


def _place(passage: Passage) -> tuple[bool, int, str]:
    # By position in the document where known, else by id: never by score or rank, so that
    # the same passages render the same bytes for every question.
    return (passage.start is None, passage.start or 0, passage.id)


def _view(passages: list[Passage]) -> DocumentView:
    starts, ends, cursor = [], [], 0
    for passage in passages:
        starts.append(cursor)
        ends.append(cursor + len(passage.text))
        cursor += len(passage.text) + len(SEPARATOR)
    body = SEPARATOR.join(p.text for p in passages)
    return DocumentView(
        external_id=passages[0].document_id,
        title=passages[0].title,
        body=body,
        text_hash=content_hash(body),
        chunk_starts=starts,
        chunk_ends=ends,
        chunk_units=list(range(len(passages))),
        chunk_tokens=[],
        units=len(passages),
        unit_name=_UNIT_NAME,
    )
