"""Exact token counts of a window's pieces, without encoding every passage on every pack.

tiktoken's encodings split text into pre-tokens with a regular expression before merging
bytes, and count each pre-token on its own. In both (cl100k_base, o200k_base) a line break
can only be followed, inside one pre-token, by white space or (o200k) "/": so a text that is
cut right after a line break, before any other character, counts exactly as the sum of its
parts (`tests/pack/test_piece_counts.py` checks this on random texts). A passage is its
header line, then a span of its document: cut there and at every such line start inside the
span, it is its header, the document's whole lines in between and a partial line at either
end. None of these but the header depends on the question: the state counts every line, and
the partial lines at every chunk's start and end, when it loads (in the batch that counts
its chunks), so a pack encodes only its headers (and spans no chunk boundary predicted).

Other tokenizers (a local Hugging Face `tokenizer.json`) have pre-tokenizers this module
knows nothing of: their pieces are counted whole, as before.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from windowpack.pack.layout import SEPARATOR, Block, DocumentView
from windowpack.text.tokens import TIKTOKEN_ENCODINGS, TokenCounter

if TYPE_CHECKING:  # the state counts its spans with this module when it loads
    from windowpack.pack.state import PackingState

# A line start no pre-token reaches across: after a line break, before a character that is
# neither white space nor "/" (Python's \s holds every character the encodings' \s does).
_LINE_START = re.compile(r"\n(?=[^\s/])")
_CUTTABLE = re.compile(r"[^\s/]")
# Pieces this short (headers, gap markers) are remembered by text, at most this many a state.
_SHORT_CHARS = 200
_SHORT_HELD = 100_000

Piece = tuple["PackingState", Block, str]
"""A block, the state it was rendered from, and its piece: its text plus what follows it."""
_Span = tuple[int, int, int, str]
"""(document position, first char, end char, what follows): the text `text[first:end] +
tail` of one document, whose count a state keeps."""


@dataclass(frozen=True)
class Lines:
    """A document's cuttable line starts, and `before[j]`: the tokens of its lines from the
    first start to start j (a run of whole lines is a difference of two entries)."""

    starts: list[int]
    before: list[int]


def cuts_at_lines(counter: TokenCounter) -> bool:
    """Whether `counter`'s pieces may be counted from their lines (its encoding is known)."""
    return counter.name in TIKTOKEN_ENCODINGS


def line_starts(documents: Sequence[DocumentView]) -> list[list[int]]:
    """Each document's cuttable line starts."""
    return [[m.end() for m in _LINE_START.finditer(view.text)] for view in documents]


def whole_lines(documents: Sequence[DocumentView], starts: list[list[int]]) -> list[str]:
    """Every whole line (from one cuttable start to the next) of every document, in order."""
    return [
        view.text[a:b]
        for view, lines in zip(documents, starts, strict=True)
        for a, b in itertools.pairwise(lines)
    ]


def kept_lines(starts: list[list[int]], counts: Sequence[int]) -> list[Lines]:
    """`Lines` per document from the counts of `whole_lines`, in the same order."""
    kept, taken = [], 0
    for lines in starts:
        own = counts[taken : taken + max(0, len(lines) - 1)]
        taken += len(own)
        kept.append(Lines(starts=lines, before=[0, *itertools.accumulate(own)]))
    return kept


def edge_spans(documents: Sequence[DocumentView], starts: list[list[int]]) -> list[_Span]:
    """At each chunk, the partial lines a passage starting or ending there holds (with either
    tail): counted when the state loads, so that a pack encodes only its headers."""
    spans: list[_Span] = []
    for position, (view, lines) in enumerate(zip(documents, starts, strict=True)):
        for start in view.chunk_starts:
            after = bisect.bisect_right(lines, start)
            if after < len(lines) and _CUTTABLE.match(view.text, start):
                spans.append((position, start, lines[after], ""))
        for end in view.chunk_ends:
            before = bisect.bisect_left(lines, end) - 1
            if before >= 0:
                spans.extend((position, lines[before], end, tail) for tail in ("", SEPARATOR))
    return spans


def span_text(documents: Sequence[DocumentView], span: _Span) -> str:
    document, first, end, tail = span
    return documents[document].text[first:end] + tail


def piece_counts(counter: TokenCounter, pieces: Sequence[Piece]) -> list[int]:
    """The exact count of each piece, as `counter.count_many` of their texts would give."""
    if not cuts_at_lines(counter):
        return counter.count_many([text for _, _, text in pieces])
    plans = [_plan(state, block, text) for state, block, text in pieces]
    own = _count_with_missing_spans(
        counter, [(state, plan) for (state, _, _), plan in zip(pieces, plans, strict=True)]
    )
    return [
        count + lines + sum(state.span_counts[span] for span in spans)
        for count, (_, lines, spans), (state, _, _) in zip(own, plans, pieces, strict=True)
    ]


_Plan = tuple[str, int, list[_Span]]
"""What to count now, the tokens of the whole lines held, and the partial lines held."""


def _plan(state: PackingState, block: Block, text: str) -> _Plan:
    """A passage is its header line (counted now), the whole lines of its span (from the
    state's prefix sums) and the partial lines at either end of it (kept spans). A piece that
    is not a passage, or whose span starts with white space or "/", is counted whole."""
    start, end, document = block.char_start, block.char_end, block.document
    whole: _Plan = (text, 0, [])
    if block.kind != "chunk" or document is None or start is None or end is None:
        return whole
    lines = state.lines[document] if document < len(state.lines) else None
    body = end - start
    header = block.text[: len(block.text) - body]
    if lines is None or body <= 0 or not header.endswith("\n"):
        return whole
    if not _CUTTABLE.match(state.documents[document].text, start):
        return whole
    tail = text[len(block.text) :]
    first = bisect.bisect_right(lines.starts, start)  # the first line start inside the span
    last = bisect.bisect_left(lines.starts, end) - 1  # the last one
    if first > last:
        return header, 0, [(document, start, end, tail)]
    head = (document, start, lines.starts[first], "")
    rest = (document, lines.starts[last], end, tail)
    return header, lines.before[last] - lines.before[first], [head, rest]


def _count_with_missing_spans(
    counter: TokenCounter, plans: Sequence[tuple[PackingState, _Plan]]
) -> list[int]:
    """Each plan's own text counted, in one batch (both cores when it is long) with every
    span its state does not hold yet, which the state keeps."""
    missing: dict[tuple[int, _Span], tuple[PackingState, _Span]] = {}
    for state, (_, _, spans) in plans:
        for span in spans:
            if span not in state.span_counts:
                missing.setdefault((id(state), span), (state, span))
    # Headers, gap markers and summaries recur from pack to pack: short ones are kept by text.
    memo = [state.short_counts.get(own) for state, (own, _, _) in plans]
    asked = [own for (_, (own, _, _)), known in zip(plans, memo, strict=True) if known is None]
    span_texts = [span_text(state.documents, span) for state, span in missing.values()]
    counts = counter.count_many([*asked, *span_texts])
    for (state, span), count in zip(missing.values(), counts[len(asked) :], strict=True):
        state.span_counts[span] = count
    fresh = iter(counts[: len(asked)])
    own_counts = []
    for (state, (own, _, _)), known in zip(plans, memo, strict=True):
        count = next(fresh) if known is None else known
        if known is None and len(own) <= _SHORT_CHARS:
            _remember(state.short_counts, own, count)
        own_counts.append(count)
    return own_counts


def _remember(memo: dict[str, int], text: str, count: int) -> None:
    if len(memo) >= _SHORT_HELD:
        memo.clear()  # rare: a version asked for more distinct headers than this
    memo[text] = count
