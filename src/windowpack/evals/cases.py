"""One eval item: a haystack as documents, the question, and what a good window must hold."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from windowpack.types import Document

_WHITESPACE = re.compile(r"\s+")

# How a reply to a case is graded: the share of expected values it states (NIAH, RULER;
# "facts": the same share, where a value is a fact's answer, as for the associative,
# multi-hop and aggregation tasks), or the MRCR grade of OpenAI's rule or of GDM's MRCR v2.
Grading = Literal["values", "facts", "mrcr-openai", "mrcr-gdm"]


@dataclass(frozen=True, kw_only=True)
class Case:
    """A generated eval item.

    `needles` are the texts a window needs verbatim to answer (the asked needles only; a
    distractor does not count). `answers` are what a correct reply contains: needle values
    for NIAH and RULER, the expected reply (random prefix included) for MRCR; an MRCR case's
    `needles` are every instance of the asked request's reply, in conversation order.
    `conversation` holds an OpenAI-shaped MRCR case's messages. `grading` says how a reply is
    scored. `params` holds what the question asks, for the readers and the report.
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
    grading: Grading = "values"
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_mrcr(self) -> bool:
        return self.grading.startswith("mrcr")

    def needle_recall(self, window_text: str) -> float:
        """The share of this case's needles found verbatim in `window_text`.

        Whitespace runs compare equal: a baseline joins chunks with a blank line where the
        source had one space, which changes no word of the needle.
        """
        text = normalise_whitespace(window_text)
        found = sum(normalise_whitespace(needle) in text for needle in self.needles)
        return found / len(self.needles)

    def ordinal_complete(self, window_text: str) -> bool | None:
        """MRCR: whether every instance up to the asked k-th appears whole (the reply
        verbatim, whitespace runs compared equal) in `window_text`, in conversation order.
        None for other cases.

        Each planted reply is used once per conversation, so finding it is finding its turn.
        """
        if not self.is_mrcr:
            return None
        text = normalise_whitespace(window_text)
        position = 0
        for needle in self.needles[: int(self.params["k"])]:
            found = text.find(normalise_whitespace(needle), position)
            if found < 0:
                return False
            position = found + 1
        return True


def normalise_whitespace(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()
