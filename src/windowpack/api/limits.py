"""Request-size limit, as ASGI middleware so that it holds before any body is parsed.

A declared `Content-Length` over the limit is refused without reading the body. A body sent
without one (chunked) is counted as it streams; once it passes the limit the app's own
response, whatever parsing error it makes of the cut-off body, is replaced by the 413.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from windowpack.api.errors import error_response
from windowpack.errors import RequestTooLargeError


class BodySizeLimit:
    """Answer 413 `request_too_large` to any request body over `max_bytes`."""

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        received = 0
        over = False

        async def counted_receive() -> Message:
            nonlocal received, over
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    over = True
                    raise RequestTooLargeError(self.max_bytes)
            return message

        replaced = False

        async def guarded_send(message: Message) -> None:
            nonlocal replaced
            if not over:
                await send(message)
            elif not replaced:
                replaced = True
                await self._refuse(scope, receive, send)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except RequestTooLargeError:
            if not replaced:
                await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        error = RequestTooLargeError(self.max_bytes)
        response = error_response(error.http_status, error.code, error.message)
        await response(scope, receive, send)
