"""The documentation pages keep up with the code: every CLI command is in docs/cli.md, every
REST route in docs/rest.md, README.md stays a front page, and every relative link resolves.

The commands and routes are read from the app itself (typer's click group, the FastAPI app's
routes), so a new one fails here until it is documented, and each missing one is its own
failure. (The served /docs page is tests/api/test_docs.py.)
"""

from __future__ import annotations

import re
import tempfile
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest
import typer
from fastapi.routing import iter_route_contexts

import windowpack as wp
from windowpack.api import ApiSettings, create_app
from windowpack.cli import app as cli_app

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
README_MAX_LINES = 250

_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)
_DOCUMENTED_COMMAND = re.compile(r"^#{1,6}\s+`windowpack ([a-z][a-z -]*?)`\s*$", re.MULTILINE)
_DOCUMENTED_ROUTE = re.compile(r"`(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) (/[^`\s]*)`")
_PATH_CONVERTER = re.compile(r"\{(\w+):\w+\}")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)


def _commands(group: object, prefix: tuple[str, ...] = ()) -> Iterator[str]:
    """Every command and sub-command under a click group, as `a b` paths."""
    for name, command in sorted(getattr(group, "commands", {}).items()):
        path = (*prefix, name)
        yield " ".join(path)
        yield from _commands(command, path)


CLI_COMMANDS = sorted(_commands(typer.main.get_command(cli_app)))


def _routes() -> list[str]:
    """Every `METHOD /path` the REST app serves, built the way tests/api builds it; mounts
    (the docs' static files) as their path alone."""
    found: set[str] = set()
    with tempfile.TemporaryDirectory() as folder:
        config = wp.StoreConfig(embedder="hash")
        with wp.open(Path(folder) / "store", config=config) as store:
            app = create_app(ApiSettings(upload_dir=str(Path(folder) / "uploads")), store=store)
            for route in iter_route_contexts(app.routes):
                path = _PATH_CONVERTER.sub(r"{\1}", str(route.path))
                methods = set(route.methods or ())
                if not methods:
                    found.add(path)
                    continue
                if "GET" in methods:
                    # Starlette answers HEAD on every GET route by itself.
                    methods.discard("HEAD")
                found.update(f"{method} {path}" for method in methods)
    return sorted(found)


REST_ROUTES = _routes()


def _page_text(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def test_the_cli_and_the_routes_are_found() -> None:
    # Guards the introspection itself: an empty list would make the tests below vacuous.
    assert {"ingest", "pack", "serve", "keys create", "collections delete"} <= set(CLI_COMMANDS)
    assert {"POST /v1/collections/{name}/pack", "GET /healthz", "GET /docs"} <= set(REST_ROUTES)


@pytest.fixture(scope="module")
def documented_commands() -> set[str]:
    """The commands docs/cli.md has a heading for (`## \\`windowpack pack\\``)."""
    return set(_DOCUMENTED_COMMAND.findall(_page_text("cli.md")))


@pytest.mark.parametrize("command", CLI_COMMANDS)
def test_cli_command_is_documented(documented_commands: set[str], command: str) -> None:
    assert command in documented_commands, f"`windowpack {command}` has no heading in docs/cli.md"


def test_every_documented_command_exists(documented_commands: set[str]) -> None:
    assert documented_commands, "docs/cli.md has no `windowpack ...` headings"
    assert documented_commands <= set(CLI_COMMANDS), documented_commands - set(CLI_COMMANDS)


@pytest.mark.parametrize("route", REST_ROUTES)
def test_rest_route_is_documented(route: str) -> None:
    assert f"`{route}`" in _page_text("rest.md"), f"`{route}` is not in docs/rest.md"


def _served(documented: str) -> bool:
    """Whether a `METHOD /path?query` named in the docs, an example or a route, is served."""
    method_and_path = documented.partition("?")[0]
    for route in REST_ROUTES:
        pattern = re.escape(route).replace(r"\{", "{").replace(r"\}", "}")
        if re.fullmatch(re.sub(r"\{\w+\}", "[^?#]+", pattern), method_and_path):
            return True
    return False


def test_every_documented_route_exists() -> None:
    text = _page_text("rest.md")
    documented = {f"{method} {path}" for method, path in _DOCUMENTED_ROUTE.findall(text)}
    assert documented, "docs/rest.md names no `METHOD /path` route"
    assert not [route for route in documented if not _served(route)]


def test_readme_is_a_front_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


MARKDOWN_PAGES = [README, *sorted(DOCS.glob("*.md"))]


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    kept = "".join(char for char in text if char in " -_" or unicodedata.category(char)[0] in "LN")
    return kept.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    return {_anchor(heading) for heading in _HEADING.findall(text)}


def _relative_links(page: Path) -> list[str]:
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    return [
        target
        for target in _LINK.findall(text)
        if not re.match(r"[a-z][a-z0-9+.-]*:", target)  # http:, https:, mailto:
    ]


@pytest.mark.parametrize("page", MARKDOWN_PAGES, ids=lambda page: page.name)
def test_relative_links_resolve(page: Path) -> None:
    links = _relative_links(page)
    broken = []
    for link in links:
        path_part, _, fragment = link.partition("#")
        target = (page.parent / unquote(path_part)).resolve() if path_part else page
        if not target.exists():
            broken.append(f"{link}: no file {target}")
        elif fragment and target.suffix == ".md" and fragment not in _anchors(target):
            broken.append(f"{link}: no heading #{fragment} in {target.name}")
    assert not broken, f"{page.name}: " + "; ".join(broken)


def test_the_pages_link_to_each_other() -> None:
    # A page nothing links to is one a reader cannot find from the front page.
    linked = set()
    for page in MARKDOWN_PAGES:
        for link in _relative_links(page):
            path_part = link.partition("#")[0]
            if path_part:
                linked.add((page.parent / unquote(path_part)).resolve())
    orphans = [page.name for page in DOCS.glob("*.md") if page.resolve() not in linked]
    assert not orphans, f"no page links to {orphans}"
