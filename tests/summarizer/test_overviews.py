"""Overviews that help: a chat's overview indexes its requests, a document's is its table of
contents with lead sentences, and no summary of real technical docs quotes code or tables."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import windowpack as wp
from windowpack.config import StoreConfig

NODE_DOCS = Path("/usr/share/doc/nodejs/api")
# The modules whose summaries the issue quoted (root, zlib, readline) and two more.
NODE_MODULES = ["child_process", "path", "readline", "zlib"]
MARKUP = re.compile(r"```|<td|<tr|<kbd|\|\s*-{3}|=>|^\s*//|[{;]\s*$|^\s*[})]|^\s*\|")


def overview(window: wp.Window) -> str:
    """The query-independent tier: everything before the first document's header."""
    return window.text.split("\n## ", 1)[0]


def test_a_chat_overview_lists_the_turns_requests_with_their_numbers(
    empty_collection: wp.Collection,
) -> None:
    messages = []
    for i in range(40):
        messages += [
            {"role": "user", "content": f"Write a limerick about lantern number {i}."},
            {"role": "assistant", "content": f"Reply {i} rhymes. " + "A glow on the quay. " * 25},
        ]
    empty_collection.add_conversation(messages)
    window = empty_collection.pack(
        "the third limerick about lanterns", budget=4_000, overview_tokens=500
    )
    tier = overview(window)
    listed = re.findall(r"^turn (\d+): Write (?:a )?limerick", tier, re.M)
    assert len(listed) >= 5, tier
    assert [int(n) for n in listed] == sorted(int(n) for n in listed)
    # The requests, never sentences of the replies.
    assert "Reply" not in tier and "glow on the quay" not in tier


def test_a_document_overview_is_its_table_of_contents_with_lead_sentences(
    empty_collection: wp.Collection,
) -> None:
    sections = []
    for name in ["exec", "spawn", "fork"]:
        body = f"The {name} function starts a child process. " + "It has options. " * 200
        sections.append(f"## {name}\n\n{body}\n\n```js\n{name}('ls');\n```")
    text = "# Child process\n\nThe module spawns subprocesses.\n\n" + "\n\n".join(sections)
    empty_collection.add([wp.Document(text=text, id="cp.md", kind="markdown")])
    tier = overview(empty_collection.pack("fork options", budget=2_000, overview_tokens=250))
    assert "Child process: The module spawns subprocesses." in tier
    for name in ["exec", "spawn", "fork"]:
        # Below a node's first line, the path it shares with it is not repeated.
        assert re.search(f"^(Child process › )?{name}: The {name} function starts", tier, re.M)
    assert "```" not in tier


@pytest.mark.parametrize("module", NODE_MODULES)
def test_node_docs_summaries_are_prose(module: str, node_collection: wp.Collection) -> None:
    """The issue's symptoms: the root read `// Returns: 'C:\\\\path…'`, zlib's `(err, buffer)
    => { ### zlib constants`, readline's `<td><kbd>Ctrl</kbd>…`."""
    root = node_collection.node(node_collection.tree().root_id or 0)
    document_roots = {
        child.document_id: node_collection.node(child.node_id)
        for child in root.children
        if child.node_id is not None
    }
    summary = document_roots[f"node/{module}.md"].text
    for text in (root.text, summary):
        lines = [line for line in text.split("\n") if line.strip()]
        assert lines, text
        for line in lines:
            assert not MARKUP.search(line), line
            assert len(re.findall(r"[A-Za-z]{2,}", line)) >= 3, line
    assert summary.startswith(f"{summary.split(':', 1)[0]}: The `node:{module}` module")


@pytest.fixture(scope="module")
def node_collection(tmp_path_factory: pytest.TempPathFactory) -> Iterator[wp.Collection]:
    if not NODE_DOCS.is_dir():
        pytest.skip(f"Node.js docs absent: {NODE_DOCS} (Debian's nodejs-doc package)")
    root = tmp_path_factory.mktemp("node")
    (root / "node").mkdir()
    for module in NODE_MODULES:
        shutil.copy(NODE_DOCS / f"{module}.md", root / "node" / f"{module}.md")
    # The default chunk size, as a user's store has it; the hash embedder keeps it fast.
    with wp.open(root / "store", config=StoreConfig(embedder="hash")) as store:
        collection = store.collection("node")
        collection.add_files([root / "node"])
        yield collection
