"""Sentence splitting: abbreviations, quotes, and exact coverage of any range."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windowpack.errors import InvalidArgumentError
from windowpack.text.sentences import split_sentences

FAST = settings(max_examples=60, deadline=None)
words = st.sampled_from(["the", "Cat", "sat", "Mr.", "e.g.", "J.", "über", "🦜", "日本語", "42"])
separators = st.sampled_from([" ", ". ", "! ", "? ", ".\n", "\n", "\n\n", "  \n \n", "\t"])
prose = st.lists(st.tuples(words, separators), max_size=120).map(
    lambda pairs: "".join(word + separator for word, separator in pairs)
)
any_text = st.one_of(prose, st.text(max_size=300))


def sentences(text: str) -> list[str]:
    return [text[span.start : span.end] for span in split_sentences(text)]


def test_split_sentences_handles_abbreviations_initials_and_quotes() -> None:
    text = (
        'Mr. Smith met Dr. J. Watson, e.g. at 5 p.m. in the U.S. office. "Really?" she asked. '
        "(Yes.) Then 3 more came!\nlowercase after a newline ends one too. Wait... Done."
    )
    assert sentences(text) == [
        "Mr. Smith met Dr. J. Watson, e.g. at 5 p.m. in the U.S. office.",
        '"Really?" she asked.',
        "(Yes.)",
        "Then 3 more came!",
        "lowercase after a newline ends one too.",
        "Wait...",
        "Done.",
    ]


def test_split_sentences_does_not_split_before_lowercase_or_without_space() -> None:
    assert sentences("It costs 3.5 dollars. and more.Next one") == [
        "It costs 3.5 dollars. and more.Next one"
    ]


@FAST
@given(text=any_text, data=st.data())
def test_split_sentences_covers_every_non_space_char_of_the_range(
    text: str, data: st.DataObject
) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    spans = split_sentences(text, start, end)
    position = start
    for span in spans:
        assert text[position : span.start].strip() == ""
        piece = text[span.start : span.end]
        assert piece and piece == piece.strip()
        position = span.end
    assert text[position:end].strip() == ""
    assert position <= end


def test_split_sentences_rejects_a_bad_range() -> None:
    with pytest.raises(InvalidArgumentError):
        split_sentences("short", 2, 99)


def test_chinese_and_japanese_sentences_end_at_their_full_width_stops() -> None:
    """They write the next sentence without a space; a stop inside a quotation followed by
    the rest of its sentence does not end it."""
    chinese = "服务器保持一个连接池。连接池满时，下一个请求会等待！为什么？因为没有空闲连接。"  # noqa: RUF001
    assert sentences(chinese) == [
        "服务器保持一个连接池。",
        "连接池满时，下一个请求会等待！",  # noqa: RUF001
        "为什么？",  # noqa: RUF001
        "因为没有空闲连接。",
    ]
    japanese = "プールを開きます。「満杯？」と彼は聞いた。 次の要求は待ちます｡English follows."  # noqa: RUF001
    assert sentences(japanese) == [
        "プールを開きます。",
        "「満杯？」と彼は聞いた。",  # noqa: RUF001
        "次の要求は待ちます｡",
        "English follows.",
    ]
    assert sentences("「はい。」\n次の行。") == ["「はい。」", "次の行。"]
