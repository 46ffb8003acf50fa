"""Section context: every passage of a sectioned document is headed by its heading path, in
full ("full" headers) or what its own first line does not say ("compact")."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

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


def _shown_paths(window: wp.Window) -> list[str]:
    """Each passage's heading path as a compact window shows it: its header's path, then the
    heading its text starts with."""
    paths = []
    for item in window.items:
        assert item.kind == "chunk"
        header, _, body = (
            item.text.partition("\n") if item.text.startswith("[") else ("", "", item.text)
        )
        trail = [header[1:-1]] if header else []
        heading = re.match(r"#+ (.*?)#*$", body.split("\n", 1)[0])
        paths.append(" › ".join([*trail, *([heading.group(1)] if heading else [])]))
    return paths


def test_each_section_passage_carries_its_heading_path(empty_collection: wp.Collection) -> None:
    empty_collection.add([wp.Document(text=GUIDE, id="node/child_process.md", kind="markdown")])
    question = "what is the default maxBuffer of exec"
    window = empty_collection.pack(question, budget=100_000, headers="full")
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
    # Compact: the same paths, each heading said once (the passage's own first line), the
    # document's name once, in its header.
    compact = empty_collection.pack(question, budget=100_000, headers="compact")
    assert _shown_paths(compact) == [
        "Child process",
        "Child process › exec",
        "Child process › exec › options",
        "Child process › spawn",
        "Appendix",
    ]
    assert compact.text.count("node/child_process.md") == 1
    assert compact.text.startswith("## node/child_process.md\n\n# Child process\n")
    assert [i.span for i in compact.items] == [i.span for i in window.items]  # provenance


def test_pdf_outline_gives_passages_their_heading_paths(
    empty_collection: wp.Collection,
    tmp_path: Path,
    outlined_pdf: Callable[[list[str], list[tuple[str, int, int]]], bytes],
) -> None:
    outline = [("Intro", 0, 1), ("Methods", 1, 1), ("Setup", 2, 2)]
    pages = ["Why we looked at tapirs.", "How we counted them.", "Cameras at each river."]
    path = tmp_path / "paper.pdf"
    path.write_bytes(outlined_pdf(pages, outline))
    empty_collection.add_files([path])
    window = empty_collection.pack("cameras at rivers", budget=100_000, headers="full")
    headers = re.findall(r"^\[([^·\]]*) · chunk", window.text, re.M)
    assert headers == ["paper.pdf › Intro", "paper.pdf › Methods", "paper.pdf › Methods › Setup"]
    compact = empty_collection.pack("cameras at rivers", budget=100_000)
    assert _shown_paths(compact) == ["Intro", "Methods", "Methods › Setup"]


def test_html_headings_give_passages_their_heading_paths(
    empty_collection: wp.Collection, tmp_path: Path
) -> None:
    path = tmp_path / "cp.html"
    path.write_text(
        "<h1>Child process</h1><p>The module spawns subprocesses.</p>"
        "<h2>exec<a class='mark' href='#exec'>#</a></h2><p>Runs a command in a shell.</p>",
        encoding="utf-8",
    )
    empty_collection.add_files([path])
    window = empty_collection.pack("shell command", budget=100_000, headers="full")
    headers = re.findall(r"^\[([^·\]]*) · chunk", window.text, re.M)
    assert headers == ["cp.html › Child process", "cp.html › Child process › exec"]
    # Compact: the page's title (its first heading) is said once, by the passage that opens
    # with it (no document header to repeat it), and the sections under it say their own
    # headings (their paths below the title).
    compact = empty_collection.pack("shell command", budget=100_000)
    assert compact.text.startswith("# Child process\n\nThe module")
    assert compact.text.count("Child process") == 1
    assert _shown_paths(compact) == ["Child process", "exec"]
