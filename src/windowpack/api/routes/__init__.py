"""The `/v1` routes, one module per resource; each route is a few lines over the facade."""

from __future__ import annotations

from typing import Any

from windowpack.api.schemas import ErrorBody

ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": description}
    for status, description in {
        400: "Invalid argument (names it)",
        401: "Missing, unknown or revoked API key",
        403: "The key may not write here",
        404: "Not found, or outside the key's collections",
        409: "Conflict with stored state",
        413: "Request or file too large",
        415: "Unsupported file",
        422: "Validation error (names the field) or a document without text",
        503: "Storage unavailable",
    }.items()
}
"""Error responses every `/v1` route may give, all in the one `ErrorBody` shape."""
