"""A packing state limited to the documents a metadata filter keeps.

A filtered pack is an ordinary pack over a smaller collection: the documents the filter
keeps, in collection order, with their chunks and the summary nodes built from them alone.
The collection-level nodes, which summarise many documents, are left out (what they say
may come from documents the filter drops), so the overview tier is the kept documents' own
summaries. Everything the allocator, the layout and the exact count need is sliced from the
full state, whose token counts it reuses: only the "full" style's document headers are
counted again ("document 3 of 22" numbers the kept documents). Every property of a pack
then holds for the filtered collection as it does for any other: the exact budget, order,
determinism, and the lossless window when the kept documents fit.

The indexes are searched within the same units (`kept_units`, `index.KeptUnits`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from windowpack.filters import Filter
from windowpack.index import KeptUnits
from windowpack.pack import layout
from windowpack.pack.corpus import Corpus
from windowpack.pack.layout import DocumentView, NodeView
from windowpack.pack.state import PackingState
from windowpack.pack.twins import twins_of
from windowpack.text import TokenCounter

IntArray = npt.NDArray[np.int64]


def filtered_state(state: PackingState, where: Filter, counter: TokenCounter) -> PackingState:
    """`state` with only the documents `where` keeps (`state` itself when it keeps all)."""
    keep = [p for p, view in enumerate(state.documents) if where.matches(view.metadata)]
    if len(keep) == len(state.documents):
        return state
    return _kept_documents(state, keep, counter)


def kept_units(state: PackingState) -> KeptUnits:
    """The index ids of a (filtered) state's chunks and summary nodes."""
    return KeptUnits.of(state.chunk_keys, state.node_keys)


def state_bytes(state: PackingState) -> int:
    """About what a filtered state holds of its own (its document views are its parent's)."""
    corpus = state.corpus
    arrays = [state.chunk_keys, state.chunk_positions, state.node_keys, state.node_positions]
    held = sum(int(array.nbytes) for array in arrays)
    held += 16 * 8 * corpus.chunks + 8 * 8 * corpus.nodes  # the corpus's arrays
    return held + 200 * len(state.nodes) + 64 * len(state.documents)


def _kept_documents(state: PackingState, keep: list[int], counter: TokenCounter) -> PackingState:
    corpus = state.corpus
    documents = [state.documents[p] for p in keep]
    sizes = np.asarray([len(view.chunk_starts) for view in documents], dtype=np.int64)
    first_chunk = (np.cumsum(sizes) - sizes).tolist()
    starts = np.asarray(state.document_first_chunk, dtype=np.int64)[keep]
    chunks = _runs(starts, sizes)
    new_chunk = _renumbered(corpus.chunks, chunks)
    new_document = _renumbered(len(state.documents), np.asarray(keep, dtype=np.int64))
    # The nodes of kept documents; a collection-level node (document -1) is left out.
    owner = corpus.node_document
    nodes = np.flatnonzero((owner >= 0) & (new_document[np.maximum(owner, 0)] >= 0))
    new_node = _renumbered(corpus.nodes, nodes)
    node_first = new_chunk[corpus.node_first[nodes]]
    node_last = new_chunk[corpus.node_last[nodes] - 1] + 1
    node_document = new_document[owner[nodes]]
    parents = corpus.node_parent[nodes]
    node_views = [
        NodeView(
            text=state.nodes[old].text,
            level=state.nodes[old].level,
            document=document,
            first_chunk=first,
            last_chunk=last,
            first_document=document,
            last_document=document + 1,
        )
        for old, document, first, last in zip(
            nodes.tolist(), node_document.tolist(), node_first.tolist(), node_last.tolist(),
            strict=True,
        )
    ]  # fmt: skip
    twins = twins_of(documents, first_chunk, node_views)
    filtered = Corpus(
        chunk_document=np.repeat(np.arange(len(keep), dtype=np.int64), sizes),
        document_cost=_header_costs(documents, counter),
        chunk_cost=corpus.chunk_cost[chunks],
        chunk_score=np.zeros(len(chunks)),
        node_first=node_first,
        node_last=node_last,
        # A parent left out (a collection-level node) makes its child a root.
        node_parent=np.where(parents >= 0, new_node[np.maximum(parents, 0)], -1),
        node_document=node_document,
        node_cost=corpus.node_cost[nodes],
        node_score=np.zeros(len(nodes)),
        chunk_unit=corpus.chunk_unit[chunks],
        chunk_opening=None if corpus.chunk_opening is None else corpus.chunk_opening[chunks],
        chunk_twin=twins.chunk_twin,
        node_text=twins.node_text,
        chunk_in_section=None
        if corpus.chunk_in_section is None
        else corpus.chunk_in_section[chunks],
    )
    chunk_keys, chunk_positions = _kept_keys(state.chunk_keys, state.chunk_positions, new_chunk)
    node_keys, node_positions = _kept_keys(state.node_keys, state.node_positions, new_node)
    result = PackingState(
        name=state.name,
        version=state.version,
        documents=documents,
        document_first_chunk=first_chunk,
        nodes=node_views,
        corpus=filtered,
        overheads=state.overheads,
        chunk_keys=chunk_keys,
        chunk_positions=chunk_positions,
        node_keys=node_keys,
        node_positions=node_positions,
        tokenizer=state.tokenizer,
        copies=twins.copies,
    )
    held = dict(list(state.line_counts.items()))  # in one step: a background count adds
    for position, old in enumerate(keep):
        if old in held:  # a document's lines depend on its text alone
            result.line_counts[position] = held[old]
    return result


def _runs(starts: IntArray, sizes: IntArray) -> IntArray:
    """The indices of runs `starts[i]` .. `starts[i] + sizes[i]`, concatenated."""
    if not len(sizes) or not sizes.sum():
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(starts - (np.cumsum(sizes) - sizes), sizes)
    return np.asarray(np.arange(int(sizes.sum()), dtype=np.int64) + offsets, dtype=np.int64)


def _renumbered(size: int, kept: IntArray) -> IntArray:
    """By old index, the new one (the rank among `kept`), -1 for those left out."""
    numbers = np.full(size, -1, dtype=np.int64)
    numbers[kept] = np.arange(len(kept), dtype=np.int64)
    return numbers


def _kept_keys(
    keys: IntArray, positions: IntArray, renumbered: IntArray
) -> tuple[IntArray, IntArray]:
    """The sorted index keys of the kept units, with their new positions."""
    if not len(keys):
        return keys, positions
    moved = renumbered[positions]
    kept = moved >= 0
    return keys[kept], moved[kept]


def _header_costs(documents: list[DocumentView], counter: TokenCounter) -> IntArray:
    """Each kept document's "full" header (numbered among the kept ones), counted."""
    headers = [
        layout.document_header(view, position, len(documents)) + layout.SEPARATOR
        for position, view in enumerate(documents)
    ]
    counts = counter.count_many(headers) if headers else []
    return np.asarray(counts, dtype=np.int64)
