"""The summary tree as resources: a collection's tree, then node by node from its root.

    windowpack://collections/{name}/tree            levels, node counts, tokens, the root
    windowpack://collections/{name}/nodes/{id}      a summary node: its text and children

Both take `?max_tokens=N&tokenizer=T` (default 4,000 o200k_base tokens) and keep within it as
the tools do: a node's children are cut to fit, saying how many were left out, and a text
too long for the bound even alone is cut at a token boundary (`"text_cut": true`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import asdict
from typing import Any, ParamSpec, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS

from windowpack.errors import InvalidArgumentError, StorageError, WindowpackError
from windowpack.mcp_server.context import McpContext, dumps, public_message
from windowpack.mcp_server.fit import DEFAULT_MAX_TOKENS, MIN_MAX_TOKENS, fit, left_out_note
from windowpack.text import TokenCounter
from windowpack.types import TreeNode, TreeOverview

TREE = "windowpack://collections/{name}/tree{?max_tokens,tokenizer}"
NODE = "windowpack://collections/{name}/nodes/{node_id}{?max_tokens,tokenizer}"
_JSON = "application/json"
_CUT_PIECES = 16
"""A text cut to fit is cut at one of this many token-aligned places of the bound."""

P = ParamSpec("P")
R = TypeVar("R")


def resource_errors(function: Callable[P, R]) -> Callable[P, R]:
    """windowpack's errors as the read's JSON-RPC error: invalid params for what the caller
    asked (a bad argument, an unknown collection or node), internal for the store's own."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return function(*args, **kwargs)
        except WindowpackError as error:
            code = INTERNAL_ERROR if isinstance(error, StorageError) else INVALID_PARAMS
            raise MCPError(code, public_message(error)) from error

    return wrapper


def register_resources(server: MCPServer[Any], context: McpContext) -> None:
    """Add the tree's resource templates to `server`, answering from `context`'s store."""

    @resource_errors
    def tree(
        name: str,
        ctx: Context[Any, Any],
        max_tokens: str = str(DEFAULT_MAX_TOKENS),
        tokenizer: str = "o200k_base",
    ) -> str:
        """The collection's summary tree: per level, node counts and tokens; read the root
        node's resource (`root`) and then its children to walk down to the chunks."""
        limit = _max_tokens(context, max_tokens)
        overview = context.access(ctx).read(name).tree()
        return _tree_answer(name, overview, context.counter(tokenizer), limit)

    @resource_errors
    def node(
        name: str,
        node_id: str,
        ctx: Context[Any, Any],
        max_tokens: str = str(DEFAULT_MAX_TOKENS),
        tokenizer: str = "o200k_base",
    ) -> str:
        """One summary node: its text, the chunks and characters it stands for, its parent
        and its children (nodes to read next, or chunks)."""
        limit = _max_tokens(context, max_tokens)
        found = context.access(ctx).read(name).node(_node_id(node_id))
        return _node_answer(name, found, context.counter(tokenizer), limit)

    for uri, function in ((TREE, tree), (NODE, node)):
        described = inspect.cleandoc(function.__doc__ or "")
        server.resource(uri, name=function.__name__, description=described, mime_type=_JSON)(
            function
        )


def _max_tokens(context: McpContext, given: str) -> int:
    if not given.isdigit() or int(given) < MIN_MAX_TOKENS:
        raise InvalidArgumentError(
            "max_tokens", f"must be a whole number of at least {MIN_MAX_TOKENS}, got {given!r}"
        )
    context.check_limit("max_tokens", int(given), context.max_budget)
    return int(given)


def _node_id(given: str) -> int:
    if not given.isdigit() or int(given) > 2**53:
        raise InvalidArgumentError("node_id", f"must be a node's number, got {given!r}")
    return int(given)


def _node_uri(collection: str, node_id: int | None) -> str | None:
    return None if node_id is None else f"windowpack://collections/{collection}/nodes/{node_id}"


def _tree_answer(name: str, overview: TreeOverview, counter: TokenCounter, limit: int) -> str:
    head = {key: value for key, value in asdict(overview).items() if key != "levels"}
    head["root"] = _node_uri(name, overview.root_id)
    levels = [asdict(level) for level in overview.levels]

    def render(shown: int) -> str:
        note = left_out_note(len(levels) - shown, "levels", limit)
        return dumps({**head, "levels": levels[:shown], **note})

    return fit(render, len(levels), counter=counter, max_tokens=limit).text


def _node_answer(name: str, node: TreeNode, counter: TokenCounter, limit: int) -> str:
    head = {key: value for key, value in asdict(node).items() if key not in ("text", "children")}
    head["parent"] = _node_uri(name, node.parent_id)
    children = [{**asdict(child), "uri": _node_uri(name, child.node_id)} for child in node.children]

    def render(shown: int) -> str:
        note = left_out_note(len(children) - shown, "children", limit)
        return dumps({**head, "text": node.text, "children": children[:shown], **note})

    if counter.count(render(0)) <= limit:
        return fit(render, len(children), counter=counter, max_tokens=limit).text
    # The text alone is over the bound: as much of it as fits, and no children.
    cuts = [0, *counter.cut_points(node.text, max(1, limit // _CUT_PIECES)), len(node.text)]

    def render_cut(pieces: int) -> str:
        note = left_out_note(len(children), "children", limit)
        text = node.text[: cuts[pieces]]
        return dumps({**head, "text": text, "text_cut": True, "children": [], **note})

    return fit(render_cut, len(cuts) - 1, counter=counter, max_tokens=limit).text
