"""Prose and markup: which lines and sentences a summary may quote."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windowpack.summarizer.extractive import ExtractiveSummarizer
from windowpack.summarizer.prose import is_prose_line, lead_sentence, prose_runs
from windowpack.text.tokens import TokenCounter, get_token_counter

# Lines the issue found in summaries of Node's docs, and their kin.
MARKUP_LINES = [
    "// Returns: 'C:\\\\path\\\\dir\\\\file.txt'",
    "zlib.deflate(input, (err, buffer) => {",
    "### zlib constants",
    "<td><kbd>Ctrl</kbd>+<kbd>Shift</kbd>+<kbd>Backspace</kbd></td>",
    "<tr>",
    "| Option | Default | Description |",
    "|---|---|---|",
    "| --- | :---: |",
    "* [Assertion testing](assert.md)",
    "* [Buffer](buffer.md) · [C++ addons](addons.md)",
    "[`child_process.exec()`]: #child_processexeccommand-options-callback",
    "const { exec } = require('node:child_process');",
    "});",
    "$ node --inspect index.js",
    "<!-- YAML -->",
    "  }",
]
PROSE_LINES = [
    "The `node:zlib` module provides compression functionality implemented using Gzip.",
    "Spawns a shell then executes the command within that shell, buffering any output.",
    "* `maxBuffer` {number} Largest amount of data in bytes allowed on stdout or",
    "stderr. If exceeded, the child process is terminated and any output is",
    "See the [readline] documentation for the keys that move the cursor, in detail.",
]


@cache
def counter() -> TokenCounter:
    return get_token_counter("o200k_base")


@pytest.mark.parametrize("line", MARKUP_LINES)
def test_markup_lines_are_not_prose(line: str) -> None:
    assert not is_prose_line(line)


@pytest.mark.parametrize("line", PROSE_LINES)
def test_prose_lines_are_prose(line: str) -> None:
    assert is_prose_line(line)


def test_code_blocks_and_html_comments_are_never_prose() -> None:
    text = (
        "Intro sentence about the module and what it does.\n"
        "<!-- YAML\nadded: v0.1.90\nchanges:\n"
        "  - version: v8.8.0 description: Some words here\n-->\n"
        "```js\nThis line looks like prose but it is inside a code block.\n```\n"
        "Closing sentence that explains the example above in words."
    )
    runs = [text[run.start : run.end] for run in prose_runs(text, 0, len(text))]
    assert runs == [
        "Intro sentence about the module and what it does.",
        "Closing sentence that explains the example above in words.",
    ]


def test_lead_sentence_skips_markup_to_the_first_prose_sentence() -> None:
    text = "<!-- YAML\nadded: v0.5.0\n-->\n\n```js\nconst a = 1;\n```\n\nIt adds one. More."
    lead = lead_sentence(text, 0, len(text))
    assert lead is not None and text[lead.start : lead.end] == "It adds one."


PROSE = [
    "The module compresses data with the deflate algorithm.",
    "Each stream emits an event when its data has been flushed.",
    "Callers choose the compression level when they create the stream.",
    "Errors are reported through the callback instead of being thrown.",
    "Large inputs are processed in chunks to keep memory use bounded.",
]
prose_sentence = st.sampled_from(PROSE)
markup_line = st.sampled_from(MARKUP_LINES)


@settings(max_examples=60, deadline=None)
@given(
    children=st.lists(
        st.lists(st.one_of(prose_sentence, markup_line, markup_line), min_size=1, max_size=12).map(
            "\n".join
        ),
        min_size=1,
        max_size=8,
    ),
    target=st.integers(min_value=8, max_value=120),
)
def test_no_summary_line_is_markup_when_the_node_has_prose(
    children: list[str], target: int
) -> None:
    """A summary of a node with any prose sentence quotes no code, table or link line."""
    # Before, word statistics alone chose: code and table lines won them often.
    summary = ExtractiveSummarizer().summarize(children, target_tokens=target, counter=counter())
    assert counter().count(summary) <= target
    has_prose = any(line in PROSE for child in children for line in child.split("\n"))
    # A node that already fits is its own summary: nothing was chosen.
    fits = counter().count("\n".join(child.strip() for child in children)) <= target
    if has_prose and not fits:
        for line in summary.split("\n"):
            assert line not in MARKUP_LINES, summary
            assert not any(markup in line for markup in ("=>", "<td>", "|---|", "](", "//"))
