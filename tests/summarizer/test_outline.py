"""Outlines: a chat's index of requests and a document's table of contents, within target."""

from __future__ import annotations

import re
from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from windowpack.documents.chunking import chunk_document, natural_units
from windowpack.documents.conversation import conversation_document
from windowpack.summarizer.extractive import ExtractiveSummarizer
from windowpack.summarizer.groups import document_groups
from windowpack.summarizer.outline import DocumentOutline, collection_outline, document_outline
from windowpack.summarizer.tree import TreeBuilder, TreeItem
from windowpack.text.tokens import TokenCounter, get_token_counter
from windowpack.types import Document, Span

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


SETTINGS = (
    "# Server settings\n\nSettings of the server.\n\n## Memory\n\n"
    "`work_mem` (`integer`) \n    \n\n"
    + " ".join(f"The default value is `{n}` in case {n}." for n in range(60))
    + "\n"
)


def _settings_leaves() -> tuple[list[TreeItem], DocumentOutline]:
    document = Document(text=SETTINGS, kind="markdown")
    document = Document(text=SETTINGS, kind="markdown", units=natural_units(document))
    chunks = chunk_document(document, counter(), 32)
    outline = document_outline(
        text=SETTINGS,
        kind="markdown",
        units=document.units,
        chunk_units=[chunk.unit for chunk in chunks],
    )
    assert outline is not None
    leaves = [
        TreeItem(
            text=SETTINGS[chunk.start : chunk.end],
            tokens=chunk.tokens,
            content_hash=f"chunk{i}",
            level=0,
            leaf_start=i,
            leaf_end=i + 1,
            char_start=chunk.start,
            char_end=chunk.end,
        )
        for i, chunk in enumerate(chunks)
    ]
    return leaves, outline


def test_a_node_inside_a_definition_is_led_by_its_term_and_keyed_by_it() -> None:
    """The subject is part of the node's identity: a summary cached for the same chunks
    without it (made before subjects led summaries) is not reused."""
    leaves, outline = _settings_leaves()
    plain = TreeBuilder(
        ExtractiveSummarizer(), counter(), _NoCache(), fallback=ExtractiveSummarizer()
    )
    before = plain.levels_above(leaves, label="doc")[0]
    stale = _Cache({node.content_hash: "STALE" for node in before})
    stale_hashes = set(stale.summaries)
    builder = TreeBuilder(ExtractiveSummarizer(), counter(), stale, fallback=ExtractiveSummarizer())
    after = builder.levels_above(leaves, label="doc", outline=outline)[0]
    inside = [node for node in after if node.leaf_start > 0]
    assert inside
    for node in inside:
        assert node.text.startswith(
            "Server settings › Memory › `work_mem` (`integer`): The default"
        )
        assert "STALE" not in node.text
    assert {node.content_hash for node in after}.isdisjoint(stale_hashes)


def test_a_batch_summarizer_is_asked_for_the_target_less_the_subject() -> None:
    """The LLM summarizer's path (`summarize_many`): the node is the subject and the
    summary, within the node's target, and the summarizer was asked for less."""
    leaves, outline = _settings_leaves()
    summarizer = _BatchSummarizer()
    builder = TreeBuilder(summarizer, counter(), _NoCache(), fallback=ExtractiveSummarizer())
    level = builder.levels_above(leaves, label="doc", outline=outline)[0]
    inside = [node for node in level if node.leaf_start > 0]
    assert inside and summarizer.targets
    for node in inside:
        assert node.text == "Server settings › Memory › `work_mem` (`integer`): A summary."
    node_targets = [
        max(32, -(-sum(leaf.tokens for leaf in leaves[n.child_start : n.child_end]) // 8))
        for n in inside
    ]
    assert all(asked < full for asked, full in zip(summarizer.targets, node_targets, strict=True))


class _Cache:
    def __init__(self, summaries: dict[str, str]) -> None:
        self.summaries = summaries

    def get_many(self, children_hashes: list[str]) -> dict[str, str]:
        return {h: self.summaries[h] for h in children_hashes if h in self.summaries}

    def put_many(self, summaries: dict[str, str]) -> None:
        self.summaries.update(summaries)


class _BatchSummarizer:
    summarizer_id = "batch-test"

    def __init__(self) -> None:
        self.targets: list[int] = []

    def summarize(self, children: object, *, target_tokens: int, counter: TokenCounter) -> str:
        raise AssertionError("the batch path is taken")

    def summarize_many(
        self, jobs: list[tuple[list[str], int]], *, counter: TokenCounter
    ) -> list[str]:
        self.targets += [target for _, target in jobs]
        return ["A summary." for _ in jobs]


def test_a_lead_keeps_a_link_whose_title_holds_a_period() -> None:
    """PostgreSQL's pages link as `[Chapter 28](monitoring.html "Chapter 28. Monitoring")`:
    the period in the title had cut the lead in two."""
    text = (
        "## Statistics\n\nThese parameters control statistics. Refer to [Chapter 28]"
        '(monitoring.html "Chapter 28. Monitoring Database Activity") for more.\n'
    )
    document = Document(text=text, kind="markdown")
    units = natural_units(document)
    outline = document_outline(text=text, kind="markdown", units=units, chunk_units=[0])
    assert outline is not None and outline.purpose is not None
    assert outline.purpose.more == ("Refer to Chapter 28 for more.",)


@settings(max_examples=30, deadline=None)
@given(target=st.integers(min_value=8, max_value=120))
def test_an_outline_cut_to_fit_never_ends_with_its_label(target: int) -> None:
    leaves, outline = _settings_leaves()
    placed = outline.placed(
        [Span(start=leaf.char_start or 0, end=leaf.char_end or 0) for leaf in leaves]
    )
    for root in (False, True):
        text = placed.render(0, len(leaves), target=target, counter=counter(), root=root)
        assert text is not None and counter().count(text) <= target
        assert not text.rstrip().endswith(":"), text


def test_documents_are_grouped_by_folder_and_name_prefix() -> None:
    ids = [
        "pgdocs/runtime-config-wal.html",
        "pgdocs/runtime-config-query.html",
        "pgdocs/sql-abort.html",
        "pgdocs/sql-syntax-lexical.html",
        "pgdocs/index.html",
    ]
    assert document_groups(ids) == [
        "pgdocs/runtime-config-*",
        "pgdocs/runtime-config-*",
        "pgdocs/sql-*",
        "pgdocs/sql-*",
        "",  # shares its name with no other
    ]
    assert document_groups(["a/x.md", "a/y.md", "b/z.md"]) == ["a/*", "a/*", "b/*"]
    assert document_groups(["x.md", "y.md"]) == ["", ""]


def test_a_group_label_leaves_out_only_a_folder_every_group_shares() -> None:
    """One group in an absolute folder is named by its name prefix alone (the folder names
    no part of the collection), and ids in no folder keep their whole prefix."""
    counter = get_token_counter("o200k_base")
    roots = [(f"Page {n}", f"Page {n} says what page {n} holds.") for n in range(40)]
    absolute = collection_outline(roots, ids=[f"/abs/docs/sql-{n}.html" for n in range(40)])
    bare = collection_outline(
        roots, ids=[f"{'sql' if n < 20 else 'tut'}-{n}.html" for n in range(40)]
    )
    assert absolute is not None and bare is not None
    shown = absolute.render(0, 40, target=40, counter=counter)
    assert shown is not None and shown.startswith("sql-* (40)"), shown
    both = bare.render(0, 40, target=40, counter=counter)
    assert both is not None and "sql-* (20)" in both and "tut-* (20)" in both, both
