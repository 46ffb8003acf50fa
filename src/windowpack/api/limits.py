"""Request-size and body-timeout limits, as ASGI middleware so that they hold before any body
is parsed.

A declared `Content-Length` over the limit is refused without reading the body. A body sent
without one (chunked) is counted as it streams; once it passes the limit the app's own
response, whatever parsing error it makes of the cut-off body, is replaced by the 413.
Likewise a body of which nothing arrives for `body_timeout` seconds is answered 408: uvicorn
(h11) has no such timeout, and stalled clients held their connections for as long as they
liked.
"""

from __future__ import annotations

import asyncio

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from windowpack.api.errors import error_response
from windowpack.errors import InvalidInputError, RequestTimeoutError, RequestTooLargeError


class BodySizeLimit:
    """Answer 413 `request_too_large` to any request body over `max_bytes`, and 408
    `request_timeout` to one of which nothing arrives for `body_timeout` seconds."""

    def __init__(self, app: ASGIApp, *, max_bytes: int, body_timeout: float = 30.0) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.body_timeout = body_timeout

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

        async def counted_receive() -> Message:
            nonlocal received, over, body_done
            if body_done:  # after the body only a disconnect comes, whenever it comes
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), self.body_timeout)
            except TimeoutError:
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
