"""The extractive summarizer: verbatim sentences, source order, within the token target."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windowpack.documents.chunking import chunk_document
from windowpack.errors import InvalidArgumentError, WindowpackError
from windowpack.summarizer.base import Summarizer, SummaryFailure
from windowpack.summarizer.extractive import (
    Excerpt,
    ExtractiveSummarizer,
    render_excerpts,
)
from windowpack.text.sentences import split_sentences
from windowpack.text.tokens import TokenCounter, get_token_counter
from windowpack.types import Document, Span

ESSAYS = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "data"
    / "ruler"
    / "PaulGrahamEssays.json"
)
ENCODINGS = ["o200k_base", "cl100k_base"]
SUMMARIZER = ExtractiveSummarizer()
PROPERTY = settings(max_examples=70, deadline=None)

VOLCANOES = [
    "Volcanoes form where magma from the mantle rises through cracks in the crust. "
    "Basaltic lava flows far before it cools into dark rock. "
    "Shield volcanoes like Mauna Loa grow from thousands of gentle eruptions.",
    "Explosive eruptions happen when gas trapped in viscous magma expands suddenly. "
    "Pyroclastic flows of hot ash and gas race down the slopes of the volcano. "
    "The eruption of Vesuvius buried Pompeii under metres of volcanic ash.",
    "Volcanologists measure sulfur dioxide to predict when a volcano will erupt. "
    "Swelling of the ground shows magma filling the chamber below the crater. "
    "Seismometers record small earthquakes as magma forces its way upward.",
    "Volcanic ash in the stratosphere can cool the climate for several years. "
    "The eruption of Tambora caused a year without a summer in Europe. "
    "Fertile volcanic soils draw farmers to live near active volcanoes.",
]
CHESS = [
    "Chess openings aim to control the centre and develop knights and bishops quickly. "
    "The Sicilian Defence answers the king pawn with a flank pawn. "
    "Castling early keeps the king safe behind a wall of pawns.",
    "In the chess middlegame players plan attacks against the enemy king. "
    "A knight fork attacks two pieces at once and often wins material. "
    "Rooks belong on open files where they pressure the opponent's position.",
    "Chess endgames reward precise calculation with few pieces left on the board. "
    "A passed pawn supported by the king can march to promotion. "
    "The opposition decides many king and pawn endings between strong players.",
    "Chess engines now evaluate millions of positions every second. "
    "Grandmasters study engine lines to prepare surprising novelties in the opening. "
    "World championship matches test both chess preparation and nerves.",
]

# Prose from word lists: English topic words, stop words, accented Latin, Cyrillic, Greek,
# Arabic, Hebrew, Devanagari, CJK, emoji, numbers and a ligature.
WORDS = [
    *[
        "volcano",
        "lava",
        "magma",
        "crater",
        "chess",
        "bishop",
        "rook",
        "pawn",
        "endgame",
        "opening",
    ],
    *["the", "a", "of", "and", "is", "it", "to", "in", "was", "very"],
    *["café", "naïve", "über", "façade", "Ærø", "Привет", "мир", "λόγος", "مرحبا", "שלום", "नमस्ते"],
    *[
        "日本語",
        "東京",
        "北京大学",
        "😀",
        "🚀",
        "👩\u200d💻",
        "1999",
        "3.14",
        "ﬁne",
        "x",
        "e.g.",
        "Dr.",
    ],
]
sentences = st.builds(
    lambda words, stop: " ".join(words).capitalize() + stop,
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=15),
    st.sampled_from([".", "!", "?", "", "。", "..."]),
)
prose = st.builds(
    lambda parts, gaps: "".join(p + g for p, g in zip(parts, gaps, strict=False)),
    st.lists(sentences, min_size=1, max_size=8),
    st.lists(st.sampled_from([" ", "  ", "\n", "\n\n", " \t"]), min_size=8, max_size=8),
)
child_texts = st.one_of(prose, prose, prose, st.text(max_size=300), st.just(""), st.just(" \n"))
children_lists = st.lists(child_texts, min_size=0, max_size=8)
# A target in tokens, or (a float) a fraction of the children's size, so that most examples
# must compress rather than fit whole.
targets = st.one_of(st.integers(1, 300), st.floats(0.0, 1.1))


@cache
def counter(name: str) -> TokenCounter:
    return get_token_counter(name)


def resolve(target: float, children: Sequence[str], tokens: TokenCounter) -> int:
    if isinstance(target, int):
        return target
    return max(1, round(target * tokens.count("\n".join(children))))


def normalized(text: str) -> str:
    return " ".join(text.split())


def check_summary(
    children: Sequence[str], target: int, tokens: TokenCounter, summarizer: ExtractiveSummarizer
) -> tuple[str, list[Excerpt]]:
    """Summarize and check every invariant; return the summary and its excerpts."""
    summary = summarizer.summarize(children, target_tokens=target, counter=tokens)
    excerpts = summarizer.select(children, target_tokens=target, counter=tokens)
    assert tokens.count(summary) <= target
    assert summary == render_excerpts(children, excerpts)
    # Deterministic, also for a fresh instance.
    fresh = ExtractiveSummarizer(diversity=summarizer.diversity)
    assert fresh.summarize(children, target_tokens=target, counter=tokens) == summary
    # Every line, whitespace aside, is a verbatim piece of one child.
    for line in summary.split("\n") if summary else []:
        assert any(normalized(line) in normalized(child) for child in children), line
    # Excerpts are in source order, without overlap, as positions in the joined children.
    offsets = [0]
    for child in children:
        offsets.append(offsets[-1] + len(child) + 1)
    positions = [(offsets[e.child] + e.span.start, offsets[e.child] + e.span.end) for e in excerpts]
    assert all(end <= start for (_, end), (start, _) in itertools.pairwise(positions))
    # Whole sentences (or lines of a sentence too big for the target, or whole children when
    # everything fits), except for a single prefix when not even one sentence fits.
    whole_children = summary == "\n".join(c.strip() for c in children if c.strip())
    for excerpt in excerpts:
        child = children[excerpt.child]
        text = child[excerpt.span.start : excerpt.span.end]
        assert text and text == text.strip()
        sentences = split_sentences(child)
        is_sentence = excerpt.span in sentences
        is_line = any(
            s.start <= excerpt.span.start < excerpt.span.end <= s.end
            and (excerpt.span.start == s.start or child[excerpt.span.start - 1] in " \t\n")
            and (excerpt.span.end == s.end or child[excerpt.span.end] in " \t\n")
            and "\n" in child[s.start : s.end]
            for s in sentences
        )
        # The prefix of a sentence, or of a line of one.
        is_prefix = len(excerpts) == 1 and any(
            s.start <= excerpt.span.start < excerpt.span.end < s.end
            and (excerpt.span.start == s.start or "\n" in child[s.start : excerpt.span.start])
            for s in sentences
        )
        assert whole_children or is_sentence or is_line or is_prefix, text
    return summary, excerpts


def test_implements_the_protocol_with_a_parameterised_id() -> None:
    assert isinstance(SUMMARIZER, Summarizer)
    assert SUMMARIZER.summarizer_id == "extractive-v3-d0.3"
    assert ExtractiveSummarizer(diversity=1).summarizer_id == "extractive-v3-d1.0"
    assert ExtractiveSummarizer(diversity=0.5).summarizer_id != SUMMARIZER.summarizer_id


@pytest.mark.parametrize("diversity", [-0.1, 1.5, float("nan")])
def test_rejects_a_diversity_outside_0_1(diversity: float) -> None:
    with pytest.raises(InvalidArgumentError, match="diversity"):
        ExtractiveSummarizer(diversity=diversity)


def test_rejects_a_target_below_one() -> None:
    with pytest.raises(InvalidArgumentError, match="target_tokens"):
        SUMMARIZER.summarize(["Some text here."], target_tokens=0, counter=counter("o200k_base"))


def test_summary_failure_is_a_windowpack_error_mapped_to_502() -> None:
    failure = SummaryFailure("the LLM timed out")
    assert isinstance(failure, WindowpackError)
    assert (failure.code, failure.http_status, failure.message) == (
        "summary_failed",
        502,
        "the LLM timed out",
    )


@pytest.mark.parametrize("children", [[], [""], ["  ", "\n\t"]])
def test_no_text_gives_an_empty_summary(children: list[str]) -> None:
    assert SUMMARIZER.summarize(children, target_tokens=50, counter=counter("o200k_base")) == ""


def test_children_that_fit_are_returned_whole() -> None:
    children = ["  First child. It has two sentences.\n", "", "Second child."]
    summary = SUMMARIZER.summarize(children, target_tokens=100, counter=counter("o200k_base"))
    assert summary == "First child. It has two sentences.\nSecond child."


def test_render_joins_neighbours_with_a_space_and_marks_gaps_with_a_newline() -> None:
    children = ["One is here.  Two is here.\n\nThree is here. Four is here.", "Five is here."]
    spans = [split_sentences(child) for child in children]
    excerpts = [
        Excerpt(child=0, span=spans[0][0]),
        Excerpt(child=0, span=spans[0][1]),
        Excerpt(child=0, span=spans[0][2]),
        Excerpt(child=1, span=spans[1][0]),
    ]
    # Only whitespace (even a blank line) between two sentences: they are neighbours.
    assert (
        render_excerpts(children, excerpts)
        == "One is here. Two is here. Three is here.\nFive is here."
    )
    gap = [excerpts[0], excerpts[2]]
    assert render_excerpts(children, gap) == "One is here.\nThree is here."


@PROPERTY
@given(children=children_lists, target=targets, encoding=st.sampled_from(ENCODINGS))
def test_summaries_are_verbatim_in_order_within_target_and_deterministic(
    children: list[str], target: float, encoding: str
) -> None:
    tokens = counter(encoding)
    check_summary(children, resolve(target, children, tokens), tokens, SUMMARIZER)


@PROPERTY
@given(
    children=st.lists(prose, min_size=1, max_size=8),
    target=targets,
    encoding=st.sampled_from(ENCODINGS),
    diversity=st.sampled_from([0.0, 0.3, 1.0]),
)
def test_any_diversity_keeps_the_invariants(
    children: list[str], target: float, encoding: str, diversity: float
) -> None:
    tokens = counter(encoding)
    summarizer = ExtractiveSummarizer(diversity=diversity)
    check_summary(children, resolve(target, children, tokens), tokens, summarizer)


@PROPERTY
@given(children=children_lists, target=targets, encoding=st.sampled_from(ENCODINGS))
def test_text_gives_a_non_empty_summary(children: list[str], target: float, encoding: str) -> None:
    # A character costs at most 4 tokens; below that, text whose units all start with a
    # character costing more than the target legitimately gives "" (documented).
    if not any(child.strip() for child in children):
        return
    tokens = counter(encoding)
    target = resolve(target, children, tokens)
    summary = SUMMARIZER.summarize(children, target_tokens=target, counter=tokens)
    if target >= 4 or all(child.isascii() for child in children):
        assert summary


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_target_one_gives_the_first_word_of_the_best_sentence(encoding: str) -> None:
    tokens = counter(encoding)
    children = ["The volcano erupted violently last night.", "The lava reached the sea."]
    summary = SUMMARIZER.summarize(children, target_tokens=1, counter=tokens)
    assert summary == "The"
    # Only a character costing more tokens than the target leaves nothing to return.
    hieroglyphs = ["𓀀𓀀𓀀 𓀀𓀀𓀀."]
    assert tokens.count("𓀀") == 4
    assert SUMMARIZER.summarize(hieroglyphs, target_tokens=3, counter=tokens) == ""
    assert SUMMARIZER.summarize(hieroglyphs, target_tokens=4, counter=tokens) == "𓀀"


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_giant_sentence_gives_a_prefix_cut_at_a_word_boundary(encoding: str) -> None:
    tokens = counter(encoding)
    sentence = " ".join(f"word{i} volcano magma" for i in range(200)) + "."
    summary, excerpts = check_summary([sentence], 50, tokens, SUMMARIZER)
    assert sentence.startswith(summary)
    assert 40 <= tokens.count(summary) <= 50
    assert sentence[len(summary)] == " "
    assert excerpts == [Excerpt(child=0, span=Span(start=0, end=len(summary)))]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_sentence_over_the_target_is_summarised_by_whole_lines(encoding: str) -> None:
    tokens = counter(encoding)
    code = "\n".join(
        f"    total_{i} = compute_volcano_magma(crater_{i}, lava_{i})" for i in range(60)
    )
    summary, excerpts = check_summary([code], 80, tokens, SUMMARIZER)
    lines = {line.strip() for line in code.split("\n")}
    assert len(excerpts) > 1
    assert all(code[e.span.start : e.span.end] in lines for e in excerpts), summary


def test_short_sentences_are_skipped_unless_nothing_else_exists() -> None:
    tokens = counter("o200k_base")
    children = [
        "Yes. Volcanoes form where magma rises through cracks in the crust. No.",
        "Okay. Lava flows cool into dark basalt rock near the volcano. Sure.",
        "Right. Magma chambers swell before the volcano erupts again. Fine.",
    ]
    summary = SUMMARIZER.summarize(children, target_tokens=30, counter=tokens)
    assert summary
    for short in ["Yes.", "No.", "Okay.", "Sure.", "Right.", "Fine."]:
        assert short not in summary.split()
    only_short = ["Yes. No.", "Okay. Sure.", "Right. Fine.", "Go. Stop."]
    summary = SUMMARIZER.summarize(only_short, target_tokens=6, counter=tokens)
    assert summary and tokens.count(summary) <= 6


def test_a_repeated_sentence_is_chosen_at_most_once() -> None:
    tokens = counter("o200k_base")
    repeated = "Magma rises through the crust beneath every active volcano."
    children = [f"{repeated} {text}" for text in VOLCANOES]
    summary = SUMMARIZER.summarize(children, target_tokens=70, counter=tokens)
    assert tokens.count(summary) <= 70
    assert summary.count(repeated) <= 1


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_two_topics_are_both_covered(encoding: str) -> None:
    tokens = counter(encoding)
    children = VOLCANOES + CHESS
    sentence_tokens = max(
        tokens.count(child[s.start : s.end]) for child in children for s in split_sentences(child)
    )
    target = 4 * sentence_tokens  # room for about four sentences of the 24
    summary, excerpts = check_summary(children, target, tokens, SUMMARIZER)
    topics = {"volcano" if e.child < len(VOLCANOES) else "chess" for e in excerpts}
    assert topics == {"volcano", "chess"}, summary
    assert 3 <= len(excerpts) <= 6


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_real_essay_chunks_are_covered_within_target(encoding: str) -> None:
    if not ESSAYS.exists():
        pytest.skip(f"shared data not found at {ESSAYS}: the real-text test needs it")
    tokens = counter(encoding)
    text = str(json.loads(ESSAYS.read_text(encoding="utf-8"))["text"])[:60_000]
    spans = chunk_document(Document(text=text), tokens, 200)[10:18]
    children = [text[s.start : s.end] for s in spans]
    assert len(children) == 8
    # An off-topic sentence planted in one chunk shares no words with the rest: not chosen.
    planted = "Zebras in Reykjavik perform bassoon sonatas for penguins every Thursday."
    children[3] = f"{children[3]}\n{planted}"
    summary, excerpts = check_summary(children, 200, tokens, SUMMARIZER)
    assert 150 <= tokens.count(summary) <= 200
    assert len({excerpt.child for excerpt in excerpts}) >= 3
    assert "Zebras" not in summary


# --- prose over markup ----------------------------------------------------------------------


def test_a_code_heavy_section_is_summarized_by_its_heading_and_first_prose_sentence() -> None:
    """zlib's root summary was `(err, buffer) => { ### zlib constants`: code won on words."""
    code = "\n".join(
        f"zlib.deflate(input{i}, (err, buffer) => {{ use(buffer{i}); }});" for i in range(30)
    )
    children = [
        f"### Compressing streams\n\n```js\n{code}\n```",
        "The callback receives the compressed buffer once the input is consumed. "
        f"It is called once.\n\n```js\n{code}\n```",
    ]
    summary = SUMMARIZER.summarize(children, target_tokens=60, counter=counter("o200k_base"))
    assert summary == (
        "Compressing streams\n"
        "The callback receives the compressed buffer once the input is consumed."
    )


def test_prose_sentences_are_preferred_to_table_and_link_lines() -> None:
    table = "\n".join(
        f"| <kbd>Ctrl</kbd>+<kbd>{k}</kbd> | Moves the cursor {k} |" for k in "ABCDEFGH"
    )
    links = "\n".join(f"* [Module {i}](module{i}.md)" for i in range(12))
    prose = (
        "The readline module reads a stream one line at a time. "
        "Its interface emits a line event for every line it reads. "
        "Keyboard shortcuts move the cursor and edit the current line."
    )
    children = [f"{table}\n\n{prose}", links, f"{prose}\n\n{table}"]
    summary = SUMMARIZER.summarize(children, target_tokens=40, counter=counter("o200k_base"))
    assert summary and "|" not in summary and "](" not in summary and "<kbd>" not in summary
    assert all(sentence in prose for sentence in summary.split("\n"))
