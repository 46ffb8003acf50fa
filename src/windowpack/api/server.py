"""`windowpack serve`: the app under uvicorn, one process, one store shared by all requests."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from starlette.applications import Starlette

from windowpack.api.access import keys_required
from windowpack.api.app import create_app
from windowpack.api.settings import ApiSettings


def serve(
    settings: ApiSettings,
    *,
    announce: bool = True,
    extend: Callable[[FastAPI], None] | None = None,
) -> None:
    """Serve until interrupted. Refuses to listen beyond loopback without API keys.

    `extend` is given the app before it serves (`windowpack serve --mcp` mounts the MCP
    endpoint with it, which the API itself knows nothing of)."""
    app = create_app(settings)
    if extend is not None:
        extend(app)
    if announce:
        keys = (
            "API keys required"
            if keys_required(app.state.api.store, app.state.api.settings)
            else ("no API keys: listening on this machine only")
        )
        print(f"windowpack API at {settings.base_url}/v1 ({keys})", flush=True)
        print(f"interactive docs: {settings.base_url}/docs", flush=True)
        print(f"window inspector: {settings.base_url}/ui", flush=True)
        runs = (
            f"{settings.workers} worker(s) in this process"
            if settings.workers
            else "none in this process: run `windowpack worker`"
        )
        print(f"ingest jobs: {runs}", flush=True)
    serve_app(app, settings)


def serve_app(app: Starlette, settings: ApiSettings) -> None:
    """`app` under uvicorn at the settings' address, with their logging, until interrupted."""
    import uvicorn

    uvicorn.run(app, **uvicorn_options(settings))


def uvicorn_options(settings: ApiSettings) -> dict[str, Any]:
    """What uvicorn runs the app with: the address, logging, and h11 with the deadline on a
    request's line and headers (`api.connections`)."""
    from windowpack.api.connections import head_deadline_protocol

    return {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level,
        "access_log": settings.access_log,
        "log_config": log_config(settings.log_level),
        "http": head_deadline_protocol(settings.head_timeout_s),
    }


def log_config(level: str) -> dict[str, Any]:
    """uvicorn's logging set-up, with windowpack's own loggers at the same level and handler."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    # uvicorn's extra "trace" level is below debug; the standard library does not know it.
    named = "DEBUG" if level == "trace" else level.upper()
    config["loggers"]["windowpack"] = {"handlers": ["default"], "level": named, "propagate": False}
    return config
