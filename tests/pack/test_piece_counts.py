"""Counting a window's pieces from kept line counts gives exactly what counting them whole does."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import time
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import windowpack as wp
from windowpack.pack import layout
from windowpack.pack import piece_counts as piece_counts_module
from windowpack.pack.layout import Block, DocumentView
from windowpack.pack.piece_counts import piece_counts
from windowpack.pack.state import PackingState, state_from_views
from windowpack.text.tokens import TokenCounter, get_token_counter

TOKENIZERS = ["o200k_base", "cl100k_base"]
# Characters that make the pre-tokenizers' edge cases: line breaks of both kinds, spaces and
# tabs, "/" (o200k keeps it after a line break), digits, apostrophes, punctuation, letters of
# both cases, a combining mark, a non-breaking space and a non-Latin script.
ALPHABET = "\n\n\n\r  \t//0123''.,:;-?!()[]#aAbBzZ\u0301\u00a0\u3000\u0416\u0436é"
ESSAYS = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "data"
    / "ruler"
    / "PaulGrahamEssays.json"
)
_LINE_START = re.compile(r"\n(?=[^\s/])")


def _texts() -> st.SearchStrategy[str]:
    return st.text(alphabet=ALPHABET, min_size=1, max_size=120)


@settings(max_examples=300, deadline=None)
@given(text=_texts(), tokenizer=st.sampled_from(TOKENIZERS))
def test_a_text_cut_at_line_starts_counts_as_the_sum_of_its_parts(
    text: str, tokenizer: str
) -> None:
    counter = get_token_counter(tokenizer)
    cuts = [0, *(match.end() for match in _LINE_START.finditer(text)), len(text)]
    parts = [text[a:b] for a, b in itertools.pairwise(cuts)]
    assert sum(counter.count_many(parts)) == counter.count(text)


def _state(
    text: str, counter: TokenCounter, chunk_starts: list[int], *, trimmed: bool = False
) -> PackingState:
    """One document of chunks starting at `chunk_starts`; each ends where the next starts,
    or (`trimmed`, as the chunker cuts them) before the white space up to it."""
    ends = [*chunk_starts[1:], len(text)]
    if trimmed:
        ends = [
            start + len(text[start:end].rstrip())
            for start, end in zip(chunk_starts, ends, strict=True)
        ]
    view = DocumentView(
        external_id="d",
        title=None,
        body=text,
        chunk_starts=chunk_starts,
        chunk_ends=ends,
        chunk_units=[None] * len(chunk_starts),
        chunk_tokens=[],
        units=0,
    )
    return state_from_views(name="c", version=1, documents=[view], counter=counter)


def _passage(state: PackingState, first: int, last: int) -> Block:
    view = state.documents[0]
    start, end = view.chunk_starts[first], view.chunk_ends[last]
    header = layout.passage_header(view, first, last)
    following = view.chunk_starts[last + 1] if last + 1 < len(view.chunk_starts) else None
    return Block(
        kind="chunk",
        text=f"{header}\n{view.text[start:end]}",
        document=0,
        first_chunk=first,
        last_chunk=last,
        char_start=start,
        char_end=end,
        after=None if following is None else view.text[end:following],
    )


@settings(max_examples=150, deadline=None)
@given(
    text=_texts(),
    tokenizer=st.sampled_from(TOKENIZERS),
    data=st.data(),
)
def test_passages_count_as_their_whole_text_on_every_pack(
    text: str, tokenizer: str, data: st.DataObject
) -> None:
    counter = get_token_counter(tokenizer)
    starts = sorted({0, *data.draw(st.lists(st.integers(0, len(text) - 1), max_size=6))})
    state = _state(text, counter, starts)
    runs = data.draw(
        st.lists(
            st.tuples(st.integers(0, len(starts) - 1), st.integers(0, len(starts) - 1)),
            min_size=1,
            max_size=5,
        )
    )
    blocks = [_passage(state, min(a, b), max(a, b)) for a, b in runs]
    tails = [layout.SEPARATOR] * (len(blocks) - 1) + [""]
    pieces = [(state, block, block.text + tail) for block, tail in zip(blocks, tails, strict=True)]
    expected = counter.count_many([piece for _, _, piece in pieces])
    assert piece_counts(counter, pieces) == expected
    # Again, now from the counts the first call kept.
    assert piece_counts(counter, pieces) == expected


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_essay_passages_count_exactly_from_kept_lines(tokenizer: str) -> None:
    """Real prose: every run of up to 40 chunks of a 60K-char essay span, counted twice."""
    counter = get_token_counter(tokenizer)
    text = json.loads(ESSAYS.read_text("utf-8"))["text"][:60_000]
    # Chunks start at sentence and paragraph boundaries, as the chunker cuts them.
    starts = [0, *(m.end() for m in re.finditer(r"(?<=[.!?])\s+(?=[A-Z])", text))][::3]
    state = _state(text, counter, starts)
    blocks = [
        _passage(state, first, min(first + length, len(starts) - 1))
        for first in range(0, len(starts), 7)
        for length in (0, 3, 40)
    ]
    pieces = [(state, block, block.text + layout.SEPARATOR) for block in blocks]
    expected = counter.count_many([piece for _, _, piece in pieces])
    assert piece_counts(counter, pieces) == expected
    assert piece_counts(counter, pieces) == expected
    recording = _Recording(counter)
    assert piece_counts(recording, pieces) == expected  # type: ignore[arg-type]
    # What the load did not foresee is the headers (and no more than one span a passage).
    assert len(recording.asked) <= 2 * len(blocks)


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@pytest.mark.parametrize(
    "text",
    [
        "Links below:\n//example.org/a\nNext line.",  # o200k merges ":\n//" into one token
        "A list:\n- one\n  - two\n\n\nEnd.\r\nMore:\n/path",
        "Numbers 12\n345\n'quoted'\n\u3000wide\nlast",
    ],
)
def test_edge_cases_of_the_cut_rule_count_exactly(text: str, tokenizer: str) -> None:
    counter = get_token_counter(tokenizer)
    state = _state(text, counter, [0, 5])
    blocks = [_passage(state, 0, 1), _passage(state, 1, 1), _passage(state, 0, 0)]
    pieces = [(state, block, block.text + layout.SEPARATOR) for block in blocks]
    assert piece_counts(counter, pieces) == counter.count_many([t for _, _, t in pieces])


class _CountedReads:
    """A document body (`layout.LazyText`) that counts how often it is read."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.count = 0

    def read(self) -> str:
        self.count += 1
        return self.text


class _Recording:
    """A counter that records the texts it is asked to count."""

    def __init__(self, counter: TokenCounter, name: str | None = None) -> None:
        self.counter = counter
        self.name = name or counter.name
        self.asked: list[str] = []

    def count_many(self, texts: list[str]) -> list[int]:
        self.asked.extend(texts)
        return self.counter.count_many(texts)


def test_a_state_counts_a_documents_lines_once_then_packs_encode_only_headers() -> None:
    counter = get_token_counter("o200k_base")
    text = "First line of it.\nSecond line, longer.\nThird.\nFourth and last line."
    state = _state(text, counter, [0, 18, 40])
    assert state.line_counts == {}  # a load counts no line
    blocks = [_passage(state, 0, 2), _passage(state, 1, 1), _passage(state, 0, 1)]
    pieces = [(state, block, block.text + layout.SEPARATOR) for block in blocks]
    expected = counter.count_many([piece for _, _, piece in pieces])
    first = _Recording(counter)
    assert piece_counts(first, pieces) == expected  # type: ignore[arg-type]
    assert set(state.line_counts) == {0}
    state.short_counts.clear()  # headers are remembered too: forget them to see them asked
    again = _Recording(counter)
    assert piece_counts(again, pieces) == expected  # type: ignore[arg-type]
    assert again.asked == [block.text.partition("\n")[0] + "\n" for block in blocks]


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_a_small_passage_of_a_long_document_is_counted_alone_not_with_its_lines(
    tokenizer: str,
) -> None:
    """A small window must cost what its passages cost: a passage that is a small share of
    a document whose lines are not counted is counted as one span, the document's lines are
    left alone; passages covering most of it count its lines, and all counts stay exact."""
    counter = get_token_counter(tokenizer)
    text = json.loads(ESSAYS.read_text("utf-8"))["text"][:60_000]
    starts = [0, *(m.end() for m in re.finditer(r"(?<=[.!?])\s+(?=[A-Z])", text))][::3]
    state = _state(text, counter, starts)
    small = [_passage(state, 10, 12), _passage(state, 40, 40)]
    reads = _CountedReads(text)
    state.documents[0] = dataclasses.replace(state.documents[0], body=reads)
    pieces = [(state, block, block.text + layout.SEPARATOR) for block in small]
    recording = _Recording(counter)
    assert piece_counts(recording, pieces) == counter.count_many([t for _, _, t in pieces])  # type: ignore[arg-type]
    assert state.line_counts == {}
    assert reads.count == 0  # the spans are cut from the pieces, not from the document
    assert sum(map(len, recording.asked)) < 2 * sum(len(t) for _, _, t in pieces)
    state.short_counts.clear()
    again = _Recording(counter)
    assert piece_counts(again, pieces) == counter.count_many([t for _, _, t in pieces])  # type: ignore[arg-type]
    assert again.asked == [block.text.partition("\n")[0] + "\n" for block in small]
    most = [_passage(state, 0, len(starts) * 4 // 5), _passage(state, 11, 11)]
    pieces = [(state, block, block.text + layout.SEPARATOR) for block in most]
    assert piece_counts(counter, pieces) == counter.count_many([t for _, _, t in pieces])
    assert set(state.line_counts) == {0}


def test_a_tokenizer_of_unknown_pre_tokenizer_is_counted_whole() -> None:
    counter = get_token_counter("o200k_base")
    state = _state("One line.\nTwo lines.\nThree.", counter, [0, 10])
    recording = _Recording(counter, name="/some/tokenizer.json")
    block = _passage(state, 0, 1)
    assert piece_counts(recording, [(state, block, block.text)]) == [counter.count(block.text)]  # type: ignore[arg-type]
    assert recording.asked == [block.text]


def test_a_loaded_state_counts_every_documents_lines_in_the_background(
    hash_store: wp.Store,
) -> None:
    collection = hash_store.collection("docs")
    lines = "First line.\nSecond line here.\nThird one.\n"
    collection.add([wp.Document(id=f"d{i}", text=lines * (i + 1)) for i in range(40)])
    window = collection.pack("second line", budget=300)
    states = hash_store.packer._states
    state = states[max(states)]
    deadline = time.monotonic() + 120  # a bound that only catches a hang
    while len(state.line_counts) < len(state.documents):
        assert time.monotonic() < deadline, "the background count did not finish"
        time.sleep(0.01)
    counter = get_token_counter("o200k_base")
    for position, held in state.line_counts.items():
        text = state.documents[position].text
        starts = [m.end() for m in _LINE_START.finditer(text)]
        counts = counter.count_many([text[a:b] for a, b in itertools.pairwise(starts)])
        assert held.starts == starts
        assert held.before == [0, *itertools.accumulate(counts)]
    assert window.tokens == counter.count(window.text)


@settings(max_examples=200, deadline=None)
@given(text=_texts(), tokenizer=st.sampled_from(TOKENIZERS), data=st.data())
def test_passages_of_documents_whose_lines_are_not_counted_count_exactly_from_their_tiles(
    text: str, tokenizer: str, data: st.DataObject
) -> None:
    counter = get_token_counter(tokenizer)
    starts = sorted({0, *data.draw(st.lists(st.integers(0, len(text) - 1), max_size=8))})
    state = _state(text, counter, starts, trimmed=data.draw(st.booleans()))
    assume(state.documents[0].length > 0)  # an empty one has its (no) lines counted at once
    first = data.draw(st.integers(0, len(starts) - 1))
    last = data.draw(st.integers(first, len(starts) - 1))
    block = _passage(state, first, last)
    tail = data.draw(st.sampled_from(["", layout.SEPARATOR, "\n"]))
    pieces = [(state, block, block.text + tail)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(piece_counts_module, "_LINES_SHARE", 2.0)  # never count its lines
        assert piece_counts(counter, pieces) == [counter.count(block.text + tail)]
        assert piece_counts(counter, pieces) == [counter.count(block.text + tail)]
    assert state.line_counts == {}


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_a_passage_of_paragraph_chunks_is_counted_from_their_tiles(
    tokenizer: str,
) -> None:
    """Chunks that end at a paragraph break are known by their tile counts: counting a
    passage of them asks tiktoken for its header alone, and for its last chunk only when the
    window does not go on as the document does."""
    counter = get_token_counter(tokenizer)
    essay = json.loads(ESSAYS.read_text("utf-8"))["text"][:200_000]
    starts = [0, *(m.end() for m in re.finditer(r"\n\n(?=[A-Z])", essay))]
    state = _state(essay, counter, starts, trimmed=True)
    view = state.documents[0]
    assert view.text[view.chunk_ends[9] : view.chunk_starts[10]] == layout.SEPARATOR
    block = _passage(state, 3, 9)
    header = block.text.partition("\n")[0] + "\n"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(piece_counts_module, "_LINES_SHARE", 2.0)
        # Followed by the separator, as the document goes on: every chunk is a known tile.
        recording = _Recording(counter)
        piece = block.text + layout.SEPARATOR
        assert piece_counts(recording, [(state, block, piece)]) == [counter.count(piece)]  # type: ignore[arg-type]
        assert recording.asked == [header]
        # The window's last piece (nothing after it): the last chunk is counted afresh.
        recording = _Recording(counter)
        assert piece_counts(recording, [(state, block, block.text)]) == [counter.count(block.text)]  # type: ignore[arg-type]
        last_chunk = view.text[view.chunk_starts[9] : view.chunk_ends[9]]
        assert recording.asked == [last_chunk]  # the header was remembered by text


def test_a_background_count_that_fails_ends_quietly(
    hash_store: wp.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As when the process ends under it (`windowpack mcp` at end of input): no thread dies
    with "Exception in thread windowpack-line-counts" on the user's terminal."""
    import threading

    escaped: list[object] = []
    failed = threading.Event()
    monkeypatch.setattr(threading, "excepthook", escaped.append)

    real = piece_counts_module._count_lines

    def store_gone(*args: object) -> None:
        if threading.current_thread().name != "windowpack-line-counts":
            return real(*args)  # type: ignore[arg-type]  # the pack's own counts
        failed.set()
        raise OSError("the store was closed")

    monkeypatch.setattr(piece_counts_module, "_count_lines", store_gone)
    collection = hash_store.collection("docs")
    collection.add([wp.Document(id=f"d{i}", text="A line.\nAnother.\n" * 3) for i in range(5)])
    collection.pack("another line", budget=300)  # loads the state: the count starts
    threads = [t for t in threading.enumerate() if t.name == "windowpack-line-counts"]
    assert failed.wait(120)
    for thread in threads:
        thread.join(120)
    assert escaped == []
