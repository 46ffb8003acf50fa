"""Section context: every passage of a sectioned document is headed by its heading path."""

from __future__ import annotations

import re

import windowpack as wp

GUIDE = """# Child process

The module spawns subprocesses.

## exec

Spawns a shell and runs a command in it.

### options

* `maxBuffer` {integer} Largest amount of data allowed on stdout or stderr.
  **Default:** `1024 * 1024`. If exceeded, the child process is terminated.

## spawn

Spawns a process without a shell.

# Appendix

Unrelated closing words about licensing and history of the project.
"""


def test_each_section_passage_carries_its_heading_path(empty_collection: wp.Collection) -> None:
    empty_collection.add([wp.Document(text=GUIDE, id="node/child_process.md", kind="markdown")])
    window = empty_collection.pack("what is the default maxBuffer of exec", budget=100_000)
    headers = re.findall(r"^\[(node/child_process\.md[^·]*) · chunk", window.text, re.M)
    assert headers == [
        "node/child_process.md › Child process",
        "node/child_process.md › Child process › exec",
        "node/child_process.md › Child process › exec › options",
        "node/child_process.md › Child process › spawn",
        "node/child_process.md › Appendix",
    ]
    options = next(item for item in window.items if "maxBuffer" in item.text)
    # The whole section, so the option's name, its default and the heading come together.
    assert "### options" in options.text and "If exceeded" in options.text
