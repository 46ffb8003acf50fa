"""Headings and heading paths: the rules chunking, passage headers and overviews share."""

from __future__ import annotations

import itertools

import pytest

from windowpack.documents.sections import (
    Heading,
    heading_starts,
    parse_heading,
    section_paths,
    shortened_path,
)
from windowpack.types import Span


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("# Child process", Heading(level=1, title="Child process")),
        (
            "### `child_process.exec(command[, options])`",
            Heading(level=3, title="child_process.exec(command[, options])"),
        ),
        ("## Child process#", Heading(level=2, title="Child process")),  # html2text's anchor mark
        ("## [exec](#exec) options ##", Heading(level=2, title="exec options")),
        ("#### `__dirname` and **bold**", Heading(level=4, title="__dirname and bold")),
        ("#hashtag", None),
        ("####### seven", None),
        ("#    ", None),
        ("plain text", None),
    ],
)
def test_parse_heading(line: str, expected: Heading | None) -> None:
    assert parse_heading(line) == expected


def test_heading_starts_ignore_hash_lines_in_code_blocks() -> None:
    text = "# A\ntext\n```\n# comment\n```\n## B\n"
    assert heading_starts(text, 0, len(text), include_start=True) == [0, text.index("## B")]
    assert heading_starts(text, 0, len(text)) == [text.index("## B")]


def test_section_paths_follow_heading_levels() -> None:
    text = "intro\n# A\na\n## B\nb\n### C\nc\n## D\nd\n# E\ne"
    starts = [0, *heading_starts(text, 0, len(text)), len(text)]
    sections = [Span(start=s, end=e) for s, e in itertools.pairwise(starts)]
    assert section_paths("doc.md", text, sections) == [
        "doc.md",
        "doc.md › A",
        "doc.md › A › B",
        "doc.md › A › B › C",
        "doc.md › A › D",
        "doc.md › E",
    ]


def test_a_long_path_is_shortened_in_the_middle() -> None:
    path = shortened_path(["doc.md", "x" * 200, "last"])
    assert len(path) <= 120 and path.startswith("doc.md › x") and path.endswith("x › last")
    assert "…" in path
