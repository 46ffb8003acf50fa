"""Summaries say what they are about (issue 26, item 3), over random reference manuals.

A manual here is what PostgreSQL's pages are: a title and its purpose line
(`NAME — what it does`), a synopsis in code ending in a lead-in, sections of parameters
(a term line, then its definition: html2text's rendering of `<dl>`, or Pandoc's), notes
inside them, definitions long enough to fill several nodes. The properties:

- every level-1 node names its subject: a heading or a term of what it spans;
- no node is junk: a line that is only a heading path or a generic label ("Note"), or a
  lead-in ending with a colon;
- a document's root says what the document is for: its purpose line;
- a collection's root names every group of documents with its count, and a larger group
  gets at least as many of its titles listed as a smaller one.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.storage import repository
from windowpack.storage.schema import ChunkRow, TreeNodeRow

CONFIG = StoreConfig(embedder="hash", chunk_tokens=48, fanout=4)
WORDS = [
    "basalt",
    "falcon",
    "harbor",
    "lantern",
    "orchard",
    "quarry",
    "summit",
    "tundra",
    "meadow",
    "river",
    "cedar",
]
TOPICS = ["Glacier", "Ember", "Willow", "Copper", "Marble", "Thistle", "Harbor", "Cinder"]
GENERIC = {"note", "tip", "warning", "synopsis", "description", "parameters", "see also"}


@dataclass
class _Region:
    """A heading's or a term's stretch of a document: the names that say what it is."""

    start: int
    names: tuple[str, ...]


@dataclass
class _Manual:
    document: wp.Document
    purpose: str
    regions: list[_Region] = field(default_factory=list)
    headings: set[str] = field(default_factory=set)


def _sentence(rng: random.Random) -> str:
    if rng.random() < 0.2:
        return f"The default value is `{rng.choice(['off', 'on', '0', '8MB'])}`."
    words = [rng.choice(WORDS) for _ in range(rng.randint(4, 10))]
    return " ".join(words).capitalize() + "."


def _manual(rng: random.Random, index: int, *, pandoc: bool) -> _Manual:
    name = f"{rng.choice(TOPICS).upper()} {index}"
    purpose = f"{name} — {' '.join(rng.choice(WORDS) for _ in range(4))}"
    parts: list[str] = []
    manual = _Manual(document=wp.Document(text="", id=""), purpose=purpose)

    def add(text: str, *names: str) -> None:
        start = sum(len(part) for part in parts)
        if names:
            manual.regions.append(_Region(start, names))
        parts.append(text)

    add(f"## {name}\n\n", name)
    manual.headings.add(name)
    add(f"{purpose}\n\n{_sentence(rng)} {_sentence(rng)}\n\n")
    add("## Synopsis\n    \n    \n", "Synopsis", name)
    manual.headings.add("Synopsis")
    add(
        f"    {name} [ WITH _option_ ]\n    \n    where _option_ is one of:\n"
        "    \n        FORCE\n    \n\n"
    )
    for section in range(rng.randint(1, 3)):
        heading = f"{rng.choice(TOPICS)} Settings {section}"
        manual.headings.add(heading)
        add(f"## {heading}\n\n", heading)
        if rng.random() < 0.5:
            add(f"{_sentence(rng)}\n\n")
        for term_index in range(rng.randint(1, 5)):
            term = f"{heading.split()[0].lower()}_{section}_{term_index}"
            line = f"`{term}` (`integer`)"
            separator = "\n: " if pandoc else " \n    \n\n"
            add(f"{line}{separator}", term, heading)
            sentences = rng.choice([1, 2, 3, 12, 30])
            add(" ".join(_sentence(rng) for _ in range(sentences)) + "\n\n")
            if rng.random() < 0.2:
                add("### Note\n\n", heading)
                add(f"{_sentence(rng)}\n\n")
    text = "".join(parts)
    manual.document = wp.Document(
        text=text, id=f"ref/{name.lower().replace(' ', '-')}.md", kind="markdown"
    )
    return manual


def _nodes(col: wp.Collection) -> list[TreeNodeRow]:
    with col._context.sessions() as session:
        return repository.tree_nodes(session, col.collection_id)


def _chunks(col: wp.Collection) -> dict[int, list[ChunkRow]]:
    with col._context.sessions() as session:
        documents = repository.list_documents(session, col.collection_id)
        return {doc.id: repository.chunk_rows(session, doc.id) for doc in documents}


def _document_ids(col: wp.Collection) -> dict[str, int]:
    with col._context.sessions() as session:
        return {
            doc.external_id: doc.id for doc in repository.list_documents(session, col.collection_id)
        }


def _named(manual: _Manual, start: int, end: int) -> set[str]:
    """The names of every region the span `[start, end)` overlaps."""
    names: set[str] = set()
    for index, region in enumerate(manual.regions):
        region_end = manual.regions[index + 1].start if index + 1 < len(manual.regions) else 10**12
        if region.start < end and start < region_end:
            names.update(region.names)
    return names


def junk_lines(text: str, headings: set[str], source: set[str]) -> list[str]:
    """The lines of a node that say nothing alone: a lead-in ending with a colon, a generic
    label, a heading path (known headings joined by " › "); a line the node quotes whole
    from its document (a summary that fits its target verbatim) is the document's own."""
    bad = []
    for line in text.split("\n"):
        if line.strip() in source:
            continue
        plain = re.sub(r"[`*_]", "", line).strip()
        parts = [part.strip() for part in plain.split(" › ")]
        if (
            not plain
            or plain.endswith(":")
            or plain.lower() in GENERIC
            or all(part in headings or part.lower() in GENERIC for part in parts)
        ):
            bad.append(line)
    return bad


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 10**6), documents=st.integers(1, 3), pandoc=st.booleans())
def test_every_node_of_a_manual_names_its_subject_and_says_something(
    tmp_path_factory: pytest.TempPathFactory, seed: int, documents: int, pandoc: bool
) -> None:
    rng = random.Random(seed)
    manuals = [_manual(rng, index, pandoc=pandoc) for index in range(documents)]
    with wp.open(tmp_path_factory.mktemp("manual"), config=CONFIG) as store:
        col = store.collection("ref")
        col.add([manual.document for manual in manuals])
        nodes, chunks, ids = _nodes(col), _chunks(col), _document_ids(col)
    headings = set().union(*(manual.headings for manual in manuals))
    source = {line.strip() for manual in manuals for line in manual.document.text.split("\n")}
    for node in nodes:
        assert node.text.strip() and not node.text.rstrip().endswith(":"), node.text
        assert junk_lines(node.text, headings, source) == [], node.text
    for manual in manuals:
        document_id = ids[manual.document.id]
        own = [node for node in nodes if node.document_id == document_id]
        for node in own:
            if node.level != 1:
                continue
            rows = chunks[document_id]
            start, end = rows[node.leaf_start].char_start, rows[node.leaf_end - 1].char_end
            names = _named(manual, start, end)
            assert any(name in node.text for name in names), (names, node.text)
        if own:
            root = max(own, key=lambda node: node.level)
            assert root.text.startswith(manual.purpose), root.text


def _group_document(group: str, index: int) -> wp.Document:
    title = f"{group.capitalize()} page {index}"
    text = f"# {title}\n\nThe {group} page {index} explains one {group} thing in a sentence."
    return wp.Document(text=text, id=f"docs/{group}-page-{index}.md", title=title, kind="markdown")


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sizes=st.lists(st.integers(1, 40), min_size=2, max_size=4))
def test_a_collection_root_covers_every_group_in_proportion(
    tmp_path_factory: pytest.TempPathFactory, sizes: list[int]
) -> None:
    groups = ["alpha", "beta", "gamma", "delta"][: len(sizes)]
    documents = [
        _group_document(group, index)
        for group, size in zip(groups, sizes, strict=True)
        for index in range(size)
    ]
    with wp.open(tmp_path_factory.mktemp("groups"), config=StoreConfig(embedder="hash")) as store:
        col = store.collection("docs")
        col.add(documents)
        root = col.node(col.tree().root_id or 0)
    assert root.document_id is None
    listed = []
    for group, size in zip(groups, sizes, strict=True):
        titles = [f"{group.capitalize()} page {index}" for index in range(size)]
        if all(title in root.text for title in titles):
            listed.append((size, size))  # the root has room for every one of them
            continue
        # A group, or for a document that shares a group with none, the other documents.
        label = f"{group}-page-* ({size})" if size > 1 else "other ("
        lines = root.text.split("\n")
        line = next((text for text in lines if text.startswith(label)), None)
        assert line is not None, root.text
        listed.append((size, line.count(f"{group.capitalize()} page")))
    # A larger group never has fewer of its titles listed than a smaller one.
    counts = [shown for _, shown in sorted(listed)]
    assert counts == sorted(counts), root.text


def test_a_node_inside_one_long_definition_is_led_by_its_term(tmp_path: Path) -> None:
    sentences = " ".join(f"The default value is `{n}` in case {n}." for n in range(120))
    text = (
        "# Server settings\n\nSettings of the server.\n\n## Memory\n\n"
        f"`work_mem` (`integer`) \n    \n\n{sentences}\n"
    )
    with wp.open(tmp_path, config=CONFIG) as store:
        col = store.collection("ref")
        col.add([wp.Document(text=text, id="settings.md", kind="markdown")])
        nodes = _nodes(col)
    inside = [node for node in nodes if node.level == 1 and node.leaf_start > 1]
    assert inside
    for node in inside:
        assert node.text.startswith("Server settings › Memory › `work_mem` (`integer`): "), (
            node.text
        )
