"""The window inspector at `/ui`: one page, no external assets, over this server's own API.

The page is a static file installed with the package; it calls `/v1` from the same origin
(sending the API key the user types, if the server needs one). A Content-Security-Policy
forbids it from loading anything from elsewhere.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from windowpack.types import UNIT_NAMES, WHY

router = APIRouter(tags=["inspector"])

# Inline script and style only, requests to this origin only: nothing external can load.
_POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'"
)


# Where the page's script takes the library's names of each kind's units (`UNIT_NAMES`), so
# that the inspector labels a section, a turn and a record as the CLI and the windows do, and
# what each reason an item is in means (`WHY`), so that it says them as the docs do.
_UNIT_NAMES_SLOT = "{} /* UNIT_NAMES */"
_WHY_SLOT = "{} /* WHY */"


@cache
def _page() -> str:
    page = resources.files("windowpack.api").joinpath("ui/index.html").read_text("utf-8")
    page = page.replace(_UNIT_NAMES_SLOT, json.dumps(dict(UNIT_NAMES), sort_keys=True))
    return page.replace(_WHY_SLOT, json.dumps(dict(WHY)))


@router.get("/ui", response_class=HTMLResponse, include_in_schema=False)
def inspector() -> HTMLResponse:
    """The window inspector: a question and a budget (or two) in; the window's composition,
    why each item is in, its text and chat messages out."""
    return HTMLResponse(_page(), headers={"Content-Security-Policy": _POLICY})
