"""The MCP server over streamable HTTP: stateless, keyed as the REST API is.

Stateless: every request is answered on its own (no MCP session is kept between requests,
answers are single JSON bodies), so replicas behind a load balancer need no affinity. Each
HTTP request is authenticated as a REST request is (`windowpack.api.authenticate`: a key
as `Authorization: Bearer <key>` or `X-API-Key`, required when the store has keys, the
keyless server answering loopback only); a refusal is REST's error body with its status
(401, 403), and the caller's access rides with the request to the tools, which hold it to
the key's collections with REST's rules and errors.

`create_app()` is the MCP server alone (`uvicorn --factory windowpack.mcp_server:create_app`,
settings from `WINDOWPACK_*`); `mount(app)` adds it to an app of `windowpack.api.create_app`,
so that one process serves both (`windowpack serve --mcp`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from windowpack.api import (
    Access,
    ApiSettings,
    Caller,
    authenticate,
    check_binding,
    client_message,
    keys_required,
    serve_app,
)
from windowpack.errors import AuthenticationError, WindowpackError
from windowpack.mcp_server.server import build_server
from windowpack.service import Store
from windowpack.service import open as open_store

MCP_PATH = "/mcp"
"""Where the MCP endpoint is served, alone or beside the REST API."""
_ACCESS = "windowpack.access"
"""The scope key the checked caller of an HTTP request rides under, to the tools."""


class KeyCheck:
    """ASGI middleware: REST's authentication for each HTTP request to the MCP endpoint."""

    def __init__(self, app: ASGIApp, store: Store, settings: ApiSettings) -> None:
        self.app, self.store, self.settings = app, store, settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        caller = Caller(key=_key(headers), host=headers.get("host"), origin=headers.get("origin"))
        try:
            access = await run_in_threadpool(
                authenticate, self.store, caller, settings=self.settings
            )
        except WindowpackError as error:
            await _refusal(error)(scope, receive, send)
            return
        scope[_ACCESS] = access
        await self.app(scope, receive, send)


def request_access(ctx: Context[Any, Any]) -> Access:
    """The caller `KeyCheck` found for the HTTP request a tool or resource is answering."""
    request = ctx.request_context.request
    access = getattr(request, "scope", {}).get(_ACCESS)
    if not isinstance(access, Access):  # a request that did not come through KeyCheck
        raise AuthenticationError("this request was not authenticated")
    return access


def create_app(
    settings: ApiSettings | None = None, *, store: Store | None = None, path: str = MCP_PATH
) -> Starlette:
    """The MCP server alone over streamable HTTP at `path`, over `store` (default: opened
    from `settings.store`, and closed with the app).

    Refuses (`InvalidArgumentError` naming `host`) to serve beyond loopback without keys,
    as the REST API does; beyond loopback keys stay required even if all are revoked. Under
    `uvicorn --factory` the settings come from `WINDOWPACK_*` alone: `WINDOWPACK_HOST` must
    be the address uvicorn listens on, since the key rules depend on it.
    """
    settings = settings or ApiSettings()
    if not settings.loopback_only:
        settings = settings.model_copy(update={"require_keys": True})
    owned = store is None
    opened = store or open_store(
        settings.store, index_dir=settings.index_dir, config=settings.store_config()
    )
    check_binding(settings, opened)
    route, manager = _endpoint(opened, settings, path)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield
        if owned:
            opened.close()

    return Starlette(routes=[route], lifespan=lifespan)


def mount(app: Starlette, *, path: str = MCP_PATH) -> None:
    """Serve the MCP endpoint at `path` in `app`, an app of `windowpack.api.create_app`,
    over its store, with its settings (keys, limits)."""
    api = app.state.api
    route, manager = _endpoint(api.store, api.settings, path)
    app.router.routes.append(route)
    serve_rest = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(inner: Starlette) -> AsyncIterator[Any]:
        async with manager.run(), serve_rest(inner) as state:
            yield state

    app.router.lifespan_context = lifespan


def serve(settings: ApiSettings) -> None:
    """Serve the MCP endpoint alone under uvicorn until interrupted."""
    store = open_store(settings.store, index_dir=settings.index_dir, config=settings.store_config())
    try:
        app = create_app(settings, store=store)
        keys = (
            "API keys required" if keys_required(store, settings) else "no API keys: loopback only"
        )
        print(f"windowpack MCP at {settings.base_url}{MCP_PATH} ({keys})", flush=True)
        serve_app(app, settings)
    finally:
        store.close()


def _endpoint(
    store: Store, settings: ApiSettings, path: str
) -> tuple[Route, StreamableHTTPSessionManager]:
    """The route answering MCP at `path`, and the session manager its app's lifespan runs."""
    server = build_server(
        store,
        access_of=request_access,
        local=False,
        max_budget=settings.max_budget,
        max_k=settings.max_k,
    )
    server.streamable_http_app(
        streamable_http_path=path,
        stateless_http=True,
        json_response=True,
        max_request_body_size=settings.max_request_bytes,
        # The Host and Origin rules are REST's, applied by KeyCheck (a keyed server answers
        # any host name, a keyless one loopback names only), not the SDK's own.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    manager = server.session_manager
    return Route(path, endpoint=KeyCheck(manager.handle_request, store, settings)), manager


def _key(headers: Headers) -> str | None:
    """The API key sent as `Authorization: Bearer <key>` or `X-API-Key`, as REST reads it."""
    scheme, _, credentials = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    return headers.get("x-api-key")


def _refusal(error: WindowpackError) -> JSONResponse:
    """REST's error body and status; a 401 says which scheme to answer with."""
    body = {"error": {"code": error.code, "message": client_message(error)}}
    headers = {"WWW-Authenticate": "Bearer"} if isinstance(error, AuthenticationError) else None
    return JSONResponse(body, status_code=error.http_status, headers=headers)
