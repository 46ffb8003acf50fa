"""Request limits (size, body timeout, JSON shape), as ASGI middleware so that they hold
before any body is parsed.

Size: a declared `Content-Length` over the limit is refused without reading the body. A body
sent without one (chunked) is counted as it streams; once it passes the limit the app's own
response, whatever parsing error it makes of the cut-off body, is replaced by the 413.
Likewise a body of which nothing arrives for `body_timeout` seconds, or that is not whole
`body_deadline` seconds after its headers, is answered 408 and its connection closed: uvicorn
(h11) has no such timeout, and without both a client that stalls, or trickles a byte every
few seconds, holds its connection for as long as it likes. (The request line and headers
have their deadline in the protocol: `api.connections`.)

Shape: a JSON body's parsed size is not its raw size (57 MiB of `{}` objects took 2.15 GB
once parsed into dicts and models), so its values and nesting are counted on the raw bytes
first (`json_shape`) and a body over either limit is refused before anything parses it.
Field-by-field rules (metadata depth, sizes) stay in the schemas.

The count takes 0.2-0.5 s for 57 MiB here, so it runs in a worker thread: on the event loop it
would hold every other request (`/healthz` included) for that long. It is numpy over slices,
not a regular expression, because numpy lets go of the GIL while it works and `re` does not: a
regex pass over a string-heavy 57 MiB body held the GIL, and so the loop, for 2.4 s even from a
worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from windowpack.api.errors import error_response
from windowpack.errors import (
    InvalidArgumentError,
    InvalidInputError,
    RequestTimeoutError,
    RequestTooLargeError,
    WindowpackError,
)

_SLICE = 1 << 16
_OPENERS, _CLOSERS, _COMMA = (ord("{"), ord("[")), (ord("}"), ord("]")), ord(",")
_QUOTE, _BACKSLASH = ord('"'), ord("\\")

ShapeScan = Callable[[bytes], tuple[int, int]]
"""What counts a body's (values, depth): `json_shape`, or a stand-in in tests."""


class BodySizeLimit:
    """Answer 413 `request_too_large` to any request body over `max_bytes`, and 408
    `request_timeout` to one of which nothing arrives for `body_timeout` seconds or that is
    not whole `body_deadline` seconds after the request began."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_bytes: int,
        body_timeout: float = 30.0,
        body_deadline: float = 120.0,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.body_timeout = body_timeout
        self.body_deadline = body_deadline

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send, RequestTooLargeError(self.max_bytes))
            return
        received = 0
        over: InvalidInputError | None = None
        body_done = False
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.body_deadline

        async def counted_receive() -> Message:
            nonlocal received, over, body_done
            if body_done:  # after the body only a disconnect comes, whenever it comes
                return await receive()
            left = deadline - loop.time()
            try:
                message = await asyncio.wait_for(receive(), max(0.0, min(self.body_timeout, left)))
            except TimeoutError:
                if left < self.body_timeout:
                    over = RequestTimeoutError(self.body_deadline, whole=True)
                else:
                    over = RequestTimeoutError(self.body_timeout)
                raise over from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                body_done = not message.get("more_body", False)
                if received > self.max_bytes:
                    over = RequestTooLargeError(self.max_bytes)
                    raise over
            return message

        replaced = False

        async def guarded_send(message: Message) -> None:
            nonlocal replaced
            if over is None:
                await send(message)
            elif not replaced:
                replaced = True
                await self._refuse(scope, receive, send, over)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except (RequestTooLargeError, RequestTimeoutError) as error:
            if not replaced:
                await self._refuse(scope, receive, send, error)

    async def _refuse(
        self, scope: Scope, receive: Receive, send: Send, error: InvalidInputError
    ) -> None:
        headers = {"Connection": "close"} if isinstance(error, RequestTimeoutError) else None
        response = error_response(error.http_status, error.code, error.message, headers)
        await response(scope, receive, send)


def json_shape(body: bytes) -> tuple[int, int]:
    """(values, depth) of a JSON text: values counts containers and comma-separated entries
    (an upper bound of the values a parser makes), depth the deepest nesting of containers.
    Brackets and commas inside strings do not count. Invalid JSON gets some count; the parser
    rejects it afterwards."""
    data = np.frombuffer(body, dtype=np.uint8)
    values, depth, level, in_string, escaping = 1, 0, 0, 0, 0
    for start in range(0, len(data), _SLICE):  # in slices: under 1 MB of scratch
        part = data[start : start + _SLICE]
        quotes, escaping = _unescaped_quotes(part, escaping)
        if in_string or quotes.any():
            # Each unescaped quote opens or closes a string: an odd count so far is inside one.
            strings = np.cumsum(quotes, dtype=np.int64) + in_string
            in_string = int(strings[-1] & 1)
            part = np.where(strings & 1, 0, part)
        opens = (part == _OPENERS[0]) | (part == _OPENERS[1])
        steps = opens.astype(np.int32) - ((part == _CLOSERS[0]) | (part == _CLOSERS[1]))
        levels = np.cumsum(steps, dtype=np.int64) + level  # a slice is never empty
        depth, level = max(depth, int(levels.max())), int(levels[-1])
        values += int(opens.sum()) + int(np.count_nonzero(part == _COMMA))
    return values, depth


def _unescaped_quotes(
    part: npt.NDArray[np.uint8], escaping: int
) -> tuple[npt.NDArray[np.bool_], int]:
    """The quotes of `part` that no backslash escapes, and whether its last byte escapes the
    next slice's first. `escaping` says the same of the slice before. A quote is escaped when
    an odd run of backslashes ends just before it (valid JSON has backslashes only in strings)."""
    quotes = part == _QUOTE
    slashes = part == _BACKSLASH
    if escaping:
        quotes[0] = False
    if not slashes.any():
        return quotes, 0
    index = np.arange(len(part), dtype=np.int64)
    last_other = np.maximum.accumulate(np.where(slashes, -1, index))
    run = index - last_other  # the backslashes in a row ending at each byte; 0 off a run
    run[last_other < 0] += escaping  # a run that began in the slice before
    quotes[1:] &= (run[:-1] & 1) == 0
    return quotes, int(run[-1] & 1)


class JsonShapeLimit:
    """Answer 400 naming `body` to a JSON body of more than `max_values` values or nested
    deeper than `max_depth`, before the app parses it. `scan` counts the body, in a worker
    thread so that other requests go on meanwhile."""

    def __init__(
        self, app: ASGIApp, *, max_values: int, max_depth: int, scan: ShapeScan = json_shape
    ) -> None:
        self.app = app
        self.max_values = max_values
        self.max_depth = max_depth
        self.scan = scan

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _is_json(scope):
            await self.app(scope, receive, send)
            return
        body = await _whole_body(receive)
        values, depth = await run_in_threadpool(self.scan, body)
        problem = None
        if not _utf8_json(body):
            problem = "must be JSON in UTF-8 (RFC 8259), not UTF-16 or UTF-32"
        elif values > self.max_values:
            problem = f"holds more than {self.max_values:,} JSON values (max_json_values)"
        elif depth > self.max_depth:
            problem = f"nests JSON {depth} levels deep, over {self.max_depth} (max_json_depth)"
        if problem is not None:
            await _refuse(InvalidArgumentError("body", problem), scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def _utf8_json(body: bytes) -> bool:
    """Whether `body` may be UTF-8 JSON: Python's parser would also take UTF-16 and UTF-32
    (told by a byte-order mark or by a NUL among the first four bytes, since JSON starts with
    an ASCII character), which no other client reads and RFC 8259 rules out between systems."""
    return not body.startswith((b"\xff\xfe", b"\xfe\xff")) and b"\x00" not in body[:4]


def _is_json(scope: Scope) -> bool:
    header: bytes = dict(scope["headers"]).get(b"content-type", b"")
    kind = header.split(b";")[0].strip().lower()
    return kind == b"application/json" or kind.endswith(b"+json")


async def _whole_body(receive: Receive) -> bytes:
    parts = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(parts)


async def _refuse(error: WindowpackError, scope: Scope, receive: Receive, send: Send) -> None:
    response = error_response(error.http_status, error.code, error.message)
    await response(scope, receive, send)
