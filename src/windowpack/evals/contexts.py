"""What every eval system builds, and the budget filling the retrieval baselines share.

A system (`evals.systems`, `evals.llama_baseline`) reads a `Target` and answers each
question with a `Context` of at most the budget's tokens, counted exactly.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from windowpack.text import TokenCounter

if TYPE_CHECKING:
    from windowpack.evals.chunk_view import ChunkView
    from windowpack.service import Collection, Store
    from windowpack.types import Window

SEPARATOR = "\n\n"


@dataclass(frozen=True, kw_only=True)
class Target:
    """One eval collection and what the systems need to read it."""

    store: Store
    collection: Collection
    counter: TokenCounter
    chunks: Callable[[], ChunkView]  # loaded on first use, shared by the systems


@dataclass(frozen=True, kw_only=True)
class Context:
    """What a system put in front of the reader: text, exact tokens, seconds to build it;
    windowpack's keeps its `Window`, whose items say what each part of the text is."""

    text: str
    tokens: int
    seconds: float
    window: Window | None = None  # windowpack's own window, items and all
    summary_tokens: int = 0  # tokens of the summaries among the text (RAPTOR's), each alone


def fill_to_budget(
    ranked: Sequence[int], texts: Sequence[str], costs: Sequence[int], separator: int, budget: int
) -> str:
    """Chunks taken best first while they fit (`choose_to_budget`), joined in document order."""
    chosen = choose_to_budget(ranked, costs, separator, budget)
    return SEPARATOR.join(texts[index] for index in sorted(chosen))


def choose_to_budget(
    ranked: Sequence[int], costs: Sequence[int], separator: int, budget: int
) -> list[int]:
    """The leading items of `ranked` that fit in `budget` (each costs its tokens plus a
    separator), best first. Stops at the first that does not fit, as a top-k retriever
    filled to a budget does."""
    chosen: list[int] = []
    used = 0
    for index in ranked:
        cost = costs[index] + (separator if chosen else 0)
        if used + cost > budget:
            break
        chosen.append(index)
        used += cost
    return chosen


def exact_context(
    text: str, counter: TokenCounter, started: float, budget: int | None = None
) -> Context:
    """`text` as a context, its tokens counted exactly, timed from `started`; cut at its last
    separators until it fits `budget`, when one is given."""
    tokens = counter.count(text)
    # Tokens can merge across a join; the rare overshoot drops the last chunk in order.
    while budget is not None and tokens > budget and SEPARATOR in text:
        text = text.rsplit(SEPARATOR, 1)[0]
        tokens = counter.count(text)
    return Context(text=text, tokens=tokens, seconds=seconds_since(started))


def seconds_since(started: float) -> float:
    """Seconds from `started` (a `time.perf_counter()` reading) to now."""
    return time.perf_counter() - started
