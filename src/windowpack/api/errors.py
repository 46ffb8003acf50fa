"""One place that turns every error into `{"error": {"code", "message"}}` with its status.

`WindowpackError` subclasses carry their own `code` and `http_status`; validation errors name
the field (`body.budget: ...`); unknown routes and methods keep their 404/405. Anything else
is a bug: it is logged and answered 500 `internal_error` without details.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from windowpack.errors import WindowpackError

_LOG = logging.getLogger("windowpack.api")
_HTTP_CODES = {
    404: "not_found",
    405: "method_not_allowed",
    413: "request_too_large",
    415: "unsupported_media_type",
}


def error_response(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers on `app`."""
    app.add_exception_handler(WindowpackError, _windowpack_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected_error)


async def _windowpack_error(_request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, WindowpackError)
    return error_response(error.http_status, error.code, error.message)


async def _validation_error(_request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    return error_response(422, "validation_error", describe_validation(error.errors()))


async def _http_error(_request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, HTTPException)
    code = _HTTP_CODES.get(error.status_code, "bad_request")
    return error_response(error.status_code, code, str(error.detail))


async def _unexpected_error(request: Request, error: Exception) -> JSONResponse:
    _LOG.error("unexpected error on %s %s", request.method, request.url.path, exc_info=error)
    return error_response(500, "internal_error", "internal error; the server log has details")


def describe_validation(errors: Sequence[Any]) -> str:
    """`body.budget: Input should be greater than 0; query.limit: ...` (at most 5 problems)."""
    parts = []
    for error in list(errors)[:5]:
        location = ".".join(str(part) for part in error.get("loc", ()))
        # "Value error, " is pydantic's prefix for a validator's own message: noise to a client.
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(f"{location or 'request'}: {message}")
    more = len(errors) - len(parts)
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")
