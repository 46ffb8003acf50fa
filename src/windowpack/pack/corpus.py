"""The allocator's view of a corpus: chunks and summary nodes as arrays, scored for a question."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
T = TypeVar("T")


@dataclass(frozen=True, kw_only=True)
class Corpus:
    """Chunks in document order and summary nodes over chunk ranges, with costs and scores.

    `chunk_unit` (conversation turn or record, -1 for none) splits passages: the layout starts
    a new passage, with its own header, at every unit.

    `node_first`/`node_last` are global chunk indices `[first, last)`; `node_parent` is a node
    index or -1; collection-level nodes span several documents (`node_document` -1).

    A text is shown once in a window: `chunk_twin` marks the chunks of a document whose text
    an earlier document has too (each names the chunk of the first such document that holds
    its start; -1 for the rest), and `node_text` gives each node the first node of the same
    text (itself when none came before). None: no repeated text.
    """

    chunk_document: IntArray
    document_cost: IntArray
    """By document: the tokens of its header (and the separator after it) in a window."""
    chunk_cost: IntArray
    chunk_score: FloatArray
    node_first: IntArray
    node_last: IntArray
    node_parent: IntArray
    node_document: IntArray
    node_cost: IntArray
    node_score: FloatArray
    chunk_unit: IntArray
    chunk_opening: IntArray | None = None
    """By chunk: the tokens a header adds to a passage that opens there, in the header style
    the corpus is costed in (`state.PackingState.styled`); None: `Overheads.passage` alone."""
    chunk_twin: IntArray | None = None
    node_text: IntArray | None = None
    chunk_in_section: npt.NDArray[np.bool_] | None = None
    """By chunk: whether its unit is a section of a document with headings (rather than a
    conversation turn or a record); None: no chunk is."""
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """What `derived` computed from the score-free arrays: shared by every scored copy of
    one corpus (`with_scores`), so a pack does not redo per question what depends on the
    corpus alone (over 650K chunks, each such pass costs milliseconds)."""

    @property
    def chunks(self) -> int:
        return len(self.chunk_cost)

    def derived(self, name: str, compute: Callable[[Corpus], T]) -> T:
        """`compute(self)`, kept under `name` for this corpus and its scored copies; it must
        read no score (two packs computing it at once compute the same value)."""
        if name not in self.memo:
            self.memo[name] = compute(self)
        value: T = self.memo[name]
        return value

    @property
    def nodes(self) -> int:
        return len(self.node_cost)

    def with_scores(self, chunk_score: FloatArray, node_score: FloatArray) -> Corpus:
        """The same corpus scored for one question."""
        return replace(self, chunk_score=chunk_score, node_score=node_score)

    def shifted(self, *, chunks: int, nodes: int, documents: int) -> Corpus:
        """This corpus placed after `chunks` chunks, `nodes` nodes and `documents` documents
        (its optional arrays given their defaults, so that corpora concatenate)."""
        return replace(
            self,
            memo={},  # the arrays change: nothing derived from them still holds
            chunk_document=self.chunk_document + documents,
            node_first=self.node_first + chunks,
            node_last=self.node_last + chunks,
            node_parent=np.where(self.node_parent >= 0, self.node_parent + nodes, -1),
            node_document=np.where(self.node_document >= 0, self.node_document + documents, -1),
            chunk_opening=opening_costs(self),
            chunk_twin=np.where(twins(self) >= 0, twins(self) + chunks, -1),
            node_text=text_ids(self) + nodes,
            chunk_in_section=in_sections(self),
        )

    @property
    def repeats(self) -> npt.NDArray[np.bool_] | None:
        """The chunks a window never shows (`chunk_twin`), or None when there are none."""
        return self.derived("repeated chunks", _repeated)


def _repeated(corpus: Corpus) -> npt.NDArray[np.bool_] | None:
    if corpus.chunk_twin is None:
        return None
    mask = corpus.chunk_twin >= 0
    return mask if mask.any() else None


def in_sections(corpus: Corpus) -> npt.NDArray[np.bool_]:
    """`chunk_in_section`, all False where the corpus has none."""
    if corpus.chunk_in_section is not None:
        return corpus.chunk_in_section
    return np.zeros(corpus.chunks, dtype=np.bool_)


def opening_costs(corpus: Corpus) -> IntArray:
    """`chunk_opening`, zeros where the corpus has none."""
    if corpus.chunk_opening is not None:
        return corpus.chunk_opening
    return np.zeros(corpus.chunks, dtype=np.int64)


def twins(corpus: Corpus) -> IntArray:
    """`chunk_twin`, all -1 where the corpus has none."""
    if corpus.chunk_twin is not None:
        return corpus.chunk_twin
    return np.full(corpus.chunks, -1, dtype=np.int64)


def text_ids(corpus: Corpus) -> IntArray:
    """`node_text`, each node its own where the corpus has none."""
    if corpus.node_text is not None:
        return corpus.node_text
    return np.arange(corpus.nodes, dtype=np.int64)


def combined(corpora: Sequence[Corpus], documents: Sequence[int]) -> Corpus:
    """One corpus over several (the i-th has `documents[i]` documents), indices shifted, so
    that one allocation spans them all and the budget follows relevance across them."""
    if len(corpora) == 1:
        return corpora[0]
    shifted, chunks, nodes, before = [], 0, 0, 0
    for corpus, count in zip(corpora, documents, strict=True):
        shifted.append(corpus.shifted(chunks=chunks, nodes=nodes, documents=before))
        chunks, nodes, before = chunks + corpus.chunks, nodes + corpus.nodes, before + count
    arrays: dict[str, Any] = {
        f.name: np.concatenate([getattr(c, f.name) for c in shifted])
        for f in fields(Corpus)
        if f.name != "memo"
    }
    # Texts repeat within a collection only: another collection's copy of a text is its own.
    return Corpus(**arrays)


@dataclass(frozen=True, kw_only=True)
class Overheads:
    """Tokens the layout adds: per passage or summary, per gap marker (per document shown:
    `Corpus.document_cost`)."""

    passage: int
    summary: int
    gap: int
    label: int = 0
    """What a label adds to a pinned passage's header (`· instance 2 of 4`) where `passage`
    does not already allow for it (compact headers are costed exactly, without labels)."""
