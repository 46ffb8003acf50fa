"""Deadlines on a connection's request head, which uvicorn (h11) does not have.

uvicorn closes a connection idle between requests after `timeout_keep_alive`, but the first
byte of a request cancels that timer and nothing replaces it: a client that sends a header
line every few seconds, or half a request line and then nothing, holds its connection (and
a slot of the server's file descriptors) for as long as it likes. `HeadDeadlineProtocol` is
uvicorn's h11 protocol with one more timer: from the moment a connection opens, or the first
byte of a next request on it arrives, the request line and headers must be complete within
`head_timeout` seconds, else the server answers 408 and closes the connection (as nginx's
`client_header_timeout`). The body has its own deadline, in the app
(`api.limits.BodySizeLimit`): between its bytes and for the whole of it.

Only h11 is covered: the server runs it by name (`serve_app`), so a later install of
httptools does not swap in a protocol without this timer.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

_MESSAGE = b"the request line and headers did not arrive in time"
_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(_MESSAGE), _MESSAGE)
)


class HeadDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol, with a deadline on each request's line and headers."""

    head_timeout: float = 20.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self._arm()  # part of a head (the first byte of the next request, perhaps)
        else:
            self._disarm()  # the head is whole: the body's deadlines are the app's

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # Part of the next request may have come with the last one (pipelined): no more data
        # need arrive for it to be a head in progress.
        if self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:
            self._arm()

    def _arm(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.head_timeout, self._head_timed_out)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        # h11 sends no response before a request; the bytes are what nginx answers here.
        self.transport.write(_TIMED_OUT)
        self.transport.close()


def head_deadline_protocol(head_timeout: float) -> type[HeadDeadlineProtocol]:
    """`HeadDeadlineProtocol` with `head_timeout` seconds for a request's line and headers,
    as uvicorn's `http=` takes it (a class: uvicorn builds one per connection)."""
    return type("HeadDeadlineProtocol", (HeadDeadlineProtocol,), {"head_timeout": head_timeout})
