"""`windowpack serve`: the app under uvicorn, one process, one store shared by all requests."""

from __future__ import annotations

from windowpack.api.app import create_app
from windowpack.api.settings import ApiSettings


def serve(settings: ApiSettings, *, announce: bool = True) -> None:
    """Serve until interrupted. Refuses to listen beyond loopback without API keys."""
    import uvicorn

    app = create_app(settings)
    if announce:
        keys = (
            "API keys required"
            if app.state.api.store.api_keys.any_active()
            else ("no API keys: listening on this machine only")
        )
        print(f"windowpack API at {settings.base_url}/v1 ({keys})", flush=True)
        print(f"interactive docs: {settings.base_url}/docs", flush=True)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning")
