"""The MCP server over its two transports, through the SDK's own client: stdio (a real child
process, `windowpack mcp`) and streamable HTTP (real uvicorn servers on loopback ports), with
REST's keys and scopes over HTTP, and replicas answering without session affinity."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_helpers import (
    CLI,
    FERRY,
    OWLS,
    SEALS,
    RoundRobin,
    answer_of,
    http_client,
    live_mcp,
    local_client,
    stdio_client,
    text_of,
    tokens,
)

import windowpack as wp
from cli_main import run_main
from live_uvicorn import free_port
from windowpack.config import StoreConfig

HASH = StoreConfig(embedder="hash", chunk_tokens=64)
TOOLS = {"pack", "search", "add", "collections"}
TREE = "windowpack://collections/{}/tree"


def _fill(store: wp.Store) -> wp.Store:
    """`default` holds the ferry, `birds` the owls and the seals."""
    store.collection("default").add([wp.Document(text=FERRY, id="ferry", title="Ferry")])
    store.collection("birds").add(
        [wp.Document(text=OWLS, id="owls"), wp.Document(text=SEALS, id="seals")]
    )
    return store


@pytest.fixture
def store_folder(tmp_path: Path) -> Path:
    """A filled store's folder, closed: a child process opens it."""
    with wp.open(tmp_path / "store", config=HASH) as store:
        _fill(store)
    return tmp_path / "store"


@pytest.fixture
def filled(tmp_path: Path) -> Iterator[wp.Store]:
    with wp.open(tmp_path / "store", config=HASH) as store:
        yield _fill(store)


async def test_over_stdio_a_client_lists_calls_every_tool_and_reads_the_tree(
    store_folder: Path,
) -> None:
    async with stdio_client(store_folder) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        added = answer_of(
            await client.call_tool(
                "add", {"text": "The generator is serviced in May.", "id": "gen"}
            )
        )
        hits = answer_of(await client.call_tool("search", {"question": "generator serviced"}))
        window = await client.call_tool(
            "pack", {"question": "when is the generator serviced?", "max_tokens": 150}
        )
        listed = answer_of(await client.call_tool("collections", {}))
        tree = json.loads((await client.read_resource(TREE.format("birds"))).contents[0].text)
    assert names == TOOLS
    assert added["added"] == 1 and hits["hits"][0]["document_id"] == "gen"
    assert "serviced in May" in text_of(window) and tokens(text_of(window)) <= 150
    assert {entry["name"]: entry["documents"] for entry in listed["collections"]} == {
        "birds": 2,
        "default": 2,
    }
    assert tree["documents"] == 2 and tree["root"].startswith("windowpack://collections/birds/")


async def test_over_stdio_a_key_holds_the_process_to_its_collections(store_folder: Path) -> None:
    with wp.open(store_folder, config=HASH) as store:
        secret = store.api_keys.create("agent", collections=["birds"], can_write=False).secret
    async with stdio_client(store_folder, "--key", secret) as client:
        listed = answer_of(await client.call_tool("collections", {}))
        hidden = await client.call_tool("pack", {"question": "ferry"})
        write = await client.call_tool("add", {"text": "More owls.", "collection": "birds"})
    assert [entry["name"] for entry in listed["collections"]] == ["birds"]
    assert hidden.is_error and "collections here: 'birds'" in text_of(hidden)
    assert write.is_error and "may read collection 'birds' but not write" in text_of(write)


async def test_over_http_a_client_calls_every_tool_and_reads_the_tree(
    filled: wp.Store, tmp_path: Path
) -> None:
    with live_mcp(filled) as url:
        async with http_client(url) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            added = answer_of(await client.call_tool("add", {"text": "Gulls nest on cliffs."}))
            hits = answer_of(
                await client.call_tool("search", {"question": "owls", "collection": "birds"})
            )
            window = await client.call_tool(
                "pack", {"question": "owls", "collections": ["birds"], "max_tokens": 120}
            )
            listed = answer_of(await client.call_tool("collections", {}))
            tree = json.loads((await client.read_resource(TREE.format("birds"))).contents[0].text)
            files = await client.call_tool("add", {"files": [str(tmp_path)]})
    assert names == TOOLS and added["added"] == 1
    assert hits["hits"][0]["document_id"] == "owls"
    assert "Barn owls" in text_of(window) and tokens(text_of(window)) <= 120
    assert [entry["name"] for entry in listed["collections"]] == ["birds", "default"]
    assert tree["documents"] == 2
    assert files.is_error and "invalid argument 'files'" in text_of(files)


async def test_over_http_a_key_scoped_to_another_collection_cannot_read_or_write_it(
    filled: wp.Store,
) -> None:
    birds = filled.api_keys.create("birds", collections=["birds"], can_write=True).secret
    reader = filled.api_keys.create("reader", collections=["default"], can_write=False).secret
    with live_mcp(filled) as url:
        async with http_client(url, key=birds) as client:
            listed = answer_of(await client.call_tool("collections", {}))
            read = await client.call_tool("pack", {"question": "ferry", "collections": ["default"]})
            searched = await client.call_tool("search", {"question": "ferry"})
            wrote = await client.call_tool(
                "add", {"text": "A ferry note.", "collection": "default"}
            )
            created = await client.call_tool("add", {"text": "x", "collection": "new"})
            own = answer_of(
                await client.call_tool("add", {"text": "Gulls.", "collection": "birds"})
            )
            with pytest.raises(MCPError, match="collections here: 'birds'"):
                await client.read_resource(TREE.format("default"))
        async with http_client(url, key=reader) as client:
            allowed = await client.call_tool("search", {"question": "ferry"})
            refused = await client.call_tool("add", {"text": "x"})
        # httpx's default 5 s would fire on a loaded machine: bounds that only catch a hang.
        anonymous = httpx.post(
            f"{url}/mcp", json={}, headers={"accept": "application/json"}, timeout=120
        )
        unknown = httpx.post(
            f"{url}/mcp", json={}, headers={"authorization": "Bearer wpk_nope"}, timeout=120
        )
    assert [entry["name"] for entry in listed["collections"]] == ["birds"]
    for answer in (read, searched):  # the 404 REST gives: 'default' is not named
        assert answer.is_error and "collection 'default' does not exist" in text_of(answer)
        assert "collections here: 'birds'" in text_of(answer)
    # A write out of the key's scope gets REST's answer (`Access.add_target`): the same 404
    # whether the collection exists ('default') or not ('new'), naming only 'birds'.
    for answer, name in ((wrote, "default"), (created, "new")):
        assert answer.is_error and f"collection '{name}' does not exist" in text_of(answer)
        assert "collections here: 'birds'" in text_of(answer)
    assert own["added"] == 1
    assert not allowed.is_error
    assert refused.is_error and "may read collection 'default' but not write" in text_of(refused)
    assert filled.collection("default").stats().documents == 1
    for response in (anonymous, unknown):  # REST's answer, before any MCP is spoken
        assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
        assert response.json()["error"]["code"] == "unauthorized"


async def test_replicas_answer_requests_without_session_affinity(store_folder: Path) -> None:
    ports = [free_port(), free_port()]
    replicas = [
        subprocess.Popen(
            [*CLI, "mcp", "--transport", "http", "--port", str(port), "--store", str(store_folder),
             "--embedder", "hash"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        for port in ports
    ]  # fmt: skip
    try:
        for port, replica in zip(ports, replicas, strict=True):
            _wait_until_up(port, replica)
        for mode in ("legacy", "auto"):  # the 2025 handshake, then per-request 2026 calls
            balancer = RoundRobin(ports)
            async with (
                httpx2.AsyncClient(transport=balancer, timeout=60) as http,
                Client(
                    streamable_http_client(f"http://127.0.0.1:{ports[0]}/mcp", http_client=http),
                    mode=mode,
                ) as client,
            ):
                listed = await client.list_tools()
                first = answer_of(await client.call_tool("search", {"question": "ferry"}))
                second = answer_of(await client.call_tool("collections", {}))
            assert {tool.name for tool in listed.tools} == TOOLS
            assert first["hits"][0]["document_id"] == "ferry" and len(second["collections"]) == 2
            assert set(balancer.sent_to) == set(ports), balancer.sent_to  # both answered
    finally:
        for replica in replicas:
            _stop(replica)


async def test_serve_mcp_answers_rest_and_mcp_in_one_process(
    store_folder: Path, tmp_path: Path
) -> None:
    port = free_port()
    server = subprocess.Popen(
        [*CLI, "serve", "--mcp", "--port", str(port), "--store", str(store_folder),
         "--embedder", "hash", "--no-warm-up"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "WINDOWPACK_UPLOAD_DIR": str(tmp_path / "uploads")},
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(port, server)
        assert server.stdout is not None
        assert server.stdout.readline().strip() == f"MCP server (streamable HTTP): {url}/mcp"
        rest = httpx.post(  # the first pack of a cold server: seconds under load
            f"{url}/v1/collections/default/pack",
            json={"query": "ferry", "budget": 200},
            timeout=120,
        )
        async with http_client(url) as client:
            window = await client.call_tool("pack", {"question": "ferry", "max_tokens": 200})
    finally:
        _stop(server)
    assert rest.status_code == 200 and "ferry" in rest.json()["text"]
    assert text_of(window) == rest.json()["text"]  # one facade, one window


@pytest.mark.model
async def test_the_real_model_finds_a_paraphrase(tmp_path: Path) -> None:
    with wp.open(tmp_path / "store") as store:
        store.collection("default").add(
            [
                wp.Document(text="The ferry to the island leaves at seven.", id="boat"),
                wp.Document(text="Barn owls hunt voles in the meadow at night.", id="birds"),
            ]
        )
        async with local_client(store) as client:
            hits = answer_of(
                await client.call_tool("search", {"question": "when does the boat depart", "k": 1})
            )
    assert hits["hits"][0]["document_id"] == "boat"


def test_windowpack_and_its_other_commands_never_import_the_sdk() -> None:
    code = (
        "import sys, windowpack, windowpack.cli, windowpack.api; "
        "print(','.join(m for m in ('mcp', 'windowpack.mcp_server') if m in sys.modules))"
    )
    loaded = subprocess.run([CLI[0], "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == ""


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--transport", "http", "--key", "wpk_x"], "--key"),
        (["--host", "0.0.0.0"], "--host"),
        (["--transport", "smoke"], "--transport"),
    ],
)
def test_the_command_names_an_option_that_does_not_apply(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    options: list[str],
    named: str,
) -> None:
    store = str(tmp_path / "store")
    code, _out, err = run_main(monkeypatch, capsys, "mcp", "--store", store, *options)
    assert code == 2 and named in err


def _wait_until_up(port: int, process: subprocess.Popen[str]) -> None:
    """Until the replica accepts connections on `port`, which uvicorn does once the app has
    started (seconds; the bound only catches a hang); fails if it died."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
    raise AssertionError(f"port {port} did not answer within 180 s")


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    process.wait(timeout=30)
    if process.stdout is not None:
        process.stdout.close()
