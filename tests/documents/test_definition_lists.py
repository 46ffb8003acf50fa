"""Definition lists are units like list items and chat turns: a term and its definition stay
together. As properties over random corpora of HTML (`<dl>`), Markdown (`Term` / `: def`)
and reStructuredText-style (an indented definition) lists among sections and chats: no chunk
ends with a term line, an entry that fits a chunk is in one chunk, and a window that shows a
term shows the start of its definition; and on the PostgreSQL manual, no chunk ends with a
parameter's name."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pg_manual import manual_pages

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.documents import chunk_document, parse_bytes, parse_paths
from windowpack.text import TokenCounter, get_token_counter
from windowpack.types import Document

WORDS = ["otter", "lantern", "glacier", "meadow", "falcon", "quarry", "ember", "tundra", "harbor"]
TYPES = ["integer", "boolean", "string", "enum", "floating point"]
FORMS = ("html", "markdown", "rst")
QUESTIONS = [
    "What is the default of term_3?",
    "which setting controls the falcon quarry",
    "List every option that mentions a glacier.",
    "harbor ember tundra",
]
FAST = settings(max_examples=50, deadline=None)
WINDOWS = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
CONFIG = StoreConfig(embedder="hash", chunk_tokens=48, fanout=3)


@cache
def counter() -> TokenCounter:
    return get_token_counter("o200k_base")


@dataclass(frozen=True, kw_only=True)
class Entry:
    """A generated entry: `term` names it (on its term line only), its definition opens with
    `opens` and closes with `closes` (words found nowhere else)."""

    term: str
    opens: str
    closes: str


def _sentence(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))).capitalize() + "."


def _paragraphs(rng: random.Random, number: int, opens: str, closes: str) -> list[str]:
    """A definition's paragraphs: the first opens with `opens`, the last closes with `closes`."""
    paragraphs = [
        " ".join(_sentence(rng, 3, 25) for _ in range(rng.randint(1, 4))) for _ in range(number)
    ]
    paragraphs[0] = f"{opens} {paragraphs[0]}"
    paragraphs[-1] = f"{paragraphs[-1]} {closes}."
    return paragraphs


class Corpus:
    """Random documents of each form, and the entries each holds."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.count = 0

    def _entry(self) -> tuple[Entry, list[str], str]:
        self.count += 1
        number = self.count
        entry = Entry(term=f"term_{number}", opens=f"opens{number}", closes=f"closes{number}")
        paragraphs = _paragraphs(self.rng, self.rng.randint(1, 4), entry.opens, entry.closes)
        return entry, paragraphs, self.rng.choice(TYPES)

    def html(self) -> tuple[bytes, list[Entry]]:
        entries: list[Entry] = []
        body = [f"<h1>Chapter {self.rng.choice(WORDS)}</h1>"]
        for _ in range(self.rng.randint(1, 3)):
            body.append(
                f"<h2>Part {self.rng.choice(WORDS)}</h2><p>{_sentence(self.rng, 5, 30)}</p>"
            )
            items = []
            for _ in range(self.rng.randint(1, 6)):
                entry, paragraphs, kind = self._entry()
                entries.append(entry)
                term = f'<span class="term"><code>{entry.term}</code> (<code>{kind}</code>)</span>'
                if self.rng.random() < 0.2:
                    term += f"<br><code>{entry.term}_alias</code>"
                ps = "".join(f"<p>\n  {p}\n</p>" for p in paragraphs)
                if self.rng.random() < 0.2:
                    ps = ps.replace("</p>", "</p><pre>SET x = 1;\n\nSHOW x;</pre>", 1)
                items.append(f"<dt>{term}</dt><dd>{ps}</dd>")
            body.append(f'<div class="variablelist"><dl>{"".join(items)}</dl></div>')
        page = f"<html><head><title>T</title></head><body>{''.join(body)}</body></html>"
        return page.encode(), entries

    def markdown(self) -> tuple[str, list[Entry]]:
        entries: list[Entry] = []
        parts = [f"# Guide {self.rng.choice(WORDS)}"]
        for _ in range(self.rng.randint(1, 3)):
            parts += [f"## Part {self.rng.choice(WORDS)}", _sentence(self.rng, 5, 30)]
            for _ in range(self.rng.randint(1, 6)):
                entry, paragraphs, kind = self._entry()
                entries.append(entry)
                first, *rest = paragraphs
                lines = [f"`{entry.term}` ({kind})", f":   {first}"]
                lines += [f"\n    {p}" for p in rest]
                parts.append("\n".join(lines))
        return "\n\n".join(parts), entries

    def rst(self) -> tuple[str, list[Entry]]:
        entries: list[Entry] = []
        parts = [_sentence(self.rng, 5, 30)]
        for _ in range(self.rng.randint(1, 8)):
            entry, paragraphs, kind = self._entry()
            entries.append(entry)
            indent = " " * self.rng.choice([2, 3, 4])
            body = "\n\n".join(indent + p for p in paragraphs)
            parts.append(f"{entry.term} ({kind})\n{body}")
            if self.rng.random() < 0.3:
                parts.append(_sentence(self.rng, 5, 30))
        return "\n\n".join(parts), entries

    def document(self, form: str) -> tuple[Document, list[Entry]]:
        if form == "html":
            data, entries = self.html()
            return parse_bytes(data, Path("page.html"))[0], entries
        if form == "markdown":
            text, entries = self.markdown()
            return Document(text=text, id="guide.md", kind="markdown"), entries
        text, entries = self.rst()
        return Document(text=text, id="options.txt", kind="text"), entries


def _term_line(text: str, entry: Entry) -> tuple[int, int]:
    """(start, end) of the line that holds `entry`'s term."""
    found = re.search(rf"(?<![\w]){re.escape(entry.term)}(?![\w])", text)
    assert found is not None, entry.term
    start = text.rfind("\n", 0, found.start()) + 1
    end = text.find("\n", found.end())
    return start, len(text) if end < 0 else end


def _entry_span(text: str, entry: Entry) -> tuple[int, int]:
    start, _ = _term_line(text, entry)
    end = text.index(entry.closes) + len(entry.closes) + 1  # and its full stop
    return start, end


def _last_line(text: str) -> str:
    return text.rstrip().rsplit("\n", 1)[-1]


def _terms_on(line: str, entries: list[Entry]) -> list[Entry]:
    return [e for e in entries if re.search(rf"(?<![\w]){re.escape(e.term)}(?![\w])", line)]


@FAST
@given(seed=st.integers(0, 10**6), form=st.sampled_from(FORMS), target=st.integers(16, 160))
def test_no_chunk_ends_with_a_term_and_an_entry_that_fits_is_one_chunk(
    seed: int, form: str, target: int
) -> None:
    document, entries = Corpus(seed).document(form)
    text = document.text
    chunks = chunk_document(document, counter(), target)
    for chunk in chunks:
        last = _last_line(text[chunk.start : chunk.end])
        for entry in _terms_on(last, entries):
            # Only a term that with its definition's first word is over a chunk may end one.
            start, _ = _term_line(text, entry)
            head = text[start : text.index(entry.opens) + len(entry.opens)]
            assert counter().count(head) > target, (form, target, text[chunk.start : chunk.end])
    for entry in entries:
        start, end = _entry_span(text, entry)
        if counter().count(text[start:end]) > target:
            # Too big: split inside the definition, the term with the definition's start.
            head = text[start : text.index(entry.opens) + len(entry.opens)]
            first = next(c for c in chunks if c.start <= start < c.end)
            if counter().count(head) <= target:
                assert entry.opens in text[first.start : first.end], (form, target, entry)
            continue
        holding = [c for c in chunks if c.start < end and start < c.end]
        assert len(holding) == 1, (form, target, entry, [text[c.start : c.end] for c in holding])


@pytest.mark.parametrize("form", FORMS)
def test_a_parameter_bigger_than_a_chunk_keeps_its_name_with_its_description(form: str) -> None:
    document, entries = Corpus(7).document(form)
    text = document.text
    chunks = chunk_document(document, counter(), 24)
    for entry in entries:
        term_start, term_end = _term_line(text, entry)
        (holding,) = [c for c in chunks if c.start <= term_start < c.end]
        assert holding.end > term_end  # the term line is never a chunk's end
        assert entry.opens in text[holding.start : holding.end]


def test_html_definition_lists_become_markdown_entries() -> None:
    page = (
        b"<h1>Query Planning</h1><dl><dt><code>effective_cache_size</code> (<code>integer</code>)"
        b"</dt><dd><p>Sets the planner's assumption.</p><p>The default is 4 gigabytes.</p></dd>"
        b"<dt><code>WORK</code><br><code>TRANSACTION</code></dt><dd>Optional key words.</dd></dl>"
    )
    (document,) = parse_bytes(page, Path("query.html"))
    assert (
        "`effective_cache_size` (`integer`)\n:   Sets the planner's assumption.\n\n"
        "    The default is 4 gigabytes." in document.text
    )
    assert "`WORK`, `TRANSACTION`\n:   Optional key words." in document.text


# --- windows ---------------------------------------------------------------------------------


def _chat(rng: random.Random) -> list[dict[str, str]]:
    messages = []
    for _ in range(rng.randint(2, 6)):
        messages.append({"role": "user", "content": _sentence(rng, 3, 10)})
        reply = "\n\n".join(_sentence(rng, 5, 40) for _ in range(rng.randint(1, 4)))
        messages.append({"role": "assistant", "content": reply})
    return messages


@dataclass(frozen=True, kw_only=True)
class Packed:
    collection: wp.Collection
    entries: list[Entry]


@pytest.fixture(scope="module")
def packed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Packed]:
    """A store of definition lists in every form, sectioned markdown and chats."""
    folder = tmp_path_factory.mktemp("definitions")
    corpus = Corpus(11)
    entries: list[Entry] = []
    paths = []
    for index in range(2):
        data, found = corpus.html()
        (folder / f"page-{index}.html").write_bytes(data)
        paths.append(folder / f"page-{index}.html")
        entries += found
    store = wp.open(folder / "store", config=CONFIG)
    collection = store.collection("mixed")
    collection.add_files(paths, root=folder)
    documents = []
    for index in range(2):
        text, found = corpus.markdown()
        documents.append(wp.Document(text=text, id=f"guide-{index}.md", kind="markdown"))
        text, found_rst = corpus.rst()
        documents.append(wp.Document(text=text, id=f"options-{index}.txt", kind="text"))
        entries += found + found_rst
    collection.add(documents)
    for index in range(2):
        collection.add_conversation(_chat(corpus.rng), id=f"chat-{index}")
    yield Packed(collection=collection, entries=entries)
    store.close()


@WINDOWS
@given(budget=st.integers(80, 3000), question=st.sampled_from(QUESTIONS))
def test_a_window_that_shows_a_term_shows_its_definition_start(
    packed: Packed, budget: int, question: str
) -> None:
    window = packed.collection.pack(question, budget=budget)
    shown = "".join(item.text for item in window.items if item.kind == "chunk")
    for item in window.items:
        if item.kind != "chunk":
            continue
        for line in item.text.split("\n"):
            for entry in _terms_on(line, packed.entries):
                assert entry.opens in shown, (budget, question, entry, item.text)


# --- the PostgreSQL manual -------------------------------------------------------------------


class _Terms(HTMLParser):
    """The text of each `<dt>` that a `<dd>` follows: a term with a definition."""

    def __init__(self) -> None:
        super().__init__()
        self.terms: set[str] = set()
        self._waiting: list[str] = []
        self._text: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "dt":
            self._text = []
        elif tag == "dd":
            self.terms.update(self._waiting)
            self._waiting = []
        elif tag == "dl":
            self._waiting = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "dt" and self._text is not None:
            self._waiting.append(" ".join("".join(self._text).split()))
            self._text = None

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)


def _plain(line: str) -> str:
    """A Markdown line as the text a page shows (links, escapes, code ticks, emphasis off)."""
    line = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", line)
    line = re.sub(r"\\(.)", r"\1", line)
    return " ".join(re.sub(r"[`*]|(?<!\w)_|_(?!\w)", "", line).split())


def test_no_chunk_of_the_postgresql_manual_ends_with_a_term() -> None:
    pages = manual_pages()
    documents = parse_paths(pages, max_bytes=16 * 1024 * 1024).documents
    orphans = []
    for page, document in zip(pages, documents, strict=True):
        reader = _Terms()
        reader.feed(page.read_text(encoding="utf-8"))
        for chunk in chunk_document(document, counter(), 200):
            last = _last_line(document.text[chunk.start : chunk.end])
            # A line of a code block (a synopsis's "FORCE") is not a term line.
            if not last.startswith("    ") and _plain(last) in reader.terms:
                orphans.append((page.name, last))
    assert not orphans, f"{len(orphans)} chunks end with a term: {orphans[:5]}"
