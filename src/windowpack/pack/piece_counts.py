"""Exact token counts of a window's pieces, without encoding every passage on every pack.

tiktoken's encodings split text into pre-tokens with a regular expression before merging
bytes, and count each pre-token on its own. In both (cl100k_base, o200k_base) a line break
can only be followed, inside one pre-token, by white space or (o200k) "/": so a text that is
cut right after a line break, before any other character, counts exactly as the sum of its
parts (`tests/pack/test_piece_counts.py` checks this on random texts). A passage is its
header line, then a span of its document: cut there and at every such line start inside the
span, its lines, and the partial lines at either end, are spans of the document whose counts
do not depend on the question. They are kept per state once counted, so a pack encodes only
what no earlier pack of the version did: the headers and the lines not yet met.

Other tokenizers (a local Hugging Face `tokenizer.json`) have pre-tokenizers this module
knows nothing of: their pieces are counted whole, as before.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence

from windowpack.pack.layout import Block
from windowpack.pack.state import PackingState
from windowpack.text.tokens import TIKTOKEN_ENCODINGS, TokenCounter

# A line start no pre-token reaches across: after a line break, before a character that is
# neither white space nor "/" (Python's \s holds every character the encodings' \s does).
_LINE_START = re.compile(r"\n(?=[^\s/])")
_CUTTABLE = re.compile(r"[^\s/]")

Piece = tuple[PackingState, Block, str]
"""A block, the state it was rendered from, and its piece: its text plus what follows it."""
_Span = tuple[int, int, int, str]
"""(document position, first char, end char, what follows): the text `text[first:end] +
tail` of one document, whose count a state keeps."""


def piece_counts(counter: TokenCounter, pieces: Sequence[Piece]) -> list[int]:
    """The exact count of each piece, as `counter.count_many` of their texts would give."""
    if counter.name not in TIKTOKEN_ENCODINGS:
        return counter.count_many([text for _, _, text in pieces])
    plans = [_plan(state, block, text) for state, block, text in pieces]
    own = _count_with_missing_spans(
        counter, [(state, plan) for (state, _, _), plan in zip(pieces, plans, strict=True)]
    )
    return [
        count + sum(state.span_counts[span] for span in spans)
        for count, (_, spans), (state, _, _) in zip(own, plans, pieces, strict=True)
    ]


def _plan(state: PackingState, block: Block, text: str) -> tuple[str, list[_Span]]:
    """What to count now (the text before the passage's span: its header line) and the spans
    of the document it holds, cut at line starts. A piece that is not a passage, or whose
    span starts with white space or "/", is counted whole: (its text, no spans)."""
    start, end, document = block.char_start, block.char_end, block.document
    if block.kind != "chunk" or document is None or start is None or end is None:
        return text, []
    source = state.documents[document].text
    body = end - start
    tail = text[len(block.text) :]
    header = block.text[: len(block.text) - body]
    if body <= 0 or not header.endswith("\n") or not _CUTTABLE.match(source, start):
        return text, []
    starts = _line_starts(state, document)
    inside = starts[bisect.bisect_right(starts, start) : bisect.bisect_left(starts, end)]
    cuts = [start, *inside]
    spans = [(document, a, b, "") for a, b in itertools.pairwise(cuts)]
    spans.append((document, cuts[-1], end, tail))
    return header, spans


def _line_starts(state: PackingState, document: int) -> list[int]:
    """Where the document's cuttable lines start, found once per state and document."""
    starts = state.line_starts.get(document)
    if starts is None:
        text = state.documents[document].text
        starts = [match.end() for match in _LINE_START.finditer(text)]
        state.line_starts[document] = starts
    return starts


def _count_with_missing_spans(
    counter: TokenCounter, plans: Sequence[tuple[PackingState, tuple[str, list[_Span]]]]
) -> list[int]:
    """Each plan's own text counted, in one batch (both cores when it is long) with every
    span its state does not hold yet, which the state keeps."""
    missing: dict[tuple[int, _Span], tuple[PackingState, _Span]] = {}
    for state, (_, spans) in plans:
        for span in spans:
            if span not in state.span_counts:
                missing.setdefault((id(state), span), (state, span))
    span_texts = [
        state.documents[document].text[first:end] + tail
        for state, (document, first, end, tail) in missing.values()
    ]
    counts = counter.count_many([*(own for _, (own, _) in plans), *span_texts])
    for (state, span), count in zip(missing.values(), counts[len(plans) :], strict=True):
        state.span_counts[span] = count
    return counts[: len(plans)]
