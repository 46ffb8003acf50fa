"""Chats as documents whose units are request→reply turns: from messages or a transcript.

A turn is a user message plus every following non-user message (the assistant's reply, tool
output) up to the next user message. Keeping a request and its reply in one unit means a
window never holds a question without its answer. Messages before the first user message (a
system prompt, a few-shot preamble) form a unit of their own.

A chat arrives as a list of `{role, content}` messages (rendered here as `role: content`
blocks) or as one transcript text whose messages start lines with a role and a colon
(`User: ...`, `Assistant: ...`), the shape of GDM's MRCR v2 and of many chat exports; both
are parsed into the same turns.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from windowpack.errors import InvalidInputError
from windowpack.types import Document, Span

_SEPARATOR = "\n\n"
_USER_ROLE = "user"
# The roles chat formats give their speakers; a transcript line opening with one and a colon
# starts a message. "human" is Anthropic's old prompt format, "model" Gemini's.
_ROLES = "user|human|assistant|ai|model|system|bot|tool"
_MESSAGE_START = re.compile(rf"^[ \t]*(?:{_ROLES})[ \t]*:", re.IGNORECASE | re.MULTILINE)
_REQUEST_START = re.compile(r"^[ \t]*(?:user|human)[ \t]*:", re.IGNORECASE | re.MULTILINE)


def render_conversation(
    messages: Sequence[Mapping[str, Any]], *, source: str = "messages"
) -> tuple[str, list[Span]]:
    """Render `messages` as `"{role}: {content}"` blocks and return the text and turn spans.

    Each span runs from the first message's role to the last message's content end, so
    `text[span.start:span.end]` is the turn verbatim. `source` names the input in errors,
    e.g. "messages[3]: field 'content' must be a string".

    Raises `InvalidInputError` when the list is empty or a message lacks a string `role` or
    `content`.
    """
    if len(messages) == 0:
        raise InvalidInputError(f"{source}: the conversation has no messages")
    pairs = [_role_and_content(message, index, source) for index, message in enumerate(messages)]
    blocks = [f"{role}: {content}" for role, content in pairs]
    starts, ends = _block_offsets(blocks)
    spans = [
        Span(start=starts[first], end=ends[last])
        for first, last in _turn_ranges([role for role, _ in pairs])
    ]
    return _SEPARATOR.join(blocks), spans


def conversation_document(
    messages: Sequence[Mapping[str, Any]],
    *,
    id: str | None = None,
    title: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    source: str | None = None,
) -> Document:
    """Build a `kind="conversation"` `Document` whose units are the conversation's turns.

    Raises `InvalidInputError` as `render_conversation` does.
    """
    text, units = render_conversation(messages)
    return Document(
        text=text,
        title=title,
        id=id,
        metadata=dict(metadata) if metadata is not None else {},
        kind="conversation",
        units=units,
        source=source,
    )


def transcript_document(
    text: str,
    *,
    id: str | None = None,
    title: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Document:
    """A `kind="conversation"` `Document` of a transcript; `InvalidInputError` when no line
    of it opens with a user's role (`User:`), so it has no turns."""
    units = transcript_turns(text)
    if not units:
        raise InvalidInputError("messages: the transcript has no line starting with 'User:'")
    return Document(
        text=text,
        title=title,
        id=id,
        metadata=dict(metadata) if metadata is not None else {},
        kind="conversation",
        units=units,
    )


def transcript_turns(text: str) -> list[Span]:
    """The turns of a transcript: each user line up to the next one (trimmed), and the text
    before the first user line, if any, as a unit of its own. [] when no line is a user's."""
    starts = [match.start() for match in _REQUEST_START.finditer(text)]
    if not starts:
        return []
    bounds = [0, *starts] if text[: starts[0]].strip() else starts
    spans = []
    for start, end in zip(bounds, [*bounds[1:], len(text)], strict=True):
        stripped = text[start:end]
        left = start + len(stripped) - len(stripped.lstrip())
        right = start + len(stripped.rstrip())
        if left < right:
            spans.append(Span(start=left, end=right))
    return spans


def message_starts(text: str, start: int, end: int) -> list[int]:
    """Where messages start in `text[start:end]`: lines opening with a role and a colon."""
    return [match.start() for match in _MESSAGE_START.finditer(text, start, end)]


def is_message(value: object) -> bool:
    """Whether `value` is a mapping with a string `role` and a string `content`."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("role"), str)
        and isinstance(value.get("content"), str)
    )


def _role_and_content(message: object, index: int, source: str) -> tuple[str, str]:
    where = f"{source}[{index}]"
    if not isinstance(message, Mapping):
        raise InvalidInputError(
            f"{where}: must be an object with 'role' and 'content', got {type(message).__name__}"
        )
    return _string_field(message, "role", where), _string_field(message, "content", where)


def _string_field(message: Mapping[str, Any], field: str, where: str) -> str:
    if field not in message:
        raise InvalidInputError(f"{where}: field {field!r} must be a string (it is missing)")
    value = message[field]
    if not isinstance(value, str):
        raise InvalidInputError(
            f"{where}: field {field!r} must be a string, got {type(value).__name__}"
        )
    return value


def _block_offsets(blocks: Sequence[str]) -> tuple[list[int], list[int]]:
    """Start and end offsets of each block once the blocks are joined with the separator."""
    starts: list[int] = []
    ends: list[int] = []
    position = 0
    for block in blocks:
        starts.append(position)
        position += len(block)
        ends.append(position)
        position += len(_SEPARATOR)
    return starts, ends


def _turn_ranges(roles: Sequence[str]) -> list[tuple[int, int]]:
    """Inclusive `(first, last)` message indexes of each turn: a new turn opens at each user."""
    # Case-insensitive so "User" from a hand-written export still opens a turn.
    firsts = [
        index
        for index, role in enumerate(roles)
        if index == 0 or role.strip().lower() == _USER_ROLE
    ]
    lasts = [next_first - 1 for next_first in firsts[1:]] + [len(roles) - 1]
    return list(zip(firsts, lasts, strict=True))
