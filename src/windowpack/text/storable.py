"""What a store can hold faithfully, on SQLite and PostgreSQL alike, and carry in a URL.

Each check returns None for a good value or a short problem ("holds a NUL character"), so
the library (`documents.identity`) and the REST schemas (`api.schemas`) make the same
decision and each names the field in its own way.

Why these rules:
- **Text** (document text, titles, metadata strings and keys) must be encodable as UTF-8 —
  a lone surrogate such as "\\ud800" would be stored and then fail every JSON answer that
  held it — and hold no NUL character, which PostgreSQL's text and jsonb types cannot store.
- **Metadata** must be plain JSON (string keys, finite numbers: PostgreSQL's jsonb has no
  NaN or Infinity), nested at most `MAX_METADATA_DEPTH` levels (metadata 256 levels deep would
  be stored and then break every answer that included it) and at most `MAX_METADATA_BYTES`
  encoded (it is copied into every window item of its document).
- **Document ids** travel in URL paths (`/documents/{id}`, where `/` is allowed so that file
  paths stay ids). An id is refused when a URL cannot carry it faithfully: a `.` or `..`
  segment (clients normalise dot segments away, even percent-encoded: `DELETE
  .../documents/..` becomes a DELETE of the collection), an empty segment (proxies merge
  `//`), control characters (tab, newline, DEL, ...), leading or trailing whitespace or
  whitespace only (trimmed by tools), and over `MAX_ID_CHARS` characters.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from typing import Any

MAX_ID_CHARS = 1024
MAX_TITLE_CHARS = 1024
MAX_METADATA_DEPTH = 32
MAX_METADATA_BYTES = 64 * 1024
# A backslash separates segments too: browsers (WHATWG URL) read `\` as `/` in http URLs.
_SEGMENTS = re.compile(r"[/\\]")
_ENCODED_DOT = re.compile(r"%2e", re.IGNORECASE)


def text_problem(text: str) -> str | None:
    """Why `text` cannot be stored as it is, or None."""
    if "\x00" in text:
        return "holds a NUL character (\\x00), which cannot be stored"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"is not valid Unicode: a lone surrogate at character {error.start}"
    return None


def lookup_id_problem(document_id: str) -> str | None:
    """Why no stored document can have the id `document_id` (one a lookup is given), or None."""
    if not document_id:
        return "must not be empty"
    return text_problem(document_id)


def id_problem(document_id: str) -> str | None:
    """Why `document_id` may not be given to a new document, or None (rules above)."""
    problem = lookup_id_problem(document_id)
    if problem is not None:
        return problem
    if len(document_id) > MAX_ID_CHARS:
        return f"is {len(document_id):,} characters long; the most is {MAX_ID_CHARS:,}"
    if any(unicodedata.category(char) == "Cc" for char in document_id):
        return "holds a control character (such as a tab or a newline)"
    if document_id.strip() != document_id:
        return "has leading or trailing whitespace (or is only whitespace)"
    return _segment_problem(document_id)


def _segment_problem(document_id: str) -> str | None:
    segments = _SEGMENTS.split(document_id)
    # A leading "/" is allowed: a file outside the store's root keeps its absolute path.
    inner = segments[1:] if document_id.startswith("/") else segments
    for segment in inner:
        if _ENCODED_DOT.sub(".", segment) in {".", ".."}:
            return "has a '.' or '..' path segment, which URLs drop or resolve"
        if not segment:
            return "has an empty path segment ('//' or a trailing '/')"
    return None


def title_problem(title: str) -> str | None:
    """Why `title` cannot be stored, or None."""
    if len(title) > MAX_TITLE_CHARS:
        return f"is {len(title):,} characters long; the most is {MAX_TITLE_CHARS:,}"
    return text_problem(title)


def metadata_problem(metadata: Any) -> tuple[str, str] | None:
    """(where, why) `metadata` cannot be stored as JSON on every database, or None.

    `where` is a path into it, e.g. ("metadata.tags[2]", "holds a NUL character ...").
    """
    if not isinstance(metadata, dict):
        return "metadata", f"must be a JSON object, not {type(metadata).__name__}"
    problem = _value_problem(metadata, "metadata", 0)
    if problem is not None:
        where, why = problem
        return (where if len(where) <= 200 else where[:200] + "..."), why
    try:
        size = len(json.dumps(metadata, ensure_ascii=False, allow_nan=False).encode("utf-8"))
    except (TypeError, ValueError) as error:
        return "metadata", f"is not JSON-serialisable: {error}"
    if size > MAX_METADATA_BYTES:
        return "metadata", f"is {size:,} bytes as JSON; the most is {MAX_METADATA_BYTES:,}"
    return None


def _value_problem(value: Any, where: str, depth: int) -> tuple[str, str] | None:
    # `depth` counts the objects and arrays around `value`: the metadata object itself is the
    # first of at most MAX_METADATA_DEPTH.
    if isinstance(value, dict | list | tuple) and depth >= MAX_METADATA_DEPTH:
        return where, f"nested deeper than {MAX_METADATA_DEPTH} levels of objects and arrays"
    if isinstance(value, dict):
        return _object_problem(value, where, depth)
    if isinstance(value, list | tuple):
        items = (_value_problem(item, f"{where}[{i}]", depth + 1) for i, item in enumerate(value))
        return next((problem for problem in items if problem is not None), None)
    problem = _scalar_problem(value)
    return (where, problem) if problem is not None else None


def _scalar_problem(value: Any) -> str | None:
    if isinstance(value, str):
        return text_problem(value)
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value} is not a JSON number (use a string or null)"
    if value is None or isinstance(value, bool | int | float):
        return None
    return f"a {type(value).__name__} is not a JSON value"


def _object_problem(value: dict[Any, Any], where: str, depth: int) -> tuple[str, str] | None:
    for key, item in value.items():
        if not isinstance(key, str):
            return where, f"key {key!r} is not a string"
        key_problem = text_problem(key)
        if key_problem is not None:
            return where, f"a key {key_problem}"
        problem = _value_problem(item, f"{where}.{_printable(key)}", depth + 1)
        if problem is not None:
            return problem
    return None


def _printable(key: str) -> str:
    return key if key.isidentifier() else repr(key)
