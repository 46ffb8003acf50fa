"""Helpers for the MCP server tests (imported by name: the test folders are not packages)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

import windowpack as wp
from live_uvicorn import served
from windowpack.api import Access, ApiSettings
from windowpack.mcp_server import build_server
from windowpack.text import get_token_counter

FERRY = "The ferry to the island leaves at seven and returns at noon. " * 12
OWLS = "Barn owls hunt voles in the meadow at night. " * 12
SEALS = "Harbour seals rest on sandbanks at low tide. " * 12


def local_client(store: wp.Store, *, local: bool = True) -> Client:
    """The SDK's client in this process, on a server acting as the local user; `local=False`
    holds it to what an HTTP caller may ask (no file paths)."""
    server = build_server(store, access_of=lambda _ctx: Access(store, None), local=local)
    return Client(server)


def text_of(result: CallToolResult) -> str:
    """A tool's answer: exactly one text block."""
    assert len(result.content) == 1, result.content
    block = result.content[0]
    assert isinstance(block, TextContent), block
    return block.text


def answer_of(result: CallToolResult) -> Any:
    """A tool's JSON answer, checked to be no error."""
    assert not result.is_error, text_of(result)
    return json.loads(text_of(result))


def tokens(text: str, tokenizer: str = "o200k_base") -> int:
    return get_token_counter(tokenizer).count(text)


@contextmanager
def live_mcp(store: wp.Store) -> Iterator[str]:
    """The MCP server alone over `store`, served by a real uvicorn server on a free loopback
    port in this process: its base URL."""
    from windowpack.mcp_server import create_app

    with served(lambda port: create_app(ApiSettings(port=port), store=store)) as port:
        yield f"http://127.0.0.1:{port}"


@asynccontextmanager
async def http_client(url: str, *, key: str | None = None) -> AsyncIterator[Client]:
    """The SDK's client, connected over streamable HTTP to `url`'s /mcp, sending `key` as a
    bearer token."""
    headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client,
    ):
        yield client


def stdio_client(store_folder: Path, *options: str) -> Client:
    """The SDK's client, starting `windowpack mcp` over `store_folder` (hash embedder) as its
    child process and talking to it on stdin and stdout."""
    # The SDK hands a child only a few safe variables; a checkout's sources must still win.
    env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else None
    command = [*CLI, "mcp", "--store", str(store_folder), "--embedder", "hash", *options]
    return Client(StdioServerParameters(command=command[0], args=command[1:], env=env))


CLI = [sys.executable, "-c", "from windowpack.cli import main; main()"]
"""`windowpack` as the console script runs it, in this interpreter."""


class RoundRobin(httpx2.AsyncBaseTransport):
    """A load balancer without session affinity: each request goes to the next replica."""

    def __init__(self, ports: list[int]) -> None:
        self.ports = ports
        self.sent_to: list[int] = []
        self._inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        port = self.ports[len(self.sent_to) % len(self.ports)]
        self.sent_to.append(port)
        request.url = request.url.copy_with(port=port)
        request.headers["host"] = f"127.0.0.1:{port}"
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()
