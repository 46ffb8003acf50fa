"""The MCP server over one store, and its stdio transport."""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

from windowpack import __version__
from windowpack.api import Access
from windowpack.errors import AuthenticationError
from windowpack.mcp_server.context import AccessOf, McpContext
from windowpack.mcp_server.resources import register_resources
from windowpack.mcp_server.tools import register_tools
from windowpack.service import Store

INSTRUCTIONS = """windowpack holds document collections and packs, for one question, the best \
context that fits a token budget: the relevant passages verbatim, summaries of the rest.
- `pack` first: it answers with a window of context for the question; read it, then answer.
- `search` for ranked passages with their sources; `collections` for what there is to ask.
- `add` stores a document (or, over stdio, files) for later questions.
Every answer fits in `max_tokens` (default 4,000) of the tokenizer you name; what does not \
fit is left out and the answer says how much. The summary tree of a collection is a \
resource: windowpack://collections/{name}/tree, then its nodes."""

DEFAULT_MAX_K = 1000
DEFAULT_MAX_BUDGET = 1_000_000
"""The limits a stdio server holds calls to: the REST server's defaults (`ApiSettings`)."""


def build_server(
    store: Store,
    *,
    access_of: AccessOf,
    local: bool,
    max_budget: int = DEFAULT_MAX_BUDGET,
    max_k: int = DEFAULT_MAX_K,
) -> MCPServer[Any]:
    """An MCP server whose tools and resources answer from `store`, each request as the
    caller `access_of` finds for it; `local` over stdio (see `McpContext`)."""
    # WARNING: the SDK configures the root logger once (basicConfig) at this level; INFO
    # would log every request of the HTTP clients in the process.
    server: MCPServer[Any] = MCPServer(
        "windowpack", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    context = McpContext(
        store=store, access_of=access_of, local=local, max_budget=max_budget, max_k=max_k
    )
    register_tools(server, context)
    register_resources(server, context)
    return server


def local_access(store: Store, key: str | None) -> Access:
    """Who a stdio server acts as: the local user, who may read and write every collection
    (as the CLI does), or, given an API key, that key with its scope."""
    if key is None:
        return Access(store, None)
    found = store.api_keys.verify(key)
    if found is None:
        raise AuthenticationError("the API key given to `windowpack mcp` is unknown or revoked")
    return Access(store, found)


def run_stdio(store: Store, *, key: str | None = None) -> None:
    """Answer MCP requests on stdin and stdout until the client closes them."""
    access = local_access(store, key)
    server = build_server(store, access_of=lambda _ctx: access, local=True)
    anyio.run(server.run_stdio_async)
