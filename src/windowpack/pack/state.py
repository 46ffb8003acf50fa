"""A collection at one index version as arrays, with token costs in one tokenizer.

Built once per (collection, index version, tokenizer) and shared by every pack: document
texts and chunk spans for rendering, the summary tree as index arrays for the allocator.
Pure: `loading.load_state` reads a collection from the database into it, and text packed
from elsewhere (another retriever's passages) is built here from memory.

Counting every chunk tile and node is most of a load. A new version of a collection mostly
repeats the previous one, so a load can be given the previous version's state and reuses its
counts for every text it already counted. The key is the text itself, not a row id: SQLite
hands a deleted row's id to the next insert, and a rebuilt tree reuses node ids for new
summaries, while a count is a pure function of (text, tokenizer). After a restart there is no
previous state in memory: the counts saved on disk (`token_counts`) stand in for it.
"""

from __future__ import annotations

import functools
import itertools
from array import array
from collections.abc import Hashable
from dataclasses import dataclass, field, replace

import numpy as np

from windowpack.pack import layout, piece_counts
from windowpack.pack.allocate import lossless_cost
from windowpack.pack.corpus import Corpus, Overheads
from windowpack.pack.layout import DocumentView, NodeView
from windowpack.pack.repeats import Turn, conversation_turns
from windowpack.pack.token_counts import SavedCounts, unit_keys
from windowpack.pack.twins import twins_of
from windowpack.text import TokenCounter, get_token_counter
from windowpack.types import HeaderStyle


@dataclass(frozen=True, kw_only=True)
class Styled:
    """A state's corpus costed in one header style: its document headers (`document_cost`),
    its passage headers (`chunk_opening`), the other overheads, and the lossless window's
    estimate in that style."""

    corpus: Corpus
    overheads: Overheads
    lossless_cost: int


@dataclass(frozen=True, kw_only=True)
class PackingState:
    """A collection at one index version, as arrays, with costs in one tokenizer."""

    name: str
    version: int
    documents: list[DocumentView]
    document_first_chunk: list[int]
    nodes: list[NodeView]
    corpus: Corpus
    overheads: Overheads
    chunk_keys: np.ndarray
    chunk_positions: np.ndarray
    node_keys: np.ndarray
    node_positions: np.ndarray
    tokenizer: str = ""
    """The counter's name: counts are reused only from a state in the same tokenizer."""
    copies: dict[int, tuple[str, ...]] = field(default_factory=dict)
    """By the position of a document whose text later documents repeat, their ids
    (`twins`): the window shows the text once, under this document."""

    def styled(self, style: HeaderStyle) -> Styled:
        """The corpus costed in header style `style`, built on first use ("full" is the
        state's own corpus and overheads)."""
        held = self._styles.get(style)
        if held is None:
            held = self._styles[style] = _styled(self, style)
        return held

    @functools.cached_property
    def _styles(self) -> dict[str, Styled]:
        return {}

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
    def line_counts(self) -> dict[int, piece_counts.Lines]:
        """By document position, its cuttable lines and their counts, which passages are
        counted from (`piece_counts`): counted once a pack's passages cover a good share of
        the document, by the background count a load starts, or taken from the previous
        version's state when its text is unchanged; a load itself counts no line."""
        return {}

    @functools.cached_property
    def span_counts(self) -> dict[tuple[int, int, int, str], int]:
        """Counts of partial lines of documents (position, first char, end char, text after)
        in this state's tokenizer (`piece_counts`), kept once a pack counted them; a count
        is a function of the text alone, and each span ends at a chunk boundary or line
        start, so the map stays bounded."""
        return {}

    @functools.cached_property
    def short_counts(self) -> dict[str, int]:
        """Counts of short pieces (headers, gap markers) by text, in this state's tokenizer,
        kept as packs count them (`piece_counts`, which bounds it)."""
        return {}

    @functools.cached_property
    def lossless_cost(self) -> int:
        """The allocator's estimate of this collection's lossless window in the "full" header
        style (0 when empty): `styled(style).lossless_cost` in another."""
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
    saved: SavedCounts | None = None,
) -> PackingState:
    """A state from documents (and summary nodes) already in memory, costed in `counter`.

    `documents` need no `chunk_tokens` yet: every chunk is counted here, in one batch.
    `chunk_ids`/`node_ids` map index ids to positions, for scoring from the indexes; text
    packed from elsewhere (another retriever's nodes) has none. Texts that `previous` (a
    state in the same tokenizer) counted, or whose counts `saved` holds, are not counted
    again; `saved` is then rewritten with this state's counts if it lacked any.
    """
    nodes = nodes or []
    chunk_ids, node_ids = chunk_ids or {}, node_ids or {}
    first_chunk = [0]
    for view in documents:
        first_chunk.append(first_chunk[-1] + len(view.chunk_starts))
    first_chunk.pop()
    # One batched count of every tile (chunk plus the whitespace to the next one): the
    # allocator's cost, and what a gap marker reports as left out.
    # Document headers are counted with the nodes (and saved with them): the allocator costs
    # each exactly, since titles and ids vary far more than one typical header allows for.
    headers = [
        layout.document_header(view, position, len(documents)) + layout.SEPARATOR
        for position, view in enumerate(documents)
    ]
    texts = [node.text for node in nodes] + headers
    tile_tokens, text_tokens = _costs(counter, documents, first_chunk, texts, previous, saved)
    node_tokens, header_tokens = text_tokens[: len(nodes)], text_tokens[len(nodes) :]
    packed = array("q", tile_tokens)  # 8 bytes a count, not a list's int objects
    documents = [
        replace(view, chunk_tokens=packed[first : first + len(view.chunk_starts)])
        for view, first in zip(documents, first_chunk, strict=True)
    ]
    chunk_document = [p for p, view in enumerate(documents) for _ in view.chunk_starts]
    twins = twins_of(documents, first_chunk, nodes)
    corpus = Corpus(
        chunk_document=np.asarray(chunk_document, dtype=np.int64),
        document_cost=np.asarray(header_tokens, dtype=np.int64),
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
        chunk_twin=twins.chunk_twin,
        node_text=twins.node_text,
        chunk_in_section=np.asarray(
            [d.unit_name == "section" for d in documents for _ in d.chunk_starts], dtype=np.bool_
        ),
    )
    state = PackingState(
        name=name,
        version=version,
        documents=documents,
        document_first_chunk=first_chunk,
        nodes=nodes,
        corpus=corpus,
        overheads=layout.overheads(counter),
        # Sorted arrays, not the dicts: a dict of 650K ids held ~60 MiB for a lookup that
        # scoring does with searchsorted.
        **_sorted_ids("chunk", chunk_ids),
        **_sorted_ids("node", node_ids),
        tokenizer=counter.name,
        copies=twins.copies,
    )
    _inherit_lines(state, previous)
    return state


def _styled(state: PackingState, style: HeaderStyle) -> Styled:
    """`state`'s corpus costed in `style`: each document header and each passage header a
    passage can open with counted exactly (few distinct texts: one or two per unit)."""
    if style == "full":
        return Styled(
            corpus=state.corpus, overheads=state.overheads, lossless_cost=state.lossless_cost
        )
    counter = get_token_counter(state.tokenizer)
    documents = state.documents
    headers = [
        layout.styled_document_header(view, position, len(documents), style)
        for position, view in enumerate(documents)
    ]
    openings = np.zeros(state.corpus.chunks, dtype=np.int64)
    texts: dict[str, int] = {}
    wanted: list[tuple[int, str]] = []  # (chunk, header)
    if style == "compact":
        for view, offset in zip(documents, state.document_first_chunk, strict=True):
            if not view.units:
                continue  # prose: its passages have no header
            for ordinal in range(len(view.chunk_starts)):
                header = layout.compact_passage_header(view, ordinal)
                if header:
                    wanted.append((offset + ordinal, header))
                    texts.setdefault(header + "\n", 0)
    shown = [header + layout.SEPARATOR for header in headers if header is not None]
    counts = counter.count_many([*texts, *shown]) if texts or shown else []
    texts.update(zip(texts, counts[: len(texts)], strict=True))
    header_costs = iter(counts[len(texts) :])
    document_cost = np.asarray(
        [0 if header is None else next(header_costs) for header in headers], dtype=np.int64
    )
    for chunk, header in wanted:
        openings[chunk] = texts[header + "\n"]
    corpus = replace(state.corpus, document_cost=document_cost, chunk_opening=openings, memo={})
    most = int(state.corpus.chunk_cost.sum()) if state.corpus.chunks else 0
    overheads = layout.overheads(counter, style, most_tokens=max(most, 1))
    cost = lossless_cost(corpus, overheads) if corpus.chunks else 0
    return Styled(corpus=corpus, overheads=overheads, lossless_cost=cost)


def _sorted_ids(kind: str, ids: dict[int, int]) -> dict[str, np.ndarray]:
    """`<kind>_keys` (the index ids, sorted) and `<kind>_positions` (each one's position)."""
    keys = np.fromiter(ids.keys(), dtype=np.int64, count=len(ids))
    positions = np.fromiter(ids.values(), dtype=np.int64, count=len(ids))
    order = np.argsort(keys, kind="stable")
    return {f"{kind}_keys": keys[order], f"{kind}_positions": positions[order]}


def _known_counts(previous: PackingState | None, tokenizer: str) -> dict[str, int]:
    """Every tile and node text `previous` counted, with its count, if in `tokenizer`."""
    if previous is None or previous.tokenizer != tokenizer:
        return {}
    known = dict(zip(_tiles(previous.documents), previous.corpus.chunk_cost.tolist(), strict=True))
    known.update(
        zip((n.text for n in previous.nodes), previous.corpus.node_cost.tolist(), strict=True)
    )
    # Copied in one step (atomic under the GIL): packs go on adding to the dict meanwhile.
    spans = list(previous.span_counts.items())
    known.update((piece_counts.span_text(previous.documents, s), n) for s, n in spans)
    return known


def _costs(
    counter: TokenCounter,
    documents: list[DocumentView],
    first_chunk: list[int],
    node_texts: list[str],
    previous: PackingState | None,
    saved: SavedCounts | None,
) -> tuple[list[int], list[int]]:
    """Every tile's count, then every other text's (nodes, headers): looked up in `saved` (by
    key, without cutting a tile's text), then in `previous` (by text), the rest counted in
    one batch; `saved` is rewritten when it lacked any of them."""
    chunks = first_chunk[-1] + len(documents[-1].chunk_starts) if documents else 0
    keys = unit_keys(documents, node_texts) if saved is not None else None
    if saved is not None and keys is not None:
        counts = saved.lookup(keys)
    else:
        counts = np.full(chunks + len(node_texts), -1, dtype=np.int64)
    lacking = np.flatnonzero(counts < 0)
    if len(lacking):
        texts = _unit_texts(documents, first_chunk, chunks, node_texts, lacking)
        # `saved` already holds what the previous load counted (it saved them): going
        # through `previous` too would cut, and read, every text it holds.
        known = _known_counts(previous if saved is None else None, counter.name)
        missing = list(dict.fromkeys(text for text in texts if text not in known))
        known.update(zip(missing, counter.count_many(missing), strict=True))
        counts[lacking] = [known[text] for text in texts]
        if saved is not None and keys is not None:
            saved.save(keys, counts)
    values = counts.tolist()
    return values[:chunks], values[chunks:]


def _unit_texts(
    documents: list[DocumentView],
    first_chunk: list[int],
    tiles: int,
    node_texts: list[str],
    positions: np.ndarray,
) -> list[str]:
    """The texts of the tiles and nodes at `positions` (the `tiles` tiles first, as `_costs`
    numbers them)."""
    # The document of each tile: the last one starting at or before it (an empty document
    # starts where the next one does).
    owners = np.searchsorted(np.asarray(first_chunk, dtype=np.int64), positions, side="right") - 1
    texts = []
    for position, owner in zip(positions.tolist(), owners.tolist(), strict=True):
        if position >= tiles:
            texts.append(node_texts[position - tiles])
        else:
            texts.append(_tile(documents[owner], position - first_chunk[owner]))
    return texts


def _inherit_lines(state: PackingState, previous: PackingState | None) -> None:
    """Give `state` the line counts `previous` (same tokenizer) made for documents whose
    text is unchanged: a document's lines depend on its text alone."""
    if previous is None or previous.tokenizer != state.tokenizer or not previous.line_counts:
        return
    held = list(previous.line_counts.items())  # in one step: packs and a background count add
    by_text = {_text_key(previous.documents[p]): lines for p, lines in held}
    for position, view in enumerate(state.documents):
        lines = by_text.get(_text_key(view))
        if lines is not None:
            state.line_counts[position] = lines


def _text_key(view: DocumentView) -> str:
    """What tells equal texts: the store's hash where known (no text read), else the text."""
    return f"#{view.text_hash}" if view.text_hash else view.text


def _tiles(documents: list[DocumentView]) -> list[str]:
    """Each chunk with the whitespace up to the next one: a passage of consecutive chunks is
    their tiles, so the allocator's sums match what the layout renders."""
    return [_tile(view, ordinal) for view in documents for ordinal in range(len(view.chunk_starts))]


def _tile(view: DocumentView, ordinal: int) -> str:
    starts = view.chunk_starts
    end = starts[ordinal + 1] if ordinal + 1 < len(starts) else view.chunk_ends[ordinal]
    return view.text[starts[ordinal] : end]
