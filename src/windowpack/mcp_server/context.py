"""What every tool and resource stands on: the store, who is calling, the server's limits."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context

from windowpack.api import Access, client_message
from windowpack.errors import (
    InvalidArgumentError,
    WindowpackError,
)
from windowpack.service import Collection, Store
from windowpack.text import TIKTOKEN_ENCODINGS, TokenCounter, get_token_counter

AccessOf = Callable[[Context[Any, Any]], Access]
"""Who makes one request: over HTTP its API key's access, over stdio the process's own."""


@dataclass(frozen=True)
class McpContext:
    """The store the server answers from, how a request's caller is found, and its limits.

    `local` is true over stdio: the caller is this machine's user, so `add` reads the files
    it names and a tokenizer may be a local tokenizer.json or .gguf path. Over HTTP, as over
    REST, the server opens no file a client names.
    """

    store: Store
    access_of: AccessOf
    local: bool
    max_budget: int
    max_k: int

    def access(self, ctx: Context[Any, Any]) -> Access:
        return self.access_of(ctx)

    def counter(self, tokenizer: str) -> TokenCounter:
        """The exact counter of the caller's tokenizer, within what this transport allows."""
        if not self.local and tokenizer not in TIKTOKEN_ENCODINGS:
            raise InvalidArgumentError(
                "tokenizer",
                f"over HTTP one of {', '.join(TIKTOKEN_ENCODINGS)} (a server opens no "
                f"tokenizer file a client names), got {tokenizer!r}",
            )
        return get_token_counter(tokenizer)

    def check_limit(self, argument: str, value: int, limit: int) -> None:
        """A size argument (budget, max_tokens, k) within the server's limit, as over REST."""
        if value > limit:
            raise InvalidArgumentError(argument, f"must be at most {limit:,} on this server")

    def writable(self, access: Access, name: str) -> Collection:
        """The collection `name` to write to, created by the write when it is new (as the
        library does) if the caller may create it: REST's rule (`Access.add_target`)."""
        return access.add_target(name)


def dumps(value: Any) -> str:
    """An answer's JSON: compact (an agent's context pays for every space), text unescaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def public_message(error: WindowpackError) -> str:
    """An error as a tool or a resource reports it: its code, then `client_message`."""
    return f"{error.code}: {client_message(error)}"
