"""The REST service: `create_app(ApiSettings(...))` builds the FastAPI app over one store.

Importing this package imports FastAPI; `import windowpack` never does. The key rules
(`authenticate`, `Access`, ...) are public for the MCP server, which holds its callers to
them. The app and the server (`create_app`, `serve`, ...: its routes, schemas, metrics and
uvicorn, ~0.5 s of imports) load on first use, so that `windowpack mcp` on stdio, which needs
only the key rules, does not pay for them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from windowpack.api.access import Access, Caller, authenticate, keys_required
from windowpack.api.errors import client_message
from windowpack.api.settings import ApiSettings

if TYPE_CHECKING:
    from windowpack.api.app import check_binding, create_app
    from windowpack.api.connections import head_deadline_protocol
    from windowpack.api.server import serve, serve_app, uvicorn_options

__all__ = [
    "Access",
    "ApiSettings",
    "Caller",
    "authenticate",
    "check_binding",
    "client_message",
    "create_app",
    "head_deadline_protocol",
    "keys_required",
    "serve",
    "serve_app",
    "uvicorn_options",
]

_LAZY = {
    "check_binding": "windowpack.api.app",
    "create_app": "windowpack.api.app",
    "serve": "windowpack.api.server",
    "serve_app": "windowpack.api.server",
    "uvicorn_options": "windowpack.api.server",
    "head_deadline_protocol": "windowpack.api.connections",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'windowpack.api' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
