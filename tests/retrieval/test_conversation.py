"""Tests for rendering chat messages into a conversation document with turn units."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from windowpack.errors import InvalidInputError
from windowpack.retrieval.conversation import (
    conversation_document,
    is_message,
    render_conversation,
)
from windowpack.types import Span

CHAT: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "What is 2+2?"},
    {"role": "assistant", "content": "4."},
    {"role": "user", "content": "And 3+3?"},
    {"role": "assistant", "content": "6."},
    {"role": "tool", "content": "calc: 6"},
]


def test_render_joins_role_and_content_blocks() -> None:
    text, _ = render_conversation(CHAT)
    assert text == (
        "system: Be brief.\n\nuser: What is 2+2?\n\nassistant: 4.\n\n"
        "user: And 3+3?\n\nassistant: 6.\n\ntool: calc: 6"
    )


def test_system_message_is_its_own_first_unit() -> None:
    text, spans = render_conversation(CHAT)
    assert len(spans) == 3
    assert text[spans[0].start : spans[0].end] == "system: Be brief."


def test_each_turn_pairs_the_request_with_all_its_replies() -> None:
    text, spans = render_conversation(CHAT)
    turns = [text[span.start : span.end] for span in spans[1:]]
    assert turns == [
        "user: What is 2+2?\n\nassistant: 4.",
        "user: And 3+3?\n\nassistant: 6.\n\ntool: calc: 6",
    ]
    assert all(turn.startswith("user:") for turn in turns)


def test_spans_are_ordered_and_cover_the_text_but_separators() -> None:
    text, spans = render_conversation(CHAT)
    assert spans[0].start == 0
    assert spans[-1].end == len(text)
    for before, after in itertools.pairwise(spans):
        assert text[before.end : after.start] == "\n\n"


def test_conversation_starting_with_user_has_no_leading_unit() -> None:
    text, spans = render_conversation(
        [{"role": "user", "content": "hi"}, {"role": "user", "content": "again"}]
    )
    assert spans == [Span(start=0, end=8), Span(start=10, end=21)]
    assert text[spans[1].start : spans[1].end] == "user: again"


def test_user_role_is_matched_without_regard_to_case() -> None:
    _, spans = render_conversation(
        [{"role": "User", "content": "a"}, {"role": "USER", "content": "b"}]
    )
    assert len(spans) == 2


def test_content_keeps_newlines_and_offsets_stay_exact() -> None:
    messages = [
        {"role": "user", "content": "line one\n\nline two"},
        {"role": "assistant", "content": "é 🙂"},
    ]
    text, spans = render_conversation(messages)
    assert text[spans[0].start : spans[0].end].endswith("assistant: é 🙂")
    assert spans == [Span(start=0, end=len(text))]


def test_empty_list_is_rejected() -> None:
    with pytest.raises(InvalidInputError, match="no messages"):
        render_conversation([])


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"role": "user", "content": 5}, "messages[1]: field 'content' must be a string, got int"),
        ({"content": "x"}, "messages[1]: field 'role' must be a string (it is missing)"),
        ({"role": None, "content": "x"}, "messages[1]: field 'role' must be a string"),
    ],
)
def test_validation_names_index_and_field(message: dict[str, Any], expected: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        render_conversation([{"role": "user", "content": "ok"}, message])
    assert expected in caught.value.message


def test_validation_names_the_source() -> None:
    with pytest.raises(InvalidInputError, match=r"^chat\[0\]: must be an object"):
        render_conversation(["not a message"], source="chat")  # type: ignore[list-item]


def test_conversation_document_fills_the_fields() -> None:
    metadata = {"channel": "support"}
    document = conversation_document(
        CHAT, id="chat-1", title="Arithmetic", metadata=metadata, source="export.json"
    )
    text, spans = render_conversation(CHAT)
    assert document.kind == "conversation"
    assert (document.text, document.units) == (text, spans)
    assert (document.id, document.title, document.source) == ("chat-1", "Arithmetic", "export.json")
    assert document.metadata == {"channel": "support"}
    assert document.metadata is not metadata


def test_conversation_document_defaults() -> None:
    document = conversation_document([{"role": "user", "content": "hi"}])
    assert (document.id, document.title, document.source, document.metadata) == (
        None,
        None,
        None,
        {},
    )


def test_conversation_document_validates() -> None:
    with pytest.raises(InvalidInputError, match=r"messages\[0\]: field 'content'"):
        conversation_document([{"role": "user"}])


def test_is_message() -> None:
    assert is_message({"role": "user", "content": ""})
    assert not is_message({"role": "user", "content": None})
    assert not is_message(["user", "hi"])
