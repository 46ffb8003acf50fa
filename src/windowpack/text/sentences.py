"""Sentence splitting with exact char spans: what the chunker, BM25 and the summarizer share.

A sentence ends at `.`, `!` or `?` (closing quotes and brackets included) followed by white
space and something that starts a sentence: a line break, an opening quote or bracket, a
digit, or an uppercase letter (or a letter of a script without case). A lone `.` after a
known abbreviation, a single initial or a dotted abbreviation ("e.g.") does not end one.

Chinese and Japanese end a sentence with a full-width stop (U+3002 ideographic full stop,
U+FF01 and U+FF1F, the full-width "!" and "?", U+FF61 the half-width stop) and write the
next one without a space: such a stop ends a sentence wherever more text follows, except
inside a quotation: before closing brackets or quotes (a quoted question followed by "he
said" in Japanese) it ends one only where white space follows them.
"""

from __future__ import annotations

import re

from windowpack.errors import InvalidArgumentError
from windowpack.types import Span

# Straight and curly quotes, guillemets, brackets (escaped: curly quotes look alike).
_CLOSERS = "\"'\u201d\u2019\u00bb)\\]"
_OPENERS = "\"'\u201c\u2018\u00ab(["
_SENTENCE_END = re.compile(rf"(?P<stop>[.!?]+)[{_CLOSERS}]*(?P<gap>\s+)(?=(?P<next>\S))")
# The CJK closers: corner brackets, full-width brackets and quotes.
_WIDE_CLOSERS = "\u300d\u300f\u3011\u3015\u3017\u3019\u301b\uff09\uff3d\uff5d\u201d\u2019\"')\\]"
_WIDE_STOPS = "\u3002\uff01\uff1f\uff61"
_WIDE_SENTENCE_END = re.compile(
    rf"[{_WIDE_STOPS}]+(?P<closers>[{_WIDE_CLOSERS}]*)(?P<gap>\s*)(?=\S)"
)
_ABBREVIATION_WORDS = (
    "mr mrs ms dr prof sr jr st vs fig figs eq vol pp approx inc ltd co corp cf al gen col lt "
    "sgt capt rev hon mt ft jan feb mar apr jun jul aug sep sept oct nov dec"
)
_ABBREVIATIONS = frozenset(_ABBREVIATION_WORDS.split())
_DOTTED_ABBREVIATION = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")
_MAX_ABBREVIATION_CHARS = 12


def split_sentences(text: str, start: int = 0, end: int | None = None) -> list[Span]:
    """The sentences of `text[start:end]`, as spans without surrounding whitespace."""
    end = len(text) if end is None else end
    if not 0 <= start <= end <= len(text):
        argument = "start" if not 0 <= start <= len(text) else "end"
        raise InvalidArgumentError(argument, f"[{start}, {end}) is not a range of the text")
    spans: list[Span] = []
    sentence_start = start
    for match in _sentence_ends(text, start, end):
        append_trimmed(spans, text, sentence_start, match.start("gap"))
        sentence_start = match.end("gap")
    append_trimmed(spans, text, sentence_start, end)
    return spans


def _sentence_ends(text: str, start: int, end: int) -> list[re.Match[str]]:
    """The matches that end a sentence in `text[start:end]`, in order, whichever script."""
    ends = [m for m in _SENTENCE_END.finditer(text, start, end) if _ends_sentence(text, m, start)]
    if any(text.find(stop, start, end) >= 0 for stop in _WIDE_STOPS):  # no copy of the range
        wide = _WIDE_SENTENCE_END.finditer(text, start, end)
        ends.extend(match for match in wide if match["gap"] or not match["closers"])
        ends.sort(key=lambda match: match.start())
    return ends


def _ends_sentence(text: str, match: re.Match[str], floor: int) -> bool:
    following = match["next"]
    starts_new = "\n" in match["gap"] or following in _OPENERS or following.isdigit()
    # isalpha-and-not-lower: an uppercase letter, or a letter of a script without case.
    starts_new = starts_new or (following.isalpha() and not following.islower())
    # Only a lone "." can end an abbreviation ("..." is an ellipsis).
    return starts_new and not (match["stop"] == "." and _is_abbreviation(text, match, floor))


def _is_abbreviation(text: str, match: re.Match[str], floor: int) -> bool:
    word_start = match.start()
    while word_start > floor and not text[word_start - 1].isspace():
        word_start -= 1
        if match.start() - word_start > _MAX_ABBREVIATION_CHARS:
            return False
    word = text[word_start : match.start()].lstrip(_OPENERS).lower()
    single_initial = len(word) == 1 and word.isalpha()
    return single_initial or word in _ABBREVIATIONS or bool(_DOTTED_ABBREVIATION.fullmatch(word))


def append_trimmed(spans: list[Span], text: str, start: int, end: int) -> None:
    """Append `[start, end)` without its surrounding whitespace, unless nothing is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        spans.append(Span(start=start, end=end))
