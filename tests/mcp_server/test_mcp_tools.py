"""The MCP tools and resources through the SDK's own client, in this process (the fast tier;
the stdio and HTTP transports are tests/mcp_server/test_mcp_transports.py).

Every answer is checked to fit `max_tokens` by counting it again, exactly, in the caller's
tokenizer; a cut answer says how much it left out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError
from mcp_helpers import FERRY, OWLS, SEALS, answer_of, local_client, text_of, tokens

import windowpack as wp
from windowpack.mcp_server import DEFAULT_MAX_TOKENS
from windowpack.mcp_server.resources import _node_answer
from windowpack.text import get_token_counter
from windowpack.types import TreeChild, TreeNode

TOOLS = {"pack", "search", "add", "collections"}


@pytest.fixture
def filled(hash_store: wp.Store) -> wp.Store:
    """A store whose `default` collection holds three documents, with metadata."""
    hash_store.collection("default").add(
        [
            wp.Document(text=FERRY, id="ferry", title="Ferry", metadata={"team": "ops"}),
            wp.Document(text=OWLS, id="owls", title="Owls", metadata={"team": "birds"}),
            wp.Document(text=SEALS, id="seals", title="Seals", metadata={"team": "birds"}),
        ]
    )
    return hash_store


async def test_the_tools_say_what_each_argument_is(hash_store: wp.Store) -> None:
    async with local_client(hash_store) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40, tool.name
        properties = tool.input_schema["properties"]
        assert {"max_tokens", "tokenizer"} <= set(properties), tool.name
        undescribed = [name for name, schema in properties.items() if not schema.get("description")]
        assert undescribed == [], (tool.name, undescribed)
        assert properties["max_tokens"]["default"] == DEFAULT_MAX_TOKENS
    assert tools["pack"].input_schema["required"] == ["question"]
    assert "$in" in tools["pack"].input_schema["properties"]["filter"]["description"]
    assert tools["pack"].annotations is not None and tools["pack"].annotations.read_only_hint
    assert tools["add"].annotations is not None and not tools["add"].annotations.read_only_hint


async def test_add_then_search_pack_and_list(hash_store: wp.Store) -> None:
    async with local_client(hash_store) as client:
        added = answer_of(await client.call_tool("add", {"text": FERRY, "id": "ferry"}))
        answer_of(await client.call_tool("add", {"text": OWLS, "collection": "birds"}))
        hits = answer_of(
            await client.call_tool("search", {"question": "when does the ferry leave", "k": 3})
        )
        window = await client.call_tool(
            "pack", {"question": "when does the ferry leave", "collections": ["default", "birds"]}
        )
        listed = answer_of(await client.call_tool("collections", {}))
    assert added["added"] == 1 and added["collection"] == "default" and added["chunks"] > 0
    assert hits["hits"][0]["document_id"] == "ferry" and "note" not in hits
    assert "The ferry to the island" in text_of(window)
    assert window.meta is not None and window.meta["windowpack/tokens"] == tokens(text_of(window))
    assert [entry["name"] for entry in listed["collections"]] == ["birds", "default"]
    assert hash_store.collection("birds", create=False).stats().documents == 1


async def test_a_pack_over_max_tokens_is_packed_to_it(filled: wp.Store) -> None:
    async with local_client(filled) as client:
        result = await client.call_tool(
            "pack", {"question": "seals and owls", "budget": 5000, "max_tokens": 300}
        )
        larger = await client.call_tool(
            "pack", {"question": "seals and owls", "budget": 5000, "max_tokens": 5000}
        )
    text = text_of(result)
    assert 250 < tokens(text) <= 300  # a window packed to min(budget, max_tokens)
    assert result.meta is not None and result.meta["windowpack/budget"] == 300
    assert tokens(text_of(larger)) > 300  # what max_tokens held back was there to pack


async def test_search_hits_over_max_tokens_are_left_out_and_counted(filled: wp.Store) -> None:
    async with local_client(filled) as client:
        found = answer_of(await client.call_tool("search", {"question": "ferry", "k": 20}))
        result = await client.call_tool(
            "search", {"question": "ferry", "k": 20, "max_tokens": 200, "tokenizer": "cl100k_base"}
        )
    cut = answer_of(result)
    assert tokens(text_of(result), "cl100k_base") <= 200
    assert 0 < len(cut["hits"]) < len(found["hits"]) == cut["found"]
    assert cut["hits"] == found["hits"][: len(cut["hits"])]  # the best ones, in order
    left_out = cut["found"] - len(cut["hits"])
    assert cut["note"] == f"{left_out} hits left out to stay within max_tokens=200"


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [
        ("pack", {"question": "x", "budget": 0}, "budget"),
        ("pack", {"question": "x", "max_tokens": 5}, "max_tokens"),
        ("pack", {"question": "x", "max_tokens": 2_000_000}, "max_tokens"),
        ("pack", {"question": "x", "filter": {"year": {"$gt": "soon"}}}, "filter.year.$gt"),
        ("pack", {"question": "x", "headers": "loud"}, "headers"),
        ("pack", {"question": "x", "tokenizer": "no-such-tokenizer"}, "tokenizer"),
        ("pack", {"question": "", "collections": ["default"]}, "question"),
        ("search", {"question": "x", "k": 5000}, "k"),
        ("search", {"question": "x", "collection": "nope"}, "nope"),
        ("add", {"collection": "default"}, "text"),
        ("add", {"text": "x", "files": ["a.txt"]}, "files"),
        ("add", {"files": ["a.txt"], "title": "Notes"}, "'title'"),
        ("add", {"text": "x", "metadata": {"note": "a\x00b"}}, "metadata.note"),
        ("collections", {"max_tokens": "lots"}, "max_tokens"),
    ],
)
async def test_a_bad_argument_is_a_tool_error_naming_it(
    filled: wp.Store, tool: str, arguments: dict[str, object], named: str
) -> None:
    async with local_client(filled) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error
    assert named in text_of(result), text_of(result)


async def test_over_http_rules_no_file_or_tokenizer_path_is_opened(
    filled: wp.Store, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nThe generator is serviced in May.", encoding="utf-8")
    tokenizer_json = tmp_path / "tokenizer.json"
    tokenizer_json.write_text("{}", encoding="utf-8")
    async with local_client(filled, local=False) as client:
        files = await client.call_tool("add", {"files": [str(notes)]})
        tokenizer = await client.call_tool(
            "search", {"question": "x", "tokenizer": str(tokenizer_json)}
        )
    assert files.is_error and "over HTTP the server opens no file" in text_of(files)
    assert tokenizer.is_error and "invalid argument 'tokenizer'" in text_of(tokenizer)
    assert filled.collection("default").stats().documents == 3


async def test_over_stdio_files_are_added_by_path(hash_store: wp.Store, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Generator\n\nThe generator is serviced in May.", "utf-8")
    (folder / "b.bin").write_bytes(b"\x00\x01")
    async with local_client(hash_store) as client:
        added = answer_of(await client.call_tool("add", {"files": [str(folder)]}))
    assert added["added"] == 1
    assert [note["skipped"] for note in added["notes"]] == ["notes/b.bin"]


async def test_a_filter_keeps_only_matching_documents(filled: wp.Store) -> None:
    question = "ferry owls seals"
    async with local_client(filled) as client:
        result = await client.call_tool(
            "search", {"question": question, "k": 20, "filter": {"team": "birds"}}
        )
        packed = await client.call_tool(
            "pack", {"question": question, "budget": 2000, "filter": {"team": {"$ne": "birds"}}}
        )
    hits = answer_of(result)["hits"]
    assert hits and {hit["document_id"] for hit in hits} <= {"owls", "seals"}
    window = text_of(packed)
    expected = filled.collection("default").pack(
        question, budget=2000, where={"team": {"$ne": "birds"}}
    )
    assert window == expected.text and "Ferry" in window
    assert OWLS[:40] not in window and SEALS[:40] not in window


async def test_the_tree_and_its_nodes_are_resources(filled: wp.Store) -> None:
    async with local_client(filled) as client:
        templates = (await client.list_resource_templates()).resource_templates
        tree = json.loads((await client.read_resource(_tree("default"))).contents[0].text)
        root = await client.read_resource(tree["root"])
        node = json.loads(root.contents[0].text)
    assert {template.name for template in templates} == {"tree", "node"}
    assert tree["documents"] == 3 and tree["levels"]
    assert node["id"] == tree["root_id"] and node["text"] and node["children"]
    child = node["children"][0]
    assert child["uri"] == (
        None
        if child["node_id"] is None
        else f"windowpack://collections/default/nodes/{child['node_id']}"
    )


async def test_a_node_over_max_tokens_is_cut_to_fit(filled: wp.Store) -> None:
    async with local_client(filled) as client:
        tree = json.loads((await client.read_resource(_tree("default"))).contents[0].text)
        whole = json.loads((await client.read_resource(tree["root"])).contents[0].text)
        cut = (await client.read_resource(f"{tree['root']}?max_tokens=100")).contents[0].text
    assert tokens(json.dumps(whole, ensure_ascii=False, separators=(",", ":"))) > 100
    assert tokens(cut) <= 100
    shown = json.loads(cut)
    left_out = len(whole["children"]) - len(shown["children"])
    assert left_out > 0 and shown["note"].startswith(f"{left_out} children left out")


async def test_resource_errors_name_what_is_wrong(filled: wp.Store) -> None:
    async with local_client(filled) as client:
        for uri, named in [
            (_tree("nope"), "'nope' does not exist"),
            (f"{_tree('default')}?max_tokens=few", "max_tokens"),
            ("windowpack://collections/default/nodes/x1", "node_id"),
        ]:
            with pytest.raises(MCPError, match=named):
                await client.read_resource(uri)


def _tree(collection: str) -> str:
    return f"windowpack://collections/{collection}/tree"


def test_a_node_whose_text_alone_is_over_max_tokens_is_cut_at_a_token_boundary() -> None:
    text = "The ferry to the island leaves at seven and returns at noon. " * 40
    children = [
        TreeChild(kind="chunk", node_id=None, document_id="ferry", ordinal=i, tokens=12)
        for i in range(30)
    ]
    node = TreeNode(
        id=7, level=1, document_id="ferry", parent_id=None, leaf_start=0, leaf_end=30,
        char_start=0, char_end=len(text), text=text, tokens=480, summarizer="test",
        children=children,
    )  # fmt: skip
    answer = _node_answer("default", node, get_token_counter("o200k_base"), 200)
    shown = json.loads(answer)
    assert tokens(answer) <= 200
    assert shown["text_cut"] is True and text.startswith(shown["text"]) and shown["text"]
    assert shown["children"] == [] and shown["note"].startswith("30 children left out")
