"""The window inspector (`/ui`) and the offline docs, driven in headless Chromium.

Debian's `chromium` (installed by `.ci/run` when absent) is driven by playwright's Python
package, which downloads no browser of its own. Every request the pages make is checked to
stay on the server's own origin.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from api_helpers import live_server
from playwright.sync_api import expect

import windowpack as wp
from windowpack.demo import PLANTED, demo_documents

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
BUDGET = 700
# Set to a path to keep the screenshot (the README's comes from here).
SCREENSHOT_ENV = "WINDOWPACK_UI_SCREENSHOT"


@pytest.fixture
def demo_server(hash_store: wp.Store, tmp_path: Path) -> Iterator[str]:
    """A real server over the demo corpus in collection `default`."""
    hash_store.collection("default").add(demo_documents())
    with live_server(hash_store, tmp_path) as url:
        yield url


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    """A fresh headless Chromium profile; skipped without Chromium, except in CI."""
    if not Path(CHROMIUM).exists():
        message = f"Chromium not found at {CHROMIUM}: apt-get install chromium"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS,
            viewport={"width": 1280, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


def _watched_page(browser: Any, origin: str) -> tuple[Any, list[str]]:
    """A page recording every problem: requests off `origin`, script errors, console errors."""
    page = browser.new_page()
    problems: list[str] = []
    # ReDoc runs a web worker from a blob: URL of the page's own origin.
    own = (origin, f"blob:{origin}/")
    page.on(
        "request",
        lambda request: None if request.url.startswith(own) else problems.append(request.url),
    )
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on(
        "console",
        lambda message: problems.append(message.text) if message.type == "error" else None,
    )
    return page, problems


def _texts(page: Any, selector: str, attribute: str | None = None) -> list[str]:
    elements = page.locator(selector)
    if attribute is None:
        return [text.strip() for text in elements.all_inner_texts()]
    return [elements.nth(i).get_attribute(attribute) for i in range(elements.count())]


def test_the_inspector_shows_the_window_of_a_known_corpus(
    browser: Any, demo_server: str, hash_store: wp.Store, tmp_path: Path
) -> None:
    fact = PLANTED[1]
    collection = hash_store.collection("default")
    window = collection.pack(fact.question, budget=BUDGET)
    page, problems = _watched_page(browser, demo_server)

    page.goto(f"{demo_server}/ui?collection=default")
    page.wait_for_selector("#collection option[value=default]", state="attached")
    page.fill("#question", fact.question)
    page.fill("#budget", str(BUDGET))
    page.click("#pack")
    page.wait_for_selector("body[data-packed=true]")
    page.wait_for_selector("#node-title")

    assert _texts(page, "#items tbody tr.item", "data-kind") == [i.kind for i in window.items]
    assert page.inner_text("#tokens b") == f"{window.tokens:,}"
    assert page.inner_text("#cacheable b") == f"{window.cacheable_prefix_tokens:,}"
    cacheable = sum(i.offset + len(i.text) <= window.cacheable_prefix_chars for i in window.items)
    assert page.locator("#window-bar .seg.cacheable").count() == cacheable > 0
    assert _texts(page, "#corpus .doc", "data-document-id") == [
        info.id for info in collection.documents()
    ]
    holder = f'#corpus .doc[data-document-id="{fact.document_id}"]'
    assert page.locator(f"{holder} .main-row .cell.verbatim").count() >= 1
    assert page.locator("#corpus .main-row .cell.gap").count() >= 1
    assert page.locator("#corpus .tier-row .cell.overview").count() >= 1
    assert page.locator("#prefix-cache .badge.no").count() == len(wp.PROMPT_CACHE_MINIMUMS)
    # An item's text opens under it: the planted sentence, verbatim.
    rows = page.locator("#items tbody tr.item")
    verbatim = [i for i, item in enumerate(window.items) if fact.sentence in item.text]
    rows.nth(verbatim[0]).click()
    assert fact.sentence in page.locator("#items tbody tr.detail pre").nth(verbatim[0]).inner_text()
    # The summary tree: its levels, the root, and a child node one click away.
    overview = collection.tree()
    assert page.locator("#levels tbody tr").count() == len(overview.levels) + 1
    assert page.inner_text("#node-title").startswith(f"node {overview.root_id}")

    shot = page.screenshot(full_page=True)
    _check_not_blank(shot)
    kept = os.environ.get(SCREENSHOT_ENV)
    if kept:
        Path(kept).write_bytes(shot)
    child = page.locator("#children button[data-node]").first
    child_id = child.get_attribute("data-node")
    child.click()
    expect(page.locator("#node-title")).to_have_text(re.compile(rf"^node {child_id} "))

    assert problems == []


_GUIDE = (
    "# Ferry guide\n\nHarbour services.\n\n## Timetable\n\n"
    "The harbour ferry leaves the north quay at seven sharp.\n"
)
_CHAT = "User: when does the ferry leave?\nAssistant: The ferry leaves at seven.\n"


def test_the_inspector_names_sections_and_turns_as_such(
    browser: Any, hash_store: wp.Store, tmp_path: Path
) -> None:
    collection = hash_store.collection("mixed")
    collection.add([wp.Document(id="guide.md", text=_GUIDE, kind="markdown")])
    collection.add_conversation(_CHAT, id="chat")
    question = "when does the harbour ferry leave?"
    window = collection.pack(question, budget=2000)
    kinds = {"guide.md": "section", "chat": "turn"}
    expected = [
        f"{kinds[i.document_id]} {i.unit + 1},"
        for i in window.items
        if i.kind == "chunk" and i.unit is not None and i.document_id is not None
    ]
    assert {line.split()[0] for line in expected} == {"section", "turn"}
    with live_server(hash_store, tmp_path) as url:
        page, problems = _watched_page(browser, url)
        page.goto(f"{url}/ui?collection=mixed")
        page.wait_for_selector("#collection option[value=mixed]", state="attached")
        page.fill("#question", question)
        page.fill("#budget", "2000")
        page.click("#pack")
        page.wait_for_selector("body[data-packed=true]")
        shown = _texts(page, "#items tbody tr.item td:nth-child(5)")

    labelled = [text for text in shown if text.startswith(("section", "turn", "part"))]
    assert [" ".join(text.split()[:2]) for text in labelled] == expected
    assert not any("turn/record" in text for text in shown)
    assert problems == []


def test_the_page_names_units_as_the_library_does(demo_server: str) -> None:
    import httpx

    from windowpack.types import UNIT_NAMES

    page = httpx.get(f"{demo_server}/ui").text

    assert f"const UNIT_NAMES = {json.dumps(dict(UNIT_NAMES), sort_keys=True)};" in page
    assert "turn/record" not in page


def _check_not_blank(png: bytes) -> None:
    """A real picture: many colours, and the inspector's verbatim and summary colours in it."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20) or []
    assert image.width >= 1000 and len(colours) > 50
    found = {colour for _, colour in colours}
    assert (0x2E, 0x9D, 0x5B) in found and (0x3B, 0x6F, 0xD4) in found  # verbatim, summary
    background = max(colours)[0]
    assert background < 0.9 * image.width * image.height


def test_an_unknown_question_error_is_shown_not_thrown(browser: Any, demo_server: str) -> None:
    page, problems = _watched_page(browser, demo_server)
    page.goto(f"{demo_server}/ui")
    page.wait_for_selector("#collection option", state="attached")
    page.fill("#question", "x")
    page.fill("#budget", "0")  # the server refuses it, naming the field
    page.eval_on_selector("#budget", "input => input.removeAttribute('min')")
    page.click("#pack")
    page.wait_for_selector("#status.error")
    assert "budget" in page.inner_text("#status")
    assert [p for p in problems if "status of 422" not in p] == []


def test_swagger_ui_and_redoc_render_from_installed_files(browser: Any, demo_server: str) -> None:
    page, problems = _watched_page(browser, demo_server)
    blocked: dict[str, str] = {}
    # ReDoc's bundle asks its CDN for a logo; the docs' policy blocks it before it is sent.
    page.on("requestfailed", lambda r: blocked.setdefault(r.url, str(r.failure)))

    page.goto(f"{demo_server}/docs")
    page.wait_for_selector(".opblock-summary-path")
    paths = _texts(page, ".opblock-summary-path")
    page.goto(f"{demo_server}/redoc")
    page.wait_for_selector("redoc h1, [role=navigation]", timeout=30_000)

    assert "/v1/collections/{name}/pack" in [p.replace("\u200b", "") for p in paths]
    assert page.locator("text=windowpack").count() >= 1
    logo = "https://cdn.redoc.ly/redoc/logo-mini.svg"
    assert blocked == {logo: "csp"}  # refused by the policy, never sent
    assert [p for p in problems if logo not in p and "Content Security Policy" not in p] == []
