"""Repeated requests (design §4.9): "the 2nd poem about tapirs", "the last email about horses".

A question that refers to an instance of something asked before names an ordinal (first,
2nd, third, last, every, ...) and describes the request (its format, topic, style, ... in any
words). Every turn of a conversation whose request agrees with the description on every
stated word is an instance; the instances go into the window first, as whole turns, in the
order the question needs them (the asked one, then those before it, then the rest), each
headed by its instance number. Near misses — a request that differs in one stated field —
are not instances: they lack one of the description's words.

Matching is by content words, not by any benchmark's vocabulary: both sides are split into
words, function words are dropped (bm25s's English list) and the rest stemmed (Snowball, as
BM25 does). A request matches when its words include all the description's. Of the matching
requests, those that add a qualifier another matching request lacks ("saffron rice" where
"saffron" also matched) are a different request and are left out: the instances are the
matching requests minimal under inclusion. An under-specified description ("the first haiku
about saffron", styles unsaid) thus keeps every style: that is what it asks for.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from windowpack.documents import message_starts
from windowpack.pack.layout import DocumentView
from windowpack.text import bm25s_stop_words

_WORDS = re.compile(r"\w+")
_ORDINAL_WORDS = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
]
_REFERENCE = re.compile(
    r"\b(?:(?P<number>\d+)(?:st|nd|rd|th)"
    rf"|(?P<word>{'|'.join(_ORDINAL_WORDS)})"
    r"|(?P<before_last>second[- ]to[- ]last|penultimate|next[- ]to[- ]last)"
    r"|(?P<last>last|latest|final|most recent)"
    r"|(?P<every>every|each|all(?: of)?(?: the)?))\b"
    r"(?:\s*\(\s*1[- ]indexed\s*\))?\s+(?P<description>[^.?!;:\n]+)",
    re.IGNORECASE,
)
# Words that say "a request I made" rather than what was requested ("the third time I asked
# you for a poem about X"): dropped from the front of a description.
_META = re.compile(
    r"^(?:(?:time|times|occasion|request|requests|instance|occurrence|one|message|prompt)\s+)?"
    r"(?:(?:that|when|where|in which)\s+)?(?:(?:i|you|we)\s+)?"
    r"(?:(?:asked|requested|wanted|had|told|said|wrote|requested)\s+)?(?:(?:you|me|for)\s+)?"
    r"(?:(?:to\s+write|to\s+make|to\s+give|to|for|about|of)\s+)?",
    re.IGNORECASE,
)
# Verbs of asking and politeness say nothing of what was asked.
_STOP_EXTRA = frozenset(
    {"write", "wrote", "written", "time", "times", "ask", "asked", "please", "thanks", "kindly"}
)
# A request is the first line of a turn's first message, up to this many characters.
_REQUEST_CHARS = 300


@dataclass(frozen=True, kw_only=True)
class Reference:
    """What a question refers to: the k-th instance (1-indexed), or counted from the end
    (`from_end`: 1 is the last), or every one; and the description's content words."""

    terms: frozenset[str]
    ordinal: int | None = None
    from_end: int | None = None
    every: bool = False


@dataclass(frozen=True, kw_only=True)
class Turn:
    """A conversation turn as the matcher sees it: where it is and what was asked."""

    document: int
    unit: int
    first_chunk: int
    request: str
    terms: frozenset[str]


@dataclass(frozen=True, kw_only=True)
class Focus:
    """What a question pins: chunk indices whose turns go first (in that order), and the
    header label of each instance by (document position, unit)."""

    pins: tuple[int, ...] = ()
    labels: dict[tuple[int, int], str] | None = None
    essential: int = 0
    """How many of the first pins the question cannot be answered without (the asked
    instance and every one before it): the overview yields room to them."""


def parse_reference(question: str) -> Reference | None:
    """The ordinal reference in `question`, or None when it makes none."""
    for match in _REFERENCE.finditer(question):
        description = match["description"]
        while (shorter := _META.sub("", description, count=1)) != description:
            description = shorter
        terms = content_terms(description)
        if not terms:
            continue
        if match["number"] or match["word"]:
            number = int(match["number"] or _ORDINAL_WORDS.index(match["word"].lower()) + 1)
            return Reference(terms=terms, ordinal=number)
        if match["before_last"]:
            return Reference(terms=terms, from_end=2)
        if match["last"]:
            return Reference(terms=terms, from_end=1)
        return Reference(terms=terms, every=True)
    return None


def content_terms(text: str) -> frozenset[str]:
    """The stemmed content words of `text`."""
    words = [w for w in _WORDS.findall(text.lower()) if w not in _stop_words()]
    return frozenset(_stemmer().stemWords(words))


def conversation_turns(
    documents: Sequence[DocumentView], document_first_chunk: Sequence[int]
) -> list[Turn]:
    """Every turn of the conversation documents, with its request's content words."""
    turns = []
    for position, view in enumerate(documents):
        if view.unit_name != "turn":
            continue
        seen: set[int] = set()
        for ordinal, unit in enumerate(view.chunk_units):
            if unit is None or unit in seen:
                continue
            seen.add(unit)
            request = _request(view.text, view.chunk_starts[ordinal], view.chunk_ends[ordinal])
            first = document_first_chunk[position] + ordinal
            terms = content_terms(request)
            turns.append(
                Turn(document=position, unit=unit, first_chunk=first, request=request, terms=terms)
            )
    return turns


def focus(turns: Sequence[Turn], question: str) -> Focus:
    """The turns `question` refers to, pinned in the order it needs them, with labels."""
    reference = parse_reference(question) if turns else None
    if reference is None:
        return Focus()
    pins: list[int] = []
    labels: dict[tuple[int, int], str] = {}
    essential = 0
    for matches in _instances(turns, reference.terms):
        for number, turn in enumerate(matches, start=1):
            labels[(turn.document, turn.unit)] = f"instance {number} of {len(matches)}"
        needed = _needed_order(matches, reference)
        # Only the first conversation's count: the pins of the next ones come after its rest.
        essential = essential or len(pins) + _asked_number(matches, reference)
        pins.extend(turn.first_chunk for turn in needed)
    return Focus(pins=tuple(pins), labels=labels, essential=essential)


def _instances(turns: Sequence[Turn], terms: frozenset[str]) -> list[list[Turn]]:
    """Per conversation, in order, the turns whose request is an instance of `terms`."""
    matching = [turn for turn in turns if terms <= turn.terms]
    kinds = {turn.terms for turn in matching}
    # A request that adds words another matching request lacks is a different request.
    minimal = {kind for kind in kinds if not any(other < kind for other in kinds)}
    by_document: dict[int, list[Turn]] = {}
    for turn in matching:
        if turn.terms in minimal:
            by_document.setdefault(turn.document, []).append(turn)
    return [by_document[document] for document in sorted(by_document)]


def _asked_number(matches: list[Turn], reference: Reference) -> int:
    """The 1-based number of the asked instance; the count of instances when the question
    asks for every one, or for more instances than there are."""
    count = len(matches)
    if reference.every:
        return count
    if reference.ordinal is not None:
        asked = reference.ordinal
    else:
        asked = count + 1 - (reference.from_end or 1)
    return asked if 1 <= asked <= count else count


def _needed_order(matches: list[Turn], reference: Reference) -> list[Turn]:
    """The asked instance first, then the ones before it (latest first), then the rest."""
    ordinal = reference.ordinal
    if reference.every or (ordinal is not None and not 1 <= ordinal <= len(matches)):
        return matches  # every one (or "the 5th" of 3: all, so a reader sees there are 3)
    asked = _asked_number(matches, reference)
    before = matches[: asked - 1][::-1]
    return [matches[asked - 1], *before, *matches[asked:]]


def _request(text: str, start: int, end: int) -> str:
    """The first line of the message that opens a turn, without its role prefix."""
    later = message_starts(text, start + 1, end)
    message = text[start : later[0] if later else end]
    line = message.strip().split("\n", 1)[0]
    _, colon, rest = line.partition(":")
    line = rest if colon and message_starts(line, 0, len(line)) else line
    return line.strip()[:_REQUEST_CHARS]


@functools.cache
def _stop_words() -> frozenset[str]:
    return bm25s_stop_words("STOPWORDS_EN_PLUS") | _STOP_EXTRA


@functools.cache
def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")
