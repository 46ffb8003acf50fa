"""Assistant replies for MRCR conversations: runs of whole paragraphs cut from a haystack.

A haystack gives one fixed pool of replies per size range, in haystack order; a case draws
from it with its own seed. Because the pool does not depend on the seed, the replies (and so
the chunks of every reply, since each chat message is chunked on its own) repeat across the
cases of a run, and the store's embedding cache embeds each of them once.
"""

from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass

from windowpack.documents import message_starts
from windowpack.errors import InvalidArgumentError
from windowpack.evals.haystack import Haystack, sentence_boundaries
from windowpack.text import TokenCounter, get_token_counter

_PARAGRAPH = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True)
class Reply:
    """One reply's text and its exact token count in the pool's tokenizer."""

    text: str
    tokens: int


@dataclass(frozen=True, kw_only=True)
class ReplyRange:
    """The token counts a reply may have; `spread` draws a target per reply in the range
    (so lengths spread over it), else a run ends as soon as it reaches `low`."""

    low: int
    high: int
    spread: bool = False


def reply_pool(haystack: Haystack, counter: TokenCounter, size: ReplyRange) -> tuple[Reply, ...]:
    """Distinct runs of whole paragraphs (or, in an over-long paragraph, of whole sentences)
    of `size.low` to `size.high` tokens, in haystack order; computed once per arguments.

    A paragraph with a line that opens like a chat message (`User:`, `AI:`) is left out: in a
    transcript it would start a message of its own.
    """
    if not 1 <= size.low <= size.high:
        raise InvalidArgumentError("replies", f"bad token range {size.low}-{size.high}")
    return _pool(haystack, counter.name, size)


@functools.lru_cache(maxsize=8)
def _pool(haystack: Haystack, tokenizer: str, size: ReplyRange) -> tuple[Reply, ...]:
    counter = get_token_counter(tokenizer)
    pieces = [piece.strip() for text in haystack.passages for piece in _PARAGRAPH.split(text)]
    pieces = [piece for piece in pieces if piece and not message_starts(piece, 0, len(piece))]
    counts = counter.count_many(pieces)
    targets = random.Random(f"replies:{size.low}:{size.high}")
    replies: list[Reply] = []
    run: list[str] = []
    total = 0
    goal = _goal(targets, size)
    for piece, count in zip(pieces, counts, strict=True):
        if count > size.high:
            replies += _sentence_runs(piece, counter, size)
            continue
        if total + count > size.high:  # the run cannot reach its goal: end it here
            if total >= size.low:
                replies.append(_joined(run, counter))
                goal = _goal(targets, size)
            run, total = [], 0
        run.append(piece)
        total += count
        if total >= goal:
            replies.append(_joined(run, counter))
            run, total, goal = [], 0, _goal(targets, size)
    return tuple(reply for reply in dict.fromkeys(replies) if size.low <= reply.tokens <= size.high)


def _joined(run: list[str], counter: TokenCounter) -> Reply:
    text = "\n\n".join(run)
    return Reply(text, counter.count(text))


def _goal(targets: random.Random, size: ReplyRange) -> int:
    return targets.randint(size.low, size.high) if size.spread else size.low


def _sentence_runs(paragraph: str, counter: TokenCounter, size: ReplyRange) -> list[Reply]:
    bounds = sentence_boundaries(paragraph)
    runs: list[Reply] = []
    start = 0
    for end in bounds[1:]:
        text = paragraph[start:end].strip()
        tokens = counter.count(text)
        if tokens >= size.low or end == len(paragraph):
            if size.low <= tokens <= size.high:
                runs.append(Reply(text, tokens))
            start = end
    return runs
