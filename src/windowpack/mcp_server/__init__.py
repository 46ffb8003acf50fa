"""windowpack as a Model Context Protocol server (the official `mcp` SDK; extra `mcp`).

Four tools over the facade, as thin as the REST routes: `pack` (a window for a question),
`search` (ranked passages), `add` (a document, or files over stdio) and `collections`;
the summary tree as resources (`windowpack://collections/{name}/tree`, then its nodes).
Every answer fits in the caller's `max_tokens`, counted exactly in the caller's tokenizer
(`fit`). Over stdio (`run_stdio`) the process acts as its local user, or as the API key it
is given; over streamable HTTP (`create_app`, `mount`, `serve`: stateless) each request is
authenticated and scoped as a REST request is (`windowpack.api`'s key rules).

Importing this package imports the SDK; `import windowpack` and the other commands never do.
The HTTP transport (`create_app`, `mount`, `serve`, `MCP_PATH`: Starlette, and the REST app it
mounts beside) loads on first use: a stdio server never needs it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

try:
    import mcp  # noqa: F401 (only to say which extra is missing)
except ImportError as error:  # pragma: no cover (the dev install has it)
    from windowpack.errors import MissingDependencyError

    raise MissingDependencyError("mcp", "mcp") from error

from windowpack.mcp_server.fit import DEFAULT_MAX_TOKENS
from windowpack.mcp_server.server import build_server, run_stdio

if TYPE_CHECKING:
    from windowpack.mcp_server.http import MCP_PATH, create_app, mount, serve

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "MCP_PATH",
    "build_server",
    "create_app",
    "mount",
    "run_stdio",
    "serve",
]


def __getattr__(name: str) -> Any:
    if name not in {"MCP_PATH", "create_app", "mount", "serve"}:
        raise AttributeError(f"module 'windowpack.mcp_server' has no attribute {name!r}")
    return getattr(importlib.import_module("windowpack.mcp_server.http"), name)
