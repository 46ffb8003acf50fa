"""Exact token counts of a window's pieces, without encoding every passage on every pack.

tiktoken's encodings split text into pre-tokens with a regular expression before merging
bytes, and count each pre-token on its own. In both (cl100k_base, o200k_base) a line break
can only be followed, inside one pre-token, by white space or (o200k) "/": so a text that is
cut right after a line break, before any other character, counts exactly as the sum of its
parts (`tests/pack/test_piece_counts.py` checks this on random texts). A passage is its
header line, then a span of its document: cut there and at every such line start inside the
span, it is its header, the document's whole lines in between and a partial line at either
end. None of these but the header depends on the question: the state keeps the counts of a
document's lines once a pack's passages cover a good share of it (`_LINES_SHARE`), and of
every partial line a pack counted, so a later pack encodes little more than its headers. A
passage of a document whose lines are not counted is cut where its chunks end at a line
start instead: each whole tile there costs the count the load holds for it, and the rest are
spans (kept too). Counting the whole document for it would make a small window cost what its
documents cost (at 10M tokens, ~100 ms of each 8K pack went to counting the lines of ~16
documents of ~20K characters for ~30K characters of passages). A load counts no line:
after a restart it reads its chunk counts from disk (`token_counts`) and is done.

Other tokenizers (a local Hugging Face `tokenizer.json`) have pre-tokenizers this module
knows nothing of: their pieces are counted whole.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import logging
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from windowpack.pack.layout import Block, DocumentView
from windowpack.text import TIKTOKEN_ENCODINGS, TokenCounter

_LOG = logging.getLogger("windowpack")

if TYPE_CHECKING:  # the state counts its spans with this module when it loads
    from windowpack.pack.state import PackingState

# A line start no pre-token reaches across: after a line break, before a character that is
# neither white space nor "/" (Python's \s holds every character the encodings' \s does).
_LINE_START = re.compile(r"\n(?=[^\s/])")
_CUTTABLE = re.compile(r"[^\s/]")
# Pieces this short (headers, gap markers) are remembered by text, at most this many a state.
_SHORT_CHARS = 200
_SHORT_HELD = 100_000
# Documents whose lines one background batch counts (small: packs share the cores with it).
_LINES_BATCH = 16
# A pack counts a document's lines when its passages cover at least this share of the
# document's characters: the count then costs at most 1/share times what counting the
# passages would, and later packs cut their passages from it. High, since a passage of a
# document whose lines are not counted mostly costs its tiles' counts, already held
# (`_tiles_plan`): at 0.25, 1M packs over 10.9M tokens counted 2.9M characters each, half
# of them whole documents' lines; at 0.75, 1.9M.
_LINES_SHARE = 0.75
# Spans kept per state; past this the map starts again (rare: it keeps passages and partial
# lines, which recur from pack to pack).
_SPANS_HELD = 200_000
# Collections up to this many characters (~2M tokens) have all their lines counted in the
# background after a load (~0.3 s at 1M tokens); above, the count took seconds of the
# cores and slowed the packs meanwhile (10.9M tokens: 8K p95 112 -> 204 ms), so only what
# packs touch is counted, on first touch.
_BACKGROUND_MAX_CHARS = 8_000_000

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


_SENTINEL = "#"
"""What a block starts with: after a blank line, every tokenizer starts a new token there."""


def adds_at_blocks(counter: TokenCounter) -> bool:
    """Whether the counts of a window's blocks, each with its blank line, add up to the
    window's count. tiktoken's encodings keep a blank line whole before `[` or `#`; GPT-2-style
    pre-tokenizers (Hugging Face and GGUF tokenizers) split it into two newline tokens there
    but count it as one at the end of a text, so their windows are counted whole."""
    return counter.name in TIKTOKEN_ENCODINGS


def tokens_before(counter: TokenCounter, text: str, end: int) -> int:
    """The tokens of `text` before char `end`, a block boundary (a blank line ends there and
    a block, or the question, starts), as they are tokenized inside the whole text."""
    if adds_at_blocks(counter):
        return counter.count(text[:end])
    return counter.count(text[:end] + _SENTINEL) - counter.count(_SENTINEL)


def _count_lines_worth_counting(counter: TokenCounter, pieces: Sequence[Piece]) -> None:
    """Count, in one batch per state, the lines of every document whose lines are not held
    yet and whose passages among `pieces` cover at least `_LINES_SHARE` of it."""
    covered: dict[tuple[int, int], int] = {}
    states: dict[int, PackingState] = {}
    for state, block, _ in pieces:
        document, start, end = block.document, block.char_start, block.char_end
        if block.kind != "chunk" or document is None or start is None or end is None:
            continue
        if document in state.line_counts:
            continue
        key = (id(state), document)
        covered[key] = covered.get(key, 0) + max(0, end - start)
        states[id(state)] = state
    wanted: dict[int, list[int]] = {}
    for (state_id, document), chars in covered.items():
        if chars >= _LINES_SHARE * states[state_id].documents[document].length:
            wanted.setdefault(state_id, []).append(document)
    for state_id, documents in wanted.items():
        _count_lines(states[state_id], sorted(documents), counter)


def count_lines_in_background(state: PackingState, counter: TokenCounter) -> None:
    """Count the lines of every document of a freshly loaded state in a daemon thread, so
    that packs soon find them counted, while the load itself stayed a read of saved counts
    (a pack that comes first counts what it needs itself: the same counts, either way)."""
    if not cuts_at_lines(counter) or len(state.line_counts) == len(state.documents):
        return
    if sum(view.length for view in state.documents) > _BACKGROUND_MAX_CHARS:
        return  # seconds of a core that packs need: there, each pack counts what it touches

    def count_all() -> None:
        _lower_this_threads_priority()
        lacking = [p for p in range(len(state.documents)) if p not in state.line_counts]
        try:
            for first in range(0, len(lacking), _LINES_BATCH):
                _count_lines(state, lacking[first : first + _LINES_BATCH], counter)
        except Exception as error:
            # Counting ahead only saves packs some work (each counts what it lacks). It fails
            # when the process ends under it (`windowpack mcp` closing its store at EOF, the
            # interpreter tearing down): a thread dying with a bare "Exception in thread" on
            # a user's terminal said nothing useful, so it stops quietly.
            _LOG.debug("counting lines ahead stopped: %r", error)

    threading.Thread(target=count_all, name="windowpack-line-counts", daemon=True).start()


def _lower_this_threads_priority() -> None:
    """Let the packs go first (Linux schedules threads by their own nice value)."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)


def _count_lines(state: PackingState, documents: list[int], counter: TokenCounter) -> None:
    """Count the lines of these documents in one batch and keep them on the state."""
    texts = [state.documents[p].text for p in documents]
    starts = [[m.end() for m in _LINE_START.finditer(text)] for text in texts]
    pieces = [
        text[a:b] for text, s in zip(texts, starts, strict=True) for a, b in itertools.pairwise(s)
    ]
    counts, taken = counter.count_many(pieces), 0
    for position, lines in zip(documents, starts, strict=True):
        own = counts[taken : taken + max(0, len(lines) - 1)]
        taken += len(own)
        state.line_counts.setdefault(
            position, Lines(starts=lines, before=[0, *itertools.accumulate(own)])
        )


def span_text(documents: Sequence[DocumentView], span: _Span) -> str:
    document, first, end, tail = span
    return documents[document].text[first:end] + tail


CountMemo = dict[int, tuple[Block, str, int]]
"""Piece counts of one pack's drafts by the id of their block (kept alive beside its piece
and count, so that the id stays its own): a block the drafts share is counted once."""


def piece_counts(
    counter: TokenCounter, pieces: Sequence[Piece], memo: CountMemo | None = None
) -> list[int]:
    """The exact count of each piece, as `counter.count_many` of their texts would give.
    With a `memo`, the pieces it holds (the same block, the same text) are not counted
    again."""
    if memo is None:
        return _piece_counts(counter, pieces)
    counts = [0] * len(pieces)
    asked: list[int] = []
    for index, (_, block, text) in enumerate(pieces):
        held = memo.get(id(block))
        if held is not None and held[0] is block and held[1] == text:
            counts[index] = held[2]
        else:
            asked.append(index)
    fresh = _piece_counts(counter, [pieces[index] for index in asked])
    for index, count in zip(asked, fresh, strict=True):
        _, block, text = pieces[index]
        memo[id(block)] = (block, text, count)
        counts[index] = count
    return counts


def _piece_counts(counter: TokenCounter, pieces: Sequence[Piece]) -> list[int]:
    if not cuts_at_lines(counter):
        return counter.count_many([text for _, _, text in pieces])
    _count_lines_worth_counting(counter, pieces)
    plans = [_plan(state, block, text) for state, block, text in pieces]
    own, span_count = _count_with_missing_spans(
        counter, [(state, plan) for (state, _, _), plan in zip(pieces, plans, strict=True)]
    )
    return [
        count + lines + sum(span_count[id(state), span] for span, _ in spans)
        for count, (_, lines, spans), (state, _, _) in zip(own, plans, pieces, strict=True)
    ]


_Plan = tuple[str, int, list[tuple[_Span, str]]]
"""What to count now, the tokens of the whole lines held, and the partial lines (each its key
and its text) whose counts the state keeps."""


def _plan(state: PackingState, block: Block, text: str) -> _Plan:
    """A passage is its header line if it has one (counted now), the whole lines of its span
    (from the state's prefix sums) and the partial lines at either end of it (kept spans); in a
    document whose lines are not counted, its header and its span (kept). A piece that is not
    a passage, or whose span starts with white space or "/", is counted whole. Spans are cut
    from the piece itself (its text ends with the document's `[start:end]` and the tail), so
    planning reads no document text."""
    start, end, document = block.char_start, block.char_end, block.document
    whole: _Plan = (text, 0, [])
    if block.kind != "chunk" or document is None or start is None or end is None:
        return whole
    body = end - start
    opening = len(block.text) - body  # the header's length: the body follows it
    header = block.text[:opening]
    # A passage without a header line (a compact window's) opens with its own text.
    if body <= 0 or (header and not header.endswith("\n")) or not _CUTTABLE.match(text, opening):
        return whole
    tail = text[len(block.text) :]
    lines = state.line_counts.get(document)
    if lines is None:  # a small part of its document (`_count_lines_worth_counting`)
        known, spans = _tiles_plan(state, block, text, opening, tail)
        return header, known, spans
    first = bisect.bisect_right(lines.starts, start)  # the first line start inside the span
    last = bisect.bisect_left(lines.starts, end) - 1  # the last one
    if first > last:
        return header, 0, [((document, start, end, tail), text[opening:])]
    head_end, rest_start = lines.starts[first], lines.starts[last]
    head = ((document, start, head_end, ""), text[opening : opening + head_end - start])
    rest = ((document, rest_start, end, tail), text[opening + rest_start - start :])
    return header, lines.before[last] - lines.before[first], [head, rest]


def _tiles_plan(
    state: PackingState, block: Block, text: str, opening: int, tail: str
) -> tuple[int, list[tuple[_Span, str]]]:
    """A passage of a document whose lines are not counted, cut where one of its chunks ends
    at a line start: a part that is one whole tile (the chunk and the white space to the
    next) costs the tile's count, which the load already holds; the other parts are spans
    (kept). The last part is a tile too when the window goes on as the document does (the
    separator is the white space before the next chunk). Prose chunks mostly end at
    paragraph breaks, so most of a passage is known and tiktoken reads only the tiles cut
    inside a paragraph."""
    document, start, end = block.document, block.char_start, block.char_end
    assert document is not None and start is not None and end is not None
    view = state.documents[document]
    offset = state.document_first_chunk[document]
    assert block.first_chunk is not None and block.last_chunk is not None
    first, last = block.first_chunk - offset, block.last_chunk - offset
    starts, tokens = view.chunk_starts, view.chunk_tokens
    known, spans = 0, []
    part_start, part_first = start, first
    for ordinal in range(first, last):
        cut = starts[ordinal + 1]
        at = opening + cut - start  # where the cut falls in the piece
        if text[at - 1] != "\n" or not _CUTTABLE.match(text, at):
            continue  # inside a paragraph: the tiles on either side of it merge
        if part_first == ordinal:
            known += tokens[ordinal]
        else:
            spans.append(((document, part_start, cut, ""), text[opening + part_start - start : at]))
        part_start, part_first = cut, ordinal + 1
    if part_first == last and block.after is not None and block.after == tail:
        known += tokens[last]  # the piece ends as its last tile does: "\n\n" before a chunk
        return known, spans
    spans.append(((document, part_start, end, tail), text[opening + part_start - start :]))
    return known, spans


def _count_with_missing_spans(
    counter: TokenCounter, plans: Sequence[tuple[PackingState, _Plan]]
) -> tuple[list[int], dict[tuple[int, _Span], int]]:
    """Each plan's own text counted, in one batch (both cores when it is long) with every
    span its state does not hold yet, which the state keeps; and the count of every span of
    the plans by (id of its state, span), read once here (another pack may clear a map)."""
    missing: dict[tuple[int, _Span], tuple[PackingState, _Span, str]] = {}
    span_count: dict[tuple[int, _Span], int] = {}
    for state, (_, _, spans) in plans:
        for span, cut in spans:
            held = state.span_counts.get(span)
            if held is None:
                missing.setdefault((id(state), span), (state, span, cut))
            else:
                span_count[id(state), span] = held
    # Headers, gap markers and summaries recur from pack to pack: short ones are kept by text.
    memo = [state.short_counts.get(own) for state, (own, _, _) in plans]
    asked = [own for (_, (own, _, _)), known in zip(plans, memo, strict=True) if known is None]
    counts = counter.count_many([*asked, *(text for _, _, text in missing.values())])
    for (key, (state, span, _)), count in zip(missing.items(), counts[len(asked) :], strict=True):
        if len(state.span_counts) >= _SPANS_HELD:
            state.span_counts.clear()  # rare: passages and partial lines recur
        state.span_counts[span] = span_count[key] = count
    fresh = iter(counts[: len(asked)])
    own_counts = []
    for (state, (own, _, _)), known in zip(plans, memo, strict=True):
        count = next(fresh) if known is None else known
        if known is None and len(own) <= _SHORT_CHARS:
            _remember(state.short_counts, own, count)
        own_counts.append(count)
    return own_counts, span_count


def _remember(memo: dict[str, int], text: str, count: int) -> None:
    if len(memo) >= _SHORT_HELD:
        memo.clear()  # rare: a version asked for more distinct headers than this
    memo[text] = count
