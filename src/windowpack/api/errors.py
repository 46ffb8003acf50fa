"""One place that turns every error into `{"error": {"code", "message"}}` with its status.

`WindowpackError` subclasses carry their own `code` and `http_status`; validation errors name
the field (`body.budget: ...`), or what is wrong with a body that is not JSON (malformed at a
line and column, or sent without its `Content-Type`); unknown routes and methods keep their
404/405. Anything else
is a bug: it is logged and answered 500 `internal_error` without details, by the
`UnexpectedErrors` middleware rather than an exception handler: Starlette re-raises after
running a handler for `Exception`, and uvicorn then closes the keep-alive connection, so the
client's next request on it was reset.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from windowpack.errors import EmbedderMismatchError, StorageError, WindowpackError

_LOG = logging.getLogger("windowpack.api")
_HTTP_CODES = {
    404: "not_found",
    405: "method_not_allowed",
    413: "request_too_large",
    415: "unsupported_media_type",
}


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    body = {"error": {"code": code, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers on `app`."""
    app.add_exception_handler(WindowpackError, _windowpack_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)


# What a server's client changes when a collection was built with another embedder: not a
# `StoreConfig` (the library's fix), the server's own setting.
_SERVER_EMBEDDER_FIX = (
    "the server must run with that embedder: `windowpack serve --embedder {0}` or "
    "WINDOWPACK_EMBEDDER={0}"
)


async def _windowpack_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, WindowpackError)
    if isinstance(error, EmbedderMismatchError) and error.built_with is not None:
        error = error.fixed_by(_SERVER_EMBEDDER_FIX.format(error.built_with))
    if isinstance(error, StorageError):
        _LOG.error("storage error on %s %s: %s", request.method, request.url.path, error)
    return error_response(error.http_status, error.code, client_message(error))


def client_message(error: WindowpackError) -> str:
    """What a caller is told of an error: its message, which names the argument; a storage
    error's message names server paths and database errors, so it is for the server's log,
    not the client (the REST API and the MCP server over HTTP both answer this)."""
    if isinstance(error, StorageError):
        return "the store's database or index files could not be used; the server log has details"
    return error.message


async def _validation_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    content_type = request.headers.get("content-type")
    return error_response(
        422,
        "validation_error",
        describe_validation(error.errors(), body=error.body, content_type=content_type),
    )


async def _http_error(_request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, HTTPException)
    code = _HTTP_CODES.get(error.status_code, "bad_request")
    return error_response(error.status_code, code, str(error.detail))


class UnexpectedErrors:
    """ASGI middleware: an exception no handler took becomes the logged 500, and goes no
    further (so the connection stays open for the client's next request)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as error:
            if started:  # half a response is out: only closing the connection is honest
                raise
            _LOG.error("unexpected error on %s %s", scope["method"], scope["path"], exc_info=error)
            response = error_response(
                500, "internal_error", "internal error; the server log has details"
            )
            await response(scope, receive, send)


def describe_validation(
    errors: Sequence[Any], *, body: Any = None, content_type: str | None = None
) -> str:
    """`body.budget: Input should be greater than 0; query.limit: ...` (at most 5 problems).

    A body that is not JSON is named as such, not as a field: malformed JSON by the line and
    column where the parser stopped (FastAPI reports the character offset as if it were a
    field, `body.13`), and a body sent without a JSON `Content-Type` (FastAPI then reads it as
    bytes, "not a valid dictionary") by the header it lacks. `body` is the request's body as
    FastAPI read it, `content_type` its header.
    """
    parts = []
    for error in list(errors)[:5]:
        location = ".".join(str(part) for part in error.get("loc", ()))
        # "Value error, " is pydantic's prefix for a validator's own message: noise to a client.
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(
            _body_problem(error, body, content_type) or f"{location or 'request'}: {message}"
        )
    more = len(errors) - len(parts)
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _body_problem(error: Mapping[str, Any], body: Any, content_type: str | None) -> str | None:
    """What is wrong with a body that is not JSON (see `describe_validation`), else None."""
    location = tuple(error.get("loc", ()))
    if error.get("type") == "json_invalid" and location[:1] == ("body",):
        offset = location[1] if len(location) > 1 and isinstance(location[1], int) else 0
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        reason = str((error.get("ctx") or {}).get("error", "not JSON"))
        return f"body: malformed JSON at line {line} column {column}: {reason}"
    if location == ("body",) and isinstance(body, bytes) and not _is_json_type(content_type):
        sent = f"was {content_type!r}" if content_type else "was not sent"
        return (
            "body: send it as JSON with the header 'Content-Type: application/json' (the "
            f"request's Content-Type {sent})"
        )
    return None


def _is_json_type(content_type: str | None) -> bool:
    kind = (content_type or "").split(";")[0].strip().lower()
    return kind == "application/json" or kind.endswith("+json")
