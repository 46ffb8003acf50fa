"""Texts a collection holds more than once, which a window shows once (issue 26).

A folder ingested twice from different places, or a document added under a second id, gives
documents with the same text; a summary tree over pages that end alike gives nodes with the
same text. A window shows each such text once:

- a document whose text an earlier document of the collection has (the same text hash) is
  a *twin* of the first: its chunks are never shown (`Corpus.chunk_twin` names, for each,
  the first document's chunk that holds its start), what the indexes find in them counts for
  the first document's chunks (`folded`), and the first document's items name the twins'
  ids (`WindowItem.duplicates`);
- nodes with the same text share one text id (`Corpus.node_text`): the allocator takes at
  most one node of each text, the overview's included.

Found once per state, from the documents' hashes and the nodes' texts: no text is read.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from windowpack.pack.layout import DocumentView, NodeView

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, kw_only=True)
class Twins:
    """A state's repeated texts: `chunk_twin` and `node_text` (None when nothing repeats) and,
    by the position of each document that others repeat, the ids of those others."""

    chunk_twin: IntArray | None
    node_text: IntArray | None
    copies: dict[int, tuple[str, ...]]


def twins_of(
    documents: Sequence[DocumentView], first_chunk: Sequence[int], nodes: Sequence[NodeView]
) -> Twins:
    """The repeated texts of a state's documents (with their first chunks) and nodes."""
    first_of: dict[str, int] = {}
    originals: dict[int, int] = {}  # twin position -> the first document with its text
    for position, view in enumerate(documents):
        if not view.text_hash:
            continue  # unknown: packed from memory without a hash, never a twin
        first = first_of.setdefault(view.text_hash, position)
        if first != position:
            originals[position] = first
    chunk_twin = None
    copies: dict[int, list[str]] = {}
    if originals:
        chunks = first_chunk[-1] + len(documents[-1].chunk_starts) if documents else 0
        chunk_twin = np.full(chunks, -1, dtype=np.int64)
        for position, first in originals.items():
            copies.setdefault(first, []).append(documents[position].external_id)
            chunk_twin[_chunks_of(first_chunk, documents, position)] = _holding(
                documents[first], documents[position], first_chunk[first]
            )
    return Twins(
        chunk_twin=chunk_twin,
        node_text=_node_texts(nodes),
        copies={position: tuple(ids) for position, ids in copies.items()},
    )


def _chunks_of(
    first_chunk: Sequence[int], documents: Sequence[DocumentView], position: int
) -> slice:
    start = first_chunk[position]
    return slice(start, start + len(documents[position].chunk_starts))


def _holding(original: DocumentView, twin: DocumentView, offset: int) -> list[int]:
    """For each chunk of `twin`, the chunk of `original` (the same text, perhaps chunked
    otherwise) that holds its start, as a global index from `offset`."""
    starts = list(original.chunk_starts)
    return [offset + max(0, bisect.bisect_right(starts, start) - 1) for start in twin.chunk_starts]


def _node_texts(nodes: Sequence[NodeView]) -> IntArray | None:
    """Each node's text id (the first node with its text), or None when all differ."""
    first: dict[str, int] = {}
    ids = [first.setdefault(node.text, index) for index, node in enumerate(nodes)]
    if len(first) == len(nodes):
        return None
    return np.asarray(ids, dtype=np.int64)


def folded(chunk_twin: IntArray | None, chunk_score: FloatArray) -> FloatArray:
    """Scores with each twin chunk's found at the chunk it repeats (the best of the two), and
    the twin itself at the lowest score: the window shows the first document's text."""
    if chunk_twin is None or not len(chunk_score):
        return chunk_score
    twin = np.flatnonzero(chunk_twin >= 0)
    if not len(twin):
        return chunk_score
    score = chunk_score.copy()
    np.maximum.at(score, chunk_twin[twin], chunk_score[twin])
    score[twin] = chunk_score.min()
    return score
