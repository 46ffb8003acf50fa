"""A collection at one index version as arrays, with token costs in one tokenizer.

Built once per (collection, index version, tokenizer) and shared by every pack: document
texts and chunk spans for rendering, the summary tree as index arrays for the allocator.
Pure: `loading.load_state` reads a collection from the database into it, and text packed
from elsewhere (another retriever's passages) is built here from memory.

Counting every chunk tile and node is most of a load. A new version of a collection mostly
repeats the previous one, so a load can be given the previous version's state and reuses its
counts for every text it already counted. The key is the text itself, not a row id: SQLite
hands a deleted row's id to the next insert, and a rebuilt tree reuses node ids for new
summaries, while a count is a pure function of (text, tokenizer).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Hashable
from dataclasses import dataclass, field, replace

import numpy as np

from windowpack.pack import layout, piece_counts
from windowpack.pack.allocate import lossless_cost
from windowpack.pack.corpus import Corpus, Overheads
from windowpack.pack.layout import DocumentView, NodeView
from windowpack.pack.repeats import Turn, conversation_turns
from windowpack.text.tokens import TokenCounter


@dataclass(frozen=True, kw_only=True)
class PackingState:
    """A collection at one index version, as arrays, with costs in one tokenizer."""

    name: str
    version: int
    documents: list[DocumentView]
    document_first_chunk: list[int]
    chunk_ids: dict[int, int]
    node_ids: dict[int, int]
    nodes: list[NodeView]
    corpus: Corpus
    overheads: Overheads
    chunk_keys: np.ndarray
    chunk_positions: np.ndarray
    node_keys: np.ndarray
    node_positions: np.ndarray
    tokenizer: str = ""
    """The counter's name: counts are reused only from a state in the same tokenizer."""
    lines: list[piece_counts.Lines] = field(default_factory=list)
    """Per document, its cuttable lines and their counts, which passages are counted from
    (`piece_counts`; empty for a tokenizer whose pre-tokenizer is not known)."""

    @functools.cached_property
    def document_tokens_before(self) -> list[int]:
        """Tokens of all documents before position i (i from 0 to the count, inclusive)."""
        return [0, *itertools.accumulate(view.token_prefix[-1] for view in self.documents)]

    @functools.cached_property
    def overviews(self) -> dict[Hashable, object]:
        """Query-independent tiers built from this state, by what they depend on (kept by
        `overview.overview`, which bounds it): they live exactly as long as the version."""
        return {}

    @functools.cached_property
    def span_counts(self) -> dict[tuple[int, int, int, str], int]:
        """Counts of partial lines of documents (position, first char, end char, text after)
        in this state's tokenizer (`piece_counts`): those at chunk boundaries counted at load,
        any other a pack meets kept once counted; a count is a function of the text alone,
        and each span ends at a chunk boundary or line start, so the map stays bounded."""
        return {}

    @functools.cached_property
    def short_counts(self) -> dict[str, int]:
        """Counts of short pieces (headers, gap markers) by text, in this state's tokenizer,
        kept as packs count them (`piece_counts`, which bounds it)."""
        return {}

    @functools.cached_property
    def lossless_cost(self) -> int:
        """The allocator's estimate of this collection's lossless window (0 when empty)."""
        return lossless_cost(self.corpus, self.overheads) if self.corpus.chunks else 0

    @functools.cached_property
    def turns(self) -> list[Turn]:
        """Every conversation turn with its request's words, found once per state."""
        return conversation_turns(self.documents, self.document_first_chunk)


def state_from_views(
    *,
    name: str,
    version: int,
    documents: list[DocumentView],
    counter: TokenCounter,
    nodes: list[NodeView] | None = None,
    node_parents: list[int] | None = None,
    chunk_ids: dict[int, int] | None = None,
    node_ids: dict[int, int] | None = None,
    previous: PackingState | None = None,
) -> PackingState:
    """A state from documents (and summary nodes) already in memory, costed in `counter`.

    `documents` need no `chunk_tokens` yet: every chunk is counted here, in one batch.
    `chunk_ids`/`node_ids` map index ids to positions, for scoring from the indexes; text
    packed from elsewhere (another retriever's nodes) has none. Texts that `previous` (a
    state in the same tokenizer) counted are not counted again.
    """
    nodes = nodes or []
    chunk_ids, node_ids = chunk_ids or {}, node_ids or {}
    first_chunk = [0]
    for view in documents:
        first_chunk.append(first_chunk[-1] + len(view.chunk_starts))
    first_chunk.pop()
    # One batched count of every tile (chunk plus the whitespace to the next one): the
    # allocator's cost, and what a gap marker reports as left out.
    known = _known_counts(previous, counter.name)
    # The lines a pack counts passages from, counted in the same batch (see piece_counts);
    # a document whose text the previous version held keeps its lines and their counts.
    cuts = piece_counts.cuts_at_lines(counter)
    reused = _known_lines(previous, counter.name) if cuts else {}
    fresh = [view for view in documents if view.text not in reused] if cuts else []
    fresh_starts = piece_counts.line_starts(fresh)
    found = iter(fresh_starts)
    starts = (
        [reused[view.text].starts if view.text in reused else next(found) for view in documents]
        if cuts
        else []
    )
    spans = piece_counts.edge_spans(documents, starts) if cuts else []
    tile_tokens, node_tokens, line_tokens, span_tokens = _counted(
        counter,
        known,
        [
            _tiles(documents),
            [n.text for n in nodes],
            piece_counts.whole_lines(fresh, fresh_starts),
            [piece_counts.span_text(documents, span) for span in spans],
        ],
    )
    counted_lines = iter(piece_counts.kept_lines(fresh_starts, line_tokens))
    lines = (
        [reused[view.text] if view.text in reused else next(counted_lines) for view in documents]
        if cuts
        else []
    )
    documents = [
        replace(view, chunk_tokens=tile_tokens[first : first + len(view.chunk_starts)])
        for view, first in zip(documents, first_chunk, strict=True)
    ]
    chunk_document = [p for p, view in enumerate(documents) for _ in view.chunk_starts]
    corpus = Corpus(
        chunk_document=np.asarray(chunk_document, dtype=np.int64),
        chunk_cost=np.asarray(tile_tokens, dtype=np.int64),
        chunk_score=np.zeros(len(chunk_document)),
        node_first=np.asarray([n.first_chunk for n in nodes], dtype=np.int64),
        node_last=np.asarray([n.last_chunk for n in nodes], dtype=np.int64),
        node_parent=np.asarray(node_parents or [], dtype=np.int64),
        node_document=np.asarray([n.document for n in nodes], dtype=np.int64),
        node_cost=np.asarray(node_tokens, dtype=np.int64),
        node_score=np.zeros(len(nodes)),
        chunk_unit=np.asarray(
            [-1 if u is None else u for d in documents for u in d.chunk_units], dtype=np.int64
        ),
    )
    state = PackingState(
        name=name,
        version=version,
        documents=documents,
        document_first_chunk=first_chunk,
        chunk_ids=chunk_ids,
        node_ids=node_ids,
        nodes=nodes,
        corpus=corpus,
        overheads=layout.overheads(counter),
        chunk_keys=np.asarray(sorted(chunk_ids), dtype=np.int64),
        chunk_positions=np.asarray([chunk_ids[k] for k in sorted(chunk_ids)], dtype=np.int64),
        node_keys=np.asarray(sorted(node_ids), dtype=np.int64),
        node_positions=np.asarray([node_ids[k] for k in sorted(node_ids)], dtype=np.int64),
        tokenizer=counter.name,
        lines=lines,
    )
    state.span_counts.update(zip(spans, span_tokens, strict=True))
    return state


def _known_counts(previous: PackingState | None, tokenizer: str) -> dict[str, int]:
    """Every tile and node text `previous` counted, with its count, if in `tokenizer`."""
    if previous is None or previous.tokenizer != tokenizer:
        return {}
    known = dict(zip(_tiles(previous.documents), previous.corpus.chunk_cost.tolist(), strict=True))
    known.update(
        zip((n.text for n in previous.nodes), previous.corpus.node_cost.tolist(), strict=True)
    )
    spans = previous.span_counts.items()
    known.update((piece_counts.span_text(previous.documents, s), n) for s, n in spans)
    return known


def _known_lines(previous: PackingState | None, tokenizer: str) -> dict[str, piece_counts.Lines]:
    """The lines of each document text `previous` held, with their counts, if in `tokenizer`
    (a document's lines depend on its text alone)."""
    if previous is None or previous.tokenizer != tokenizer:
        return {}
    return dict(zip((view.text for view in previous.documents), previous.lines, strict=False))


def _counted(
    counter: TokenCounter, known: dict[str, int], groups: list[list[str]]
) -> list[list[int]]:
    """Each group's counts: texts in `known` are looked up, the rest counted in one batch."""
    missing = list(dict.fromkeys(t for group in groups for t in group if t not in known))
    counts = dict(known)
    counts.update(zip(missing, counter.count_many(missing), strict=True))
    return [[counts[text] for text in group] for group in groups]


def _tiles(documents: list[DocumentView]) -> list[str]:
    """Each chunk with the whitespace up to the next one: a passage of consecutive chunks is
    their tiles, so the allocator's sums match what the layout renders."""
    tiles = []
    for view in documents:
        starts, ends = view.chunk_starts, view.chunk_ends
        for index, start in enumerate(starts):
            end = starts[index + 1] if index + 1 < len(starts) else ends[index]
            tiles.append(view.text[start:end])
    return tiles
