"""JSON and JSONL files to documents: a chat transcript (a list of messages, or an object
with `messages`), an object's `text`, or records, one a line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from windowpack.documents.conversation import conversation_document, is_message
from windowpack.documents.file_text import decode_text, file_document, normalise_newlines
from windowpack.errors import (
    EmptyDocumentError,
    InvalidInputError,
    UnsupportedFileError,
)
from windowpack.types import Document, Span


def parse_json(data: bytes, path: Path, name: str) -> Document:
    """A JSON file: a list of messages or records, or an object (`_parse_json_object`)."""
    value = _load_json(decode_text(data, name), name, first_line=1)
    if isinstance(value, list):
        if value and all(is_message(item) for item in value):
            return _conversation(value, path, name, file_format="json")
        return _records([_dump_record(item) for item in value], path, name, file_format="json")
    if isinstance(value, dict):
        return _parse_json_object(value, path, name)
    raise UnsupportedFileError(
        name, f"JSON top level must be a list or an object, got {type(value).__name__}"
    )


def _parse_json_object(value: dict[str, Any], path: Path, name: str) -> Document:
    title = value.get("title") if isinstance(value.get("title"), str) else None
    messages = value.get("messages")
    if isinstance(messages, list):
        return _conversation(messages, path, name, file_format="json", title=title)
    text = value.get("text")
    if isinstance(text, str):
        text = normalise_newlines(text)
        if not text.strip():
            raise EmptyDocumentError(name, "has no text in its 'text' field")
        return file_document(text, path, file_format="json", kind="text", title=title)
    raise UnsupportedFileError(
        name, "JSON object has neither a 'messages' list nor a string 'text' field"
    )


def parse_jsonl(data: bytes, path: Path, name: str) -> Document:
    """A JSONL file: messages, one a line, or records, one a line."""
    lines = [
        (number, line)
        for number, line in enumerate(decode_text(data, name).split("\n"), start=1)
        if line.strip()
    ]
    values = [_load_json(line, name, first_line=number) for number, line in lines]
    if all(is_message(value) for value in values):
        return _conversation(values, path, name, file_format="jsonl")
    # The original lines are kept verbatim so the stored text matches the file.
    return _records([line for _, line in lines], path, name, file_format="jsonl")


def _load_json(text: str, name: str, *, first_line: int) -> Any:
    """Parse JSON; `first_line` is the file line `text` starts on, for the error message."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        line = first_line + error.lineno - 1
        raise UnsupportedFileError(
            name, f"invalid JSON at line {line} column {error.colno}: {error.msg}"
        ) from None
    except RecursionError:
        raise UnsupportedFileError(name, "JSON is nested too deeply to parse") from None


def _conversation(
    messages: list[Any], path: Path, name: str, *, file_format: str, title: str | None = None
) -> Document:
    if not messages:
        raise EmptyDocumentError(name, "has no messages")
    try:
        document = conversation_document(messages)
    except InvalidInputError as error:
        raise UnsupportedFileError(name, error.message) from None
    # Rebuilt through `file_document` so conversations get the same id, title and metadata rules.
    return file_document(
        document.text,
        path,
        file_format=file_format,
        kind="conversation",
        title=title,
        units=document.units,
    )


def _dump_record(record: Any) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True)


def _records(lines: list[str], path: Path, name: str, *, file_format: str) -> Document:
    """One record per line; each line is a unit so a chunk never splits or merges records."""
    if not lines:
        raise EmptyDocumentError(name, "has no records")
    units: list[Span] = []
    position = 0
    for line in lines:
        units.append(Span(start=position, end=position + len(line)))
        position += len(line) + 1
    return file_document(
        "\n".join(lines), path, file_format=file_format, kind="records", units=units
    )
