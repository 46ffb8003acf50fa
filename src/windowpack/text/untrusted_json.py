"""JSON from outside the process (a session token, a `--where` argument), read with limits.

Python's parser recurses once per level of nesting: 100,000 `[` in a row raise `RecursionError`,
which no `except ValueError` catches, so such input answered a 500 (a session token) or
printed a traceback (`windowpack search --where`). Here every way a text can fail to be JSON
within the limits is one `InvalidArgumentError` naming the argument:

- `max_chars`: the text's length, checked before anything parses it;
- `max_depth`: the deepest nesting of arrays and objects, checked on the parsed value without
  recursion (a text nested past what the parser survives is refused as too deep too);
- `max_values`: how many values (containers and scalars) the whole text holds;
- every string, key or value, must be valid Unicode without NUL (`storable.text_problem`):
  `"\\ud800"` parses to a lone surrogate that fails later, when the value is encoded again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from windowpack.errors import InvalidArgumentError
from windowpack.text.storable import text_problem


def load_untrusted_json(
    text: str | bytes, *, argument: str, max_chars: int, max_depth: int, max_values: int
) -> Any:
    """The value `text` holds, or `InvalidArgumentError(argument)` saying what is wrong."""
    if len(text) > max_chars:
        raise InvalidArgumentError(argument, f"is longer than {max_chars:,} characters")
    try:
        value = json.loads(text)
    except RecursionError:
        raise InvalidArgumentError(argument, f"nests deeper than {max_depth} levels") from None
    except (ValueError, UnicodeDecodeError) as error:
        # JSONDecodeError (a ValueError) says where; bytes that are no UTF-8 say which.
        raise InvalidArgumentError(argument, f"is not valid JSON ({error})") from None
    _check_shape(value, argument=argument, max_depth=max_depth, max_values=max_values)
    return value


def _check_shape(value: Any, *, argument: str, max_depth: int, max_values: int) -> None:
    """Depth, count and strings of a parsed value, walked with a stack (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    seen = 0
    while stack:
        item, depth = stack.pop()
        seen += 1
        if seen > max_values:
            raise InvalidArgumentError(argument, f"holds more than {max_values:,} JSON values")
        if isinstance(item, str):
            _check_text(item, argument)
        elif isinstance(item, dict | list):
            if depth > max_depth:
                raise InvalidArgumentError(argument, f"nests deeper than {max_depth} levels")
            children: Iterable[Any] = item
            if isinstance(item, dict):
                for key in item:
                    _check_text(key, argument)
                children = item.values()
            stack.extend((child, depth + 1) for child in children)


def _check_text(text: str, argument: str) -> None:
    problem = text_problem(text)
    if problem is not None:
        raise InvalidArgumentError(argument, f"holds a string that {problem}")
