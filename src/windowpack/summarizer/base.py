"""What a summarizer is: the protocol every summary-tree summarizer implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from windowpack.errors import WindowpackError
from windowpack.text import TokenCounter


@runtime_checkable
class Summarizer(Protocol):
    """Turns the texts of a summary-tree node's children into one summary text."""

    @property
    def summarizer_id(self) -> str:
        """A stable id including every parameter that changes the output (e.g.
        "extractive-v3-d0.3"); it is part of the summary cache key."""
        ...

    def summarize(
        self, children: Sequence[str], *, target_tokens: int, counter: TokenCounter
    ) -> str:
        """Summarize `children` (in source order: chunks for level 1, summaries above) into a
        text that counts at most `target_tokens` tokens in `counter`."""
        ...


class SummaryFailure(WindowpackError):  # noqa: N818 - the name the design gives it
    """A summarizer could not summarize a node (e.g. the LLM behind it failed)."""

    code = "summary_failed"
    http_status = 502
