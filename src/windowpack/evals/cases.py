"""One eval item: a haystack as documents, the question, and what a good window must hold."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from windowpack.types import Document

_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True, kw_only=True)
class Case:
    """A generated eval item.

    `needles` are the texts a window needs verbatim to answer (the asked needles only; a
    distractor does not count). `answers` are what a correct reply contains: needle values
    for NIAH and RULER, the expected reply (random prefix included) for MRCR. `conversation`
    is set for MRCR, whose haystack is a chat added with `Collection.add_conversation`.
    `params` holds what the question asks, for the readers and the report.
    """

    task: str
    name: str
    length: int
    tokens: int
    depth: float | None
    documents: tuple[Document, ...]
    question: str
    needles: tuple[str, ...]
    answers: tuple[str, ...]
    conversation: tuple[Mapping[str, str], ...] | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    def needle_recall(self, window_text: str) -> float:
        """The share of this case's needles found verbatim in `window_text`.

        Whitespace runs compare equal: a baseline joins chunks with a blank line where the
        source had one space, which changes no word of the needle.
        """
        text = normalise_whitespace(window_text)
        found = sum(normalise_whitespace(needle) in text for needle in self.needles)
        return found / len(self.needles)


def normalise_whitespace(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()
