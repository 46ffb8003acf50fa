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
from urllib.parse import parse_qs, urlsplit

import pytest
from api_helpers import live_server
from playwright.sync_api import expect

import windowpack as wp
from windowpack.demo import PLANTED, demo_documents
from windowpack.types import WHY

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
BUDGET = 700
COMPARED = 1600
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
    overview = BUDGET // 8  # asked for: the cacheable tier the page shows
    window = collection.pack(fact.question, budget=BUDGET, overview_tokens=overview)
    page, problems = _watched_page(browser, demo_server)

    page.goto(f"{demo_server}/ui?collection=default")
    page.wait_for_selector("#collection option[value=default]", state="attached")
    page.fill("#question", fact.question)
    page.fill("#budget", str(BUDGET))
    page.fill("#compare", str(COMPARED))
    page.fill("#overview", str(overview))
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
        _keep(shot, Path(kept))
    child = page.locator("#children button[data-node]").first
    child_id = child.get_attribute("data-node")
    child.click()
    expect(page.locator("#node-title")).to_have_text(re.compile(rf"^node {child_id} "))

    assert problems == []


def _packed(
    page: Any,
    url: str,
    question: str,
    budget: int,
    compare: int | None = None,
    overview: int | None = None,
) -> None:
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#question", question)
    page.fill("#budget", str(budget))
    page.fill("#compare", "" if compare is None else str(compare))
    page.fill("#overview", "" if overview is None else str(overview))
    page.click("#pack")
    page.wait_for_selector("body[data-packed=true]")


def test_it_opens_default_and_a_link_reopens_the_view(
    browser: Any, demo_server: str, hash_store: wp.Store
) -> None:
    # A collection that sorts first: the page still opens `default`.
    hash_store.collection("aardvark").add([wp.Document(text="Aardvarks dig at night.", id="a")])
    page, problems = _watched_page(browser, demo_server)
    page.goto(f"{demo_server}/ui")
    page.wait_for_selector("body[data-ready=true]")
    assert page.eval_on_selector("#collection", "select => select.value") == "default"
    assert _texts(page, "#collection option", "value")[0] == "aardvark"

    page.select_option("#collection", "aardvark")
    assert "collection=aardvark" in page.url  # the choice is in the address at once
    page.select_option("#collection", "default")
    question = PLANTED[0].question
    _packed(page, f"{demo_server}/ui", question, 900, COMPARED)
    link = page.url
    query = parse_qs(urlsplit(link).query)
    assert query == {
        "collection": ["default"], "q": [question], "budget": ["900"], "compare": [str(COMPARED)]
    }  # fmt: skip
    kinds = _texts(page, "#items tbody tr.item", "data-kind")

    again, more = _watched_page(browser, demo_server)
    again.goto(link)  # the same view, packed on opening
    again.wait_for_selector("body[data-packed=true]")
    assert again.input_value("#question") == question
    assert _texts(again, "#items tbody tr.item", "data-kind") == kinds
    assert again.locator("#compare-columns .column").count() == 2
    assert problems == more == []


def test_the_whole_text_and_the_messages_are_shown_and_copied(
    browser: Any, demo_server: str, hash_store: wp.Store
) -> None:
    question = PLANTED[0].question
    overview = BUDGET // 8  # asked for: the cacheable tier the page shades
    window = hash_store.collection("default").pack(
        question, budget=BUDGET, overview_tokens=overview
    )
    browser.grant_permissions(["clipboard-read", "clipboard-write"], origin=demo_server)
    page, problems = _watched_page(browser, demo_server)
    _packed(page, f"{demo_server}/ui", question, BUDGET, overview=overview)
    clipboard = "navigator.clipboard.readText()"

    assert page.eval_on_selector("#window-text", "pre => pre.textContent") == window.text
    shaded = page.eval_on_selector("#window-text .cacheable", "span => span.textContent")
    assert shaded == window.text[: window.cacheable_prefix_chars]
    page.click("#copy-text")
    expect(page.locator("#copy-text-state")).to_have_text(re.compile("^copied"))
    assert page.evaluate(clipboard) == window.text

    # Without the clipboard API (an http page off localhost), the older copy command.
    page.evaluate("navigator.clipboard.writeText('')")
    page.evaluate(
        "Object.defineProperty(navigator, 'clipboard', {value: undefined, configurable: true})"
    )
    page.eval_on_selector("#copy-text-state", "span => { span.textContent = ''; }")
    page.click("#copy-text")
    expect(page.locator("#copy-text-state")).to_have_text(re.compile("^copied"))
    page.evaluate("delete navigator.clipboard")
    assert page.evaluate(clipboard) == window.text

    page.click("#tab-messages")
    page.wait_for_selector("body[data-messages=plain]")
    messages = window.messages()
    assert _texts(page, "#messages .message", "data-role") == [m["role"] for m in messages]
    shown = [part.inner_text() for part in page.locator("#messages .message pre").all()]
    assert shown == [part["text"] for m in messages for part in m["content"]]
    assert page.is_hidden("#text-view")
    page.click("#copy-messages")
    expect(page.locator("#copy-messages-state")).to_have_text(re.compile("^copied"))
    assert json.loads(page.evaluate(clipboard)) == messages

    # Laid out for a provider: its cache breakpoints, as `Window.messages(provider=...)`.
    page.select_option("#provider", "anthropic")
    page.wait_for_selector("body[data-messages=anthropic]")
    marked = window.messages(provider="anthropic")
    with_breakpoints = [m for m in marked if any("cache_control" in p for p in m["content"])]
    assert page.locator("#messages .role:has-text('cache breakpoint')").count() == len(
        with_breakpoints
    )
    assert problems == []


def test_two_budgets_side_by_side_mark_what_the_larger_adds(
    browser: Any, demo_server: str, hash_store: wp.Store
) -> None:
    collection = hash_store.collection("default")
    question = PLANTED[1].question
    small = collection.pack(question, budget=BUDGET)
    large = collection.pack(question, budget=COMPARED)
    page, problems = _watched_page(browser, demo_server)
    _packed(page, f"{demo_server}/ui", question, COMPARED, BUDGET)  # in either order

    columns = page.locator("#compare-columns .column")
    assert _texts(page, "#compare-columns .column", "data-budget") == [str(BUDGET), str(COMPARED)]
    shown = [item for item in large.items if item.kind != "gap"]
    larger_rows = columns.nth(1).locator("tbody tr")
    assert larger_rows.count() == len(shown)
    expected = _added(small, large)
    assert [
        larger_rows.nth(i).get_attribute("data-added") == "true" for i in range(len(shown))
    ] == [expected[index] > 0 for index, item in enumerate(large.items) if item.kind != "gap"]
    assert columns.nth(0).locator("tr[data-added=true]").count() == 0
    new_chunks = sum(
        n for n, item in zip(expected, large.items, strict=True) if item.kind == "chunk"
    )
    assert page.inner_text("#added-chunks") == f"{new_chunks:,}" and new_chunks > 0
    assert problems == []


def _added(smaller: wp.Window, larger: wp.Window) -> list[int]:
    """Per item of `larger`: the chunks it shows verbatim that `smaller` does not (a summary:
    1 when `smaller` lacks it)."""

    def chunks(item: wp.WindowItem) -> set[tuple[str | None, int]]:
        if item.kind != "chunk" or item.ordinal is None:
            return set()
        last = item.ordinal if item.last_ordinal is None else item.last_ordinal
        return {(item.document_id, ordinal) for ordinal in range(item.ordinal, last + 1)}

    def summary(item: wp.WindowItem) -> tuple[object, ...]:
        return (item.document_id, item.level, item.ordinal, item.last_ordinal, item.document_range)

    shown = set().union(*(chunks(item) for item in smaller.items))
    summaries = {summary(item) for item in smaller.items if item.kind == "summary"}
    return [
        len(chunks(item) - shown)
        if item.kind == "chunk"
        else int(item.kind == "summary" and summary(item) not in summaries)
        for item in larger.items
    ]


def test_each_item_says_why_it_is_there_in_words(
    browser: Any, demo_server: str, hash_store: wp.Store
) -> None:
    question = PLANTED[1].question
    overview = BUDGET // 8
    window = hash_store.collection("default").pack(
        question, budget=BUDGET, overview_tokens=overview
    )
    page, problems = _watched_page(browser, demo_server)
    _packed(page, f"{demo_server}/ui", question, BUDGET, overview=overview)

    codes = [item.why for item in window.items]
    assert _texts(page, "#items tbody td.why", "data-why") == codes
    assert {"overview", "gap"} <= set(codes) and set(codes) & {"words", "words_and_meaning"}
    meanings = _texts(page, "#items tbody td.why .meaning")
    assert meanings == [WHY[code] for code in codes if code is not None]
    assert not any(re.fullmatch(r"-?\d+\.\d+", text) for text in _texts(page, "#items td"))
    assert problems == []


def test_tree_children_are_named_not_numbered(
    browser: Any, demo_server: str, hash_store: wp.Store
) -> None:
    collection = hash_store.collection("default")
    root = collection.node(collection.tree().root_id or 0)
    page, problems = _watched_page(browser, demo_server)
    _packed(page, f"{demo_server}/ui", PLANTED[0].question, BUDGET)
    page.wait_for_selector("#children li")

    labels = [child.label for child in root.children]
    titles = {info.id: info.title for info in collection.documents()}
    assert labels == [titles[child.document_id or ""] for child in root.children]
    assert _texts(page, "#children li button") == labels
    # Down to a document's chunks: each by its first words.
    for _ in range(len(collection.tree().levels)):
        if page.locator("#children li[data-kind=chunk]").count():
            break
        node = page.locator("#children button[data-node]").first.get_attribute("data-node")
        page.locator("#children button[data-node]").first.click()
        page.wait_for_selector(f"#node-title:has-text('node {node} ')")
    chunk_labels = _texts(page, "#children li .chunk-label")
    assert chunk_labels and not any(re.fullmatch(r"(chunk|node) \d+", t) for t in chunk_labels)
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

    page = httpx.get(f"{demo_server}/ui", timeout=120).text

    assert f"const UNIT_NAMES = {json.dumps(dict(UNIT_NAMES), sort_keys=True)};" in page
    assert f"const WHY = {json.dumps(dict(WHY))};" in page
    assert "turn/record" not in page


def _keep(png: bytes, path: Path) -> None:
    """The screenshot in 256 colours: a third of the bytes, and no change a reader sees."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


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


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("budget", "0", "budget"),
        ("question", "", "question"),
        ("compare", "many", "compare with budget"),
    ],
)
def test_a_bad_field_is_named_on_the_page_and_nothing_is_sent(
    browser: Any, demo_server: str, field: str, value: str, named: str
) -> None:
    page, problems = _watched_page(browser, demo_server)
    packs: list[str] = []
    page.on(
        "request", lambda request: packs.append(request.url) if "/pack" in request.url else None
    )
    page.goto(f"{demo_server}/ui")
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#question", "Which frequency does the beacon use?")
    page.fill(f"#{field}", value)
    page.click("#pack")

    expect(page.locator("#status.error")).to_have_text(re.compile(f"^{named}: "))
    assert page.get_attribute(f"#{field}", "aria-invalid") == "true"
    assert page.evaluate("document.activeElement.id") == field
    assert packs == [] and problems == []


def test_the_server_s_error_is_shown_not_thrown(browser: Any, demo_server: str) -> None:
    page, problems = _watched_page(browser, demo_server)
    page.goto(f"{demo_server}/ui")
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#question", "x")
    # A tokenizer the server does not know: refused (422), naming the field.
    page.eval_on_selector("#tokenizer", "select => select.add(new Option('p50k_edit'), 0)")
    page.select_option("#tokenizer", "p50k_edit")
    page.click("#pack")
    expect(page.locator("#status.error")).to_contain_text("422")
    assert "tokenizer" in page.inner_text("#status")

    # An answer that is not JSON (a proxy's error page): its status and its words.
    page.select_option("#tokenizer", "o200k_base")
    page.route(
        "**/pack", lambda route: route.fulfill(status=502, body="Bad gateway: upstream down")
    )
    page.click("#pack")
    expect(page.locator("#status.error")).to_contain_text("502: Bad gateway: upstream down")
    assert [p for p in problems if "status of 422" not in p and "status of 502" not in p] == []


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
