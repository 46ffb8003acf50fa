"""No text twice in a window (issue 26, items 4 and 9), as a property: over random corpora of
sectioned documents, definition lists, chats, plain prose, and documents whose text another
document of the collection has too (a folder ingested again under other ids), at any budget
and header style, no item shows what another item shows — not a summary in both tiers, not
one summary's text under two nodes, not a chunk twice, not one text under two document ids,
not the same passage of two documents (pages that end alike) — while the count stays exact
and within the budget, and the item that shows a repeated document's text names the
documents that repeat it."""

from __future__ import annotations

import random
import shutil
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st
from random_corpora import SETTINGS, WORDS, chat, words

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.text.tokens import get_token_counter
from windowpack.types import WindowItem

CONFIG = StoreConfig(embedder="hash", chunk_tokens=40, fanout=3)
QUESTIONS = [
    "What does the FORCE option of the falcon command do?",
    "What is the default for lantern_size?",
    "the second haiku about saffron in a pirate style",
    "tundra harbor meadow",
    "Which section says the glacier is an ember?",
]


def _sections(rng: random.Random, title: str) -> str:
    parts = [f"# {title}"]
    for section in range(rng.randint(2, 5)):
        parts.append(f"{'#' * rng.randint(2, 3)} Part {section} {rng.choice(WORDS)}")
        parts.extend(words(rng, 5, 40) for _ in range(rng.randint(1, 3)))
    # Every page ends alike, as reference pages do: the same words in many documents.
    parts.append("## See also\n\nNotes, examples, compatibility.")
    return "\n\n".join(parts)


def _definitions(rng: random.Random, title: str) -> str:
    """A parameter reference in Markdown: each term, its type, then its description."""
    parts = [f"# {title}"]
    for number in range(rng.randint(3, 7)):
        name = f"{rng.choice(WORDS)}_size_{number}"
        parts.append(f"`{name}` (`integer`)")
        parts.append(f"    {words(rng, 8, 30)} The default is {rng.randint(1, 64)} megabytes.")
    return "\n\n".join(parts)


def _html(rng: random.Random, title: str) -> str:
    terms = "".join(
        f"<dt><code>{rng.choice(WORDS)}_{n}</code></dt><dd><p>{words(rng, 6, 25)}</p></dd>"
        for n in range(rng.randint(2, 6))
    )
    return f"<html><body><h1>{title}</h1><p>{words(rng, 5, 20)}</p><dl>{terms}</dl></body></html>"


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> Iterator[wp.Collection]:
    folder = tmp_path_factory.mktemp("repeats")
    store = wp.open(folder / "store", config=CONFIG)
    col = store.collection("mixed")
    rng = random.Random(26)
    pages = folder / "pages"
    pages.mkdir()
    for index in range(3):
        (pages / f"ref-{index}.html").write_text(_html(rng, f"Reference {index}"), "utf-8")
    col.add_files([pages], root=folder)
    # The same folder again from elsewhere: the same texts under other ids.
    again = folder / "elsewhere" / "pages"
    shutil.copytree(pages, again)
    col.add_files([again], root=folder)
    messages = chat(rng, turns=10, reply_words=30, paragraphs=4)
    col.add_conversation(messages, id="chat-0")
    col.add_conversation(chat(rng, turns=10, reply_words=30, paragraphs=4), id="chat-1")
    col.add_conversation(messages, id="chat-0-again")
    documents = [
        wp.Document(text=_sections(rng, f"Guide {i}"), id=f"guide-{i}.md", kind="markdown")
        for i in range(4)
    ]
    documents += [
        wp.Document(text=_definitions(rng, f"Settings {i}"), id=f"settings-{i}.md", kind="markdown")
        for i in range(3)
    ]
    documents += [
        wp.Document(text="\n\n".join(words(rng, 10, 40) for _ in range(6)), id=f"prose-{i}")
        for i in range(4)
    ]
    documents += [
        wp.Document(text=documents[0].text, id="copy/guide-0.md", kind="markdown"),
        wp.Document(text=documents[5].text, id="copy/settings-1.md", kind="markdown"),
        wp.Document(text=documents[8].text, id="copy/prose-1"),
    ]
    col.add(documents)
    yield col
    store.close()


def _body(item: WindowItem, texts: dict[str, str]) -> str:
    """What an item shows below its header: a passage's source text, a summary's text."""
    if item.kind == "chunk":
        assert item.document_id is not None and item.span is not None
        body = texts[item.document_id][item.span.start : item.span.end]
        assert item.text.endswith(body)
        return body
    # A summary's header line, but in a compact overview, whose title heads them all.
    return item.text.split("\n", 1)[1] if item.text.startswith("[summary") else item.text


@SETTINGS
@given(
    budget=st.integers(40, 6000),
    question=st.sampled_from(QUESTIONS),
    headers=st.sampled_from(["full", "compact", "none"]),
)
def test_no_text_is_shown_twice_in_a_window(
    collection: wp.Collection, budget: int, question: str, headers: str
) -> None:
    window = collection.pack(question, budget=budget, headers=headers)
    assert get_token_counter("o200k_base").count(window.text) == window.tokens <= budget
    infos = collection.documents()
    texts = {info.id: collection.get(info.id).text for info in infos}
    same_text: dict[str, list[str]] = {}
    for info in infos:  # in collection order
        same_text.setdefault(texts[info.id], []).append(info.id)
    shown: dict[str, list[tuple[int, int, str]]] = {}  # by source text: spans, document
    bodies: list[str] = []
    passages: dict[str, str] = {}  # a passage's text -> its document
    for item in window.items:
        if item.kind == "gap":
            continue
        body = _body(item, texts)
        if item.kind == "summary":
            assert body not in bodies, body[:80]  # once, whichever tier it is in
            bodies.append(body)
            continue
        assert item.document_id is not None and item.span is not None
        start, end = item.span.start, item.span.end
        spans = shown.setdefault(texts[item.document_id], [])
        for other_start, other_end, other in spans:
            assert end <= other_start or other_end <= start, (item.document_id, other)
            assert other == item.document_id  # one text is shown under one id only
        spans.append((start, end, item.document_id))
        # Page furniture (the same section ending many pages) is shown once, though a
        # document may repeat itself (a chat asks the same request again). A unit is
        # compared whole: two chats' turns cut to the same request are two turns.
        if not _in_part(collection, item):
            assert passages.setdefault(body, item.document_id) == item.document_id, body[:80]
        # The repeats are named where the text is shown.
        group = same_text[texts[item.document_id]]
        assert set(item.duplicates) == set(group) - {item.document_id}
    for item in window.items:
        if item.kind == "summary":
            assert not any(_body(item, texts) == chunk for chunk in _chunk_bodies(window, texts))


def _in_part(collection: wp.Collection, item: WindowItem) -> bool:
    """Whether a passage is part of a unit (a turn, a section) not shown whole by it."""
    if item.unit is None or item.document_id is None or item.span is None:
        return False
    units = collection.get(item.document_id).units or []
    unit = units[item.unit]
    return not (item.span.start <= unit.start and unit.end <= item.span.end)


def _chunk_bodies(window: wp.Window, texts: dict[str, str]) -> list[str]:
    return [_body(item, texts) for item in window.items if item.kind == "chunk"]


def test_a_summary_of_the_overview_is_not_shown_again_below_it(
    collection: wp.Collection,
) -> None:
    """The issue's case: a collection-level summary in the cacheable tier, then again in the
    question's material of the same window."""
    counted = 0
    for budget in (1500, 3000, 6000):
        for question in QUESTIONS:
            window = collection.pack(question, budget=budget, overview_tokens=budget // 8)
            texts = {info.id: "" for info in collection.documents()}
            prefix = [
                _body(item, texts)
                for item in window.items
                if item.kind == "summary" and item.offset < window.cacheable_prefix_chars
            ]
            later = [
                _body(item, texts)
                for item in window.items
                if item.kind == "summary" and item.offset >= window.cacheable_prefix_chars
            ]
            counted += len(prefix)
            assert not set(prefix) & set(later), (budget, question)
    assert counted  # the corpus is large enough for an overview


def test_a_document_and_its_copy_fit_as_one_when_everything_fits(
    collection: wp.Collection,
) -> None:
    """The lossless window holds every text once: the copies are named, not shown, and the
    section every guide ends with is shown once (a marker says it is left out after)."""
    window = collection.pack(QUESTIONS[0], budget=200_000)
    assert {item.kind for item in window.items} == {"chunk", "gap"}
    assert window.text.count("## See also\n\nNotes, examples, compatibility.") == 1
    ids = {item.document_id for item in window.items}
    assert not ids & {"copy/guide-0.md", "copy/settings-1.md", "copy/prose-1", "chat-0-again"}
    guide = [item for item in window.items if item.document_id == "guide-0.md"]
    assert guide and all(item.duplicates == ("copy/guide-0.md",) for item in guide)
    assert get_token_counter("o200k_base").count(window.text) == window.tokens
