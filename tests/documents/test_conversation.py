"""Chats as documents with turn units: rendered from messages, or parsed from a transcript."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import windowpack as wp
from windowpack.documents.conversation import (
    conversation_document,
    is_message,
    message_starts,
    render_conversation,
    transcript_document,
    transcript_turns,
)
from windowpack.errors import InvalidInputError
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


# --- transcripts ------------------------------------------------------------------------------

TRANSCRIPT = (
    "Here are some examples first.\n\n"
    "User: Write a haiku about saffron in pirate style.\n\n"
    "Assistant: Golden threads, arr!\nThe galley smells of plunder.\n\n"
    "user: Write a limerick about saffron in pirate style.\n"
    "ASSISTANT: There once was a spice from the sea.\n\n"
)


def test_a_transcript_splits_into_turns_at_each_user_line_with_the_preamble_apart() -> None:
    turns = transcript_turns(TRANSCRIPT)
    texts = [TRANSCRIPT[span.start : span.end] for span in turns]
    assert texts == [
        "Here are some examples first.",
        "User: Write a haiku about saffron in pirate style.\n\n"
        "Assistant: Golden threads, arr!\nThe galley smells of plunder.",
        "user: Write a limerick about saffron in pirate style.\n"
        "ASSISTANT: There once was a spice from the sea.",
    ]


def test_message_starts_find_every_role_line_and_nothing_else() -> None:
    starts = message_starts(TRANSCRIPT, 0, len(TRANSCRIPT))
    assert [TRANSCRIPT[s : s + 6] for s in starts] == ["User: ", "Assist", "user: ", "ASSIST"]


def test_a_text_without_a_user_line_is_no_transcript() -> None:
    assert transcript_turns("Assistant: hello\nNote: nothing asked") == []
    with pytest.raises(InvalidInputError, match="User:"):
        transcript_document("Just prose. Nobody speaks here.")


def test_a_transcript_added_as_a_conversation_keeps_each_turn_whole_in_chunks(
    empty_collection: wp.Collection,
) -> None:
    empty_collection.add_conversation(TRANSCRIPT, id="chat")
    stored = empty_collection.get("chat")
    assert stored.kind == "conversation" and stored.units == transcript_turns(TRANSCRIPT)
    hits = empty_collection.search("haiku about saffron in pirate style", k=20)
    # Each message is its own chunk, so the request stands alone, with its turn number.
    request = next(hit for hit in hits if hit.text.startswith("User: Write a haiku"))
    assert request.text == "User: Write a haiku about saffron in pirate style."
    assert request.unit == 1
