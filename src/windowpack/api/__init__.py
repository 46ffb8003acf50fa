"""The REST service: `create_app(ApiSettings(...))` builds the FastAPI app over one store.

Importing this package imports FastAPI; `import windowpack` never does. The key rules
(`authenticate`, `Access`, ...) are public for the MCP server's HTTP transport, which holds
its callers to them.
"""

from __future__ import annotations

from windowpack.api.access import Access, Caller, authenticate, keys_required
from windowpack.api.app import check_binding, create_app
from windowpack.api.connections import head_deadline_protocol
from windowpack.api.errors import client_message
from windowpack.api.server import serve, serve_app, uvicorn_options
from windowpack.api.settings import ApiSettings

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
