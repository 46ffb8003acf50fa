"""Planting sentences in a haystack: the step every needle-style generator shares.

A case of `length` tokens is the haystack's leading passages, shortened by the planted
sentences' own tokens, with each sentence inserted whole at the sentence boundary nearest its
depth. Each passage becomes one document, so a planted sentence changes one document and the
store's embedding cache serves every other one across the grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from windowpack.evals.haystack import Haystack, insert_at_depth, passages_of_length
from windowpack.text import TokenCounter
from windowpack.types import Document


@dataclass(frozen=True, kw_only=True)
class Planted:
    """The documents of a case with its sentences planted, and their exact token count."""

    documents: tuple[Document, ...]
    tokens: int


def plant(
    haystack: Haystack,
    counter: TokenCounter,
    *,
    length: int,
    sentences: Sequence[tuple[str, float]],
) -> Planted:
    """`length` tokens of `haystack` holding each (sentence, depth) of `sentences`."""
    planted_tokens = sum(counter.count(" " + sentence) for sentence, _ in sentences)
    passages = passages_of_length(haystack, max(1, length - planted_tokens), counter)
    for sentence, depth in sentences:
        passages = insert_at_depth(passages, counter, sentence, depth)
    documents = tuple(
        Document(text=text, id=f"passage-{index:05d}", title=f"passage {index + 1}")
        for index, text in enumerate(passages)
    )
    return Planted(documents=documents, tokens=sum(counter.count_many(list(passages))))
