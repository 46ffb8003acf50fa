"""Packing a set question for coverage: many short pieces, a sentence each.

A question that asks for every member of a set, or for a count ("List every city where the
firm opened an office", "How many patients reported headaches?"; `search.is_set_question`)
is answered by many facts, each often one sentence of a different chunk. Packed like any
other question, each hit brings its whole chunk and the context around it, and the budget
holds a few of the facts. Packed for coverage:

- each of the best-ranked chunks is cut down to its best sentence (`evidence.best_piece`),
  an *excerpt* whose header says which chunk and characters it is;
- no context grows around a hit (a neighbour of a hit is not raised), and a unit (turn,
  record, section) is not taken whole for one of its sentences;
- two excerpts with the same words (one fact said twice) count once: the later is dropped;
- the overview takes a 32nd of the budget rather than an 8th (`overview`).

The allocation itself is the usual one (`allocate`) over the same corpus with the excerpts'
costs, so a larger budget still keeps everything a smaller one kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from windowpack.pack.corpus import Corpus
from windowpack.pack.evidence import PieceHits, best_chunks, best_piece, chunk_span, chunk_text
from windowpack.pack.state import PackingState
from windowpack.search import content_words
from windowpack.text import TokenCounter

# Chunks cut to an excerpt: about what the budget could hold as excerpts, four times over.
_EXCERPT_TOKENS_GUESS = 40
_MIN_EXCERPTS = 64
# What an excerpt's header adds to a passage header (the allocator's `Overheads.passage`
# counts the rest): " · excerpt".
_LABEL_TOKENS = 3
# Derived values of a corpus that read its chunk costs: a copy with other costs drops them.
_COST_DERIVED = ("unit runs", "mean chunk cost")
_SPACE = re.compile(r"\W+")
OVERVIEW_SHARE = 32


@dataclass(frozen=True, kw_only=True)
class Excerpts:
    """A corpus with the excerpted chunks' costs, and each excerpt's characters in its
    document by chunk index (of the state's corpus)."""

    corpus: Corpus
    spans: dict[int, tuple[int, int]]


def excerpted(
    state: PackingState,
    corpus: Corpus,
    pieces: PieceHits,
    question: str,
    counter: TokenCounter,
    budget: int,
) -> Excerpts:
    """`corpus` (scored for `question`) with its best chunks cut to their best sentence."""
    scores = corpus.chunk_score
    if not corpus.chunks:
        return Excerpts(corpus=corpus, spans={})
    floor = float(scores.min())
    top = best_chunks(scores, max(_MIN_EXCERPTS, 4 * budget // _EXCERPT_TOKENS_GUESS)).tolist()
    question_words = set(content_words(question))
    new_scores = scores.copy()
    spans: dict[int, tuple[int, int]] = {}
    texts: list[str] = []
    seen: set[str] = set()
    for index in top:
        start, end = best_piece(state, index, question_words, pieces)
        text = chunk_text(state, index)[start:end]
        words = _SPACE.sub(" ", text.lower()).strip()
        if words in seen:
            new_scores[index] = floor  # the same fact again: it adds nothing to a set
            continue
        seen.add(words)
        _, chunk_start, _ = chunk_span(state, index)
        spans[index] = (chunk_start + start, chunk_start + end)
        texts.append(text)
    costs = corpus.chunk_cost.copy()
    if spans:
        counted = np.asarray(counter.count_many(texts), dtype=np.int64) + _LABEL_TOKENS
        chosen = np.fromiter(spans, dtype=np.int64, count=len(spans))
        costs[chosen] = np.minimum(costs[chosen], counted)
    memo = {key: value for key, value in corpus.memo.items() if key not in _COST_DERIVED}
    cut = replace(corpus, chunk_cost=costs, chunk_score=new_scores, memo=memo)
    return Excerpts(corpus=cut, spans=spans)
