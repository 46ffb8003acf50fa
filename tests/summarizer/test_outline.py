"""Outlines: a chat's index of requests and a document's table of contents, within target."""

from __future__ import annotations

import re
from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from windowpack.documents.chunking import chunk_document, natural_units
from windowpack.documents.conversation import conversation_document
from windowpack.summarizer.extractive import ExtractiveSummarizer
from windowpack.summarizer.outline import DocumentOutline, collection_outline, document_outline
from windowpack.summarizer.tree import TreeBuilder, TreeItem
from windowpack.text.tokens import TokenCounter, get_token_counter
from windowpack.types import Document

TOPICS = ["saffron", "tapirs", "owls", "horses", "rivers", "lanterns"]
GUIDE = """# Child process

The module spawns subprocesses. It has many options.

## exec

Spawns a shell and runs a command in it.

```js
exec('ls', (err, stdout) => {});
```

### options

* `maxBuffer` {integer} Largest amount of data allowed on stdout or stderr.

## spawn

```js
spawn('ls');
```

Spawns a process without a shell.
"""


@cache
def counter() -> TokenCounter:
    return get_token_counter("o200k_base")


def chat(turns: int) -> Document:
    messages = []
    for i in range(turns):
        request = f"Write a haiku about {TOPICS[i % len(TOPICS)]} in the style of poet {i}."
        messages += [
            {"role": "user", "content": request},
            {"role": "assistant", "content": f"Reply {i}: " + "Soft words drift by. " * 30},
        ]
    return conversation_document(messages)


def outline_of(document: Document, chunk_tokens: int = 64) -> DocumentOutline:
    document = Document(text=document.text, kind=document.kind, units=natural_units(document))
    chunks = chunk_document(document, counter(), chunk_tokens)
    outline = document_outline(
        text=document.text,
        kind=document.kind,
        units=document.units,
        chunk_units=[chunk.unit for chunk in chunks],
    )
    assert outline is not None
    return outline


def test_a_chat_outline_lists_each_turn_number_and_request() -> None:
    outline = outline_of(chat(3))
    text = outline.render(0, 10_000, target=1000, counter=counter())
    assert text == (
        "turn 1: Write a haiku about saffron in the style of poet 0.\n"
        "turn 2: Write a haiku about tapirs in the style of poet 1.\n"
        "turn 3: Write a haiku about owls in the style of poet 2."
    )


def test_a_short_target_keeps_numbers_and_subjects_before_function_words() -> None:
    outline = outline_of(chat(12))
    text = outline.render(0, 10_000, target=90, counter=counter())
    assert text is not None and counter().count(text) <= 90
    lines = text.split("\n")
    assert all(re.match(r"turn \d+: Write haiku \w+", line) for line in lines), text


@settings(max_examples=40, deadline=None)
@given(turns=st.integers(min_value=1, max_value=60), target=st.integers(min_value=8, max_value=600))
def test_a_chat_outline_fits_its_target_and_keeps_turn_order(turns: int, target: int) -> None:
    outline = outline_of(chat(turns))
    text = outline.render(0, 10_000, target=target, counter=counter())
    assert text is not None and counter().count(text) <= target
    numbers = [int(n) for n in re.findall(r"^turn (\d+):", text, re.M)]
    assert numbers == sorted(set(numbers)) and all(1 <= n <= turns for n in numbers)


def test_a_document_outline_is_its_table_of_contents_with_lead_sentences() -> None:
    outline = outline_of(Document(text=GUIDE, kind="markdown"), chunk_tokens=40)
    text = outline.render(0, 10_000, target=1000, counter=counter())
    assert text == (
        "Child process: The module spawns subprocesses.\n"
        # Below the first line, the headings every line shares are not repeated.
        "exec: Spawns a shell and runs a command in it.\n"
        "exec › options: * `maxBuffer` {integer} Largest amount of data "
        "allowed on stdout or stderr.\n"
        # The code block first: the lead is the first prose sentence.
        "spawn: Spawns a process without a shell."
    )


def test_a_small_target_shows_fewer_heading_levels_before_dropping_leads() -> None:
    outline = outline_of(Document(text=GUIDE, kind="markdown"), chunk_tokens=40)
    text = outline.render(0, 10_000, target=40, counter=counter())
    assert text is not None and counter().count(text) <= 40
    assert "options" not in text and "Child process: The module spawns subprocesses." in text


def test_a_node_in_which_no_entry_starts_has_no_outline() -> None:
    outline = outline_of(chat(2), chunk_tokens=32)
    entries = outline.within(0, 10_000)
    inside = entries[0].leaf + 1  # a reply chunk of the first turn
    assert outline.render(inside, inside + 1, target=100, counter=counter()) is None
    assert outline.key(inside, inside + 1) is None


def test_the_same_chunks_at_other_turn_numbers_are_other_nodes() -> None:
    """A node's identity includes its outline: the cached summary of identical chunks must
    not lend a node another position's turn numbers."""
    builder = TreeBuilder(
        ExtractiveSummarizer(), counter(), _NoCache(), fallback=ExtractiveSummarizer()
    )
    leaves = [
        TreeItem(
            text=f"chunk {i}", tokens=2, content_hash=f"h{i}", level=0, leaf_start=i, leaf_end=i + 1
        )
        for i in range(4)
    ]
    first = collection_outline([("a", "Write a poem."), ("b", "x"), ("c", "y"), ("d", "z")])
    second = collection_outline([("e", "Write a poem."), ("b", "x"), ("c", "y"), ("d", "z")])
    assert first is not None and second is not None
    one = builder.levels_above(leaves, label="one", outline=first)
    two = builder.levels_above(leaves, label="two", outline=second)
    assert one[0][0].content_hash != two[0][0].content_hash
    assert one[0][0].text.startswith("a: Write a poem.") and two[0][0].text.startswith("e: ")


class _NoCache:
    def get_many(self, children_hashes: object) -> dict[str, str]:
        return {}

    def put_many(self, summaries: object) -> None:
        return None
