"""Every answer within the caller's `max_tokens`, counted exactly in the caller's tokenizer.

An answer is rendered from a list of items (hits, collections, a node's children, ...) by a
function of how many of them it shows, the rest said to be left out. `fit` finds the most
items whose whole rendered text fits, by counting candidate texts exactly: it never
estimates, so the text it returns is one it counted. Probes grow 1, 2, 4, ... items past
the last that fit and then halve the gap, so no probe renders much more than twice what
fits, however many items there are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from windowpack.errors import InvalidArgumentError
from windowpack.text import TokenCounter

DEFAULT_MAX_TOKENS = 4_000
"""What an answer may take of an agent's context when the caller does not say."""
MIN_MAX_TOKENS = 100
"""The fewest tokens an answer may be asked to fit in: room for its frame and a reason."""


@dataclass(frozen=True)
class Fitted:
    """An answer's text, how many of the items it shows, and its exact token count."""

    text: str
    shown: int
    tokens: int


def fit(
    render: Callable[[int], str], total: int, *, counter: TokenCounter, max_tokens: int
) -> Fitted:
    """The text of `render(n)` for the largest `n <= total` whose text has at most
    `max_tokens` tokens in `counter`'s tokenizer (largest among those probed: a count that
    fell as items were added would only make the answer shorter, never over).

    `render(0)`, the answer with no item, must fit: else an `InvalidArgumentError` naming
    `max_tokens` says how many it needs.
    """
    counted: dict[int, Fitted] = {}

    def attempt(shown: int) -> Fitted:
        if shown not in counted:
            text = render(shown)
            counted[shown] = Fitted(text, shown, counter.count(text))
        return counted[shown]

    empty = attempt(0)
    if empty.tokens > max_tokens:
        raise InvalidArgumentError(
            "max_tokens",
            f"{max_tokens:,} is fewer than this answer needs with nothing in it "
            f"({empty.tokens:,} {counter.name} tokens)",
        )
    fits, step = 0, 1
    over = total + 1
    while fits < total:
        probe = min(total, fits + step)
        if attempt(probe).tokens > max_tokens:
            over = probe
            break
        fits, step = probe, step * 2
    while over - fits > 1:
        middle = (fits + over) // 2
        if attempt(middle).tokens <= max_tokens:
            fits = middle
        else:
            over = middle
    return counted[fits]


def left_out_note(left_out: int, what: str, max_tokens: int) -> dict[str, str]:
    """What an answer adds when it shows fewer items than it found: a note for the agent to
    act on (`{"note": "3 hits left out to stay within max_tokens=500"}`), else nothing."""
    if not left_out:
        return {}
    return {"note": f"{left_out:,} {what} left out to stay within max_tokens={max_tokens:,}"}
