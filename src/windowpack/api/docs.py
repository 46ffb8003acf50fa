"""`/docs` (Swagger UI) and `/redoc` from files installed with the package, never a CDN.

The JavaScript and CSS come from the `fastapi-offline` package's static folder, served under
`/static/docs`; FastAPI's own page builders point at them. A Content-Security-Policy keeps
the pages from loading anything from elsewhere (ReDoc's bundle would fetch its logo from its
CDN; the policy stops that, and the page works as well without it), so they work offline.
"""

from __future__ import annotations

from importlib import resources

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

STATIC_URL = "/static/docs"
POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; base-uri 'none'"
)


def install_docs(app: FastAPI) -> None:
    """Add `/docs`, `/redoc` and their static files to an app made with `docs_url=None`."""
    folder = resources.files("fastapi_offline").joinpath("static")
    app.mount(STATIC_URL, StaticFiles(directory=str(folder)), name="docs-static")
    openapi = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        page = get_swagger_ui_html(
            openapi_url=openapi,
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{STATIC_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{STATIC_URL}/swagger-ui.css",
            swagger_favicon_url=f"{STATIC_URL}/favicon.png",
        )
        page.headers["Content-Security-Policy"] = POLICY
        return page

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        page = get_redoc_html(
            openapi_url=openapi,
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{STATIC_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{STATIC_URL}/favicon.png",
            with_google_fonts=False,
        )
        page.headers["Content-Security-Policy"] = POLICY
        return page
