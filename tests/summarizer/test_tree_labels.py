"""Tree children named for people: a document's title under a collection node, the first
words of a chunk or a summary (a section by its heading), never a bare number."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import windowpack as wp
from windowpack.summarizer.overview import first_words
from windowpack.types import TREE_LABEL_CHARS

_SECTIONS = "".join(
    f"## {name} **rules**\n\n" + f"The {name.lower()} rule keeps the station safe. " * 30 + "\n\n"
    for name in ("Arrival", "Radio", "Departure")
)


def _labelled_collection(store: wp.Store) -> wp.Collection:
    collection = store.collection("labels")
    collection.add(
        [
            wp.Document(id="guide.md", title="Station guide", text=_SECTIONS, kind="markdown"),
            wp.Document(id="untitled.txt", text="Plain notes about the weather mast. " * 60),
        ]
    )
    return collection


def test_children_carry_titles_headings_and_first_words(any_database_store: wp.Store) -> None:
    collection = _labelled_collection(any_database_store)
    root = collection.node(collection.tree().root_id or 0)

    # Under the collection root: each document by its title, or its id when it has none.
    by_document = {child.document_id: child.label for child in root.children}
    assert by_document == {"guide.md": "Station guide", "untitled.txt": "untitled.txt"}
    # Down to the chunks of one document: a section's chunk by its heading, as plain text.
    node = root.children[0]
    while node.kind == "node":
        found = collection.node(node.node_id or 0)
        node = found.children[0]
    chunk_labels = [child.label for child in found.children]
    assert "Arrival rules" in chunk_labels
    assert all(label and len(label) <= TREE_LABEL_CHARS for label in chunk_labels)
    assert not any(label.startswith("#") for label in chunk_labels if label)


def test_a_summary_child_is_named_by_its_first_words(hash_store: wp.Store) -> None:
    collection = hash_store.collection("long")
    text = "".join(
        f"Entry {i}: the tide gauge read {i} centimetres. " * 20 + "\n\n" for i in range(40)
    )
    collection.add([wp.Document(id="tides.txt", text=text)])
    root = collection.node(collection.tree().root_id or 0)
    nodes = [child for child in root.children if child.kind == "node"]
    assert nodes, "a 40-paragraph document has summary levels"
    for child in nodes:
        summary = collection.node(child.node_id or 0)
        assert child.label == first_words(summary.text)
        assert child.label and summary.text.startswith(child.label.rstrip("…"))


@given(st.text(max_size=400))
def test_first_words_is_a_short_prefix_of_the_first_line(text: str) -> None:
    label = first_words(text)
    assert len(label) <= TREE_LABEL_CHARS
    line = next((line for line in text.splitlines() if line.strip()), "")
    if not line.lstrip().startswith("#"):
        assert " ".join(line.split()).startswith(label.removesuffix("…"))
