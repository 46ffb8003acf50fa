"""The four tools: `pack`, `search`, `add`, `collections`; thin calls over the facade.

Each answer is one text block of at most `max_tokens` tokens of the caller's `tokenizer`,
counted exactly (`fit`): a pack's window is packed to `min(budget, max_tokens)`, and a
list (hits, collections, an add's notes) shows as many of its items as fit and says how
many it left out. A windowpack error becomes the tool's error, its code first and its
message naming the argument (`invalid_argument: invalid argument 'filter': ...`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any, ParamSpec, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from windowpack.errors import InvalidArgumentError, WindowpackError
from windowpack.filters import parse_filter
from windowpack.mcp_server.context import McpContext, dumps, public_message
from windowpack.mcp_server.fit import (
    DEFAULT_MAX_TOKENS,
    MIN_MAX_TOKENS,
    Fitted,
    fit,
    left_out_note,
)
from windowpack.types import Document, HeaderStyle, Hit, IngestReport

Question = Annotated[
    str,
    Field(min_length=1, max_length=20_000, description="The question, or keywords to look for."),
]
CollectionName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="Collection name (the `collections` tool lists them).",
    ),
]
Tokenizer = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4096,
        description="The tokenizer of the model that reads the answer: o200k_base (GPT-4o "
        "and later) or cl100k_base; over stdio also the path of a local tokenizer.json or "
        ".gguf file. Budgets and max_tokens are counted exactly in it.",
    ),
]
MaxTokens = Annotated[
    int,
    Field(
        strict=True,
        ge=MIN_MAX_TOKENS,
        description="The most tokens this tool's whole answer may take, counted exactly in "
        "`tokenizer`; what does not fit is left out and the answer says how much.",
    ),
]
MetadataFilter = Annotated[
    dict[str, Any] | None,
    Field(
        description="Only documents whose metadata match, in Chroma's `where` shape: "
        '{"team": "ops"}, {"year": {"$gte": 2020}}, {"date": {"$lt": "2024-06-01"}}, '
        '{"team": {"$in": ["ops", "infra"]}}, {"$and": [...]}, {"$or": [...]}, {"$not": {...}}. '
        "Operators: $eq $ne $gt $gte $lt $lte $in $nin $contains $exists.",
    ),
]

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

P = ParamSpec("P")
R = TypeVar("R")


def tool_errors(function: Callable[P, R]) -> Callable[P, R]:
    """windowpack's errors as the tool's error (`public_message`)."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return function(*args, **kwargs)
        except WindowpackError as error:
            raise ToolError(public_message(error)) from error

    return wrapper


def answer(fitted: Fitted, tokenizer: str, *, budget: int | None = None) -> CallToolResult:
    """One text block; its exact size (and a window's budget) in `_meta`, for the host."""
    details: dict[str, Any] = {
        "windowpack/tokens": fitted.tokens,
        "windowpack/tokenizer": tokenizer,
    }
    if budget is not None:
        details["windowpack/budget"] = budget
    return CallToolResult(content=[TextContent(type="text", text=fitted.text)], _meta=details)


def register_tools(server: MCPServer[Any], context: McpContext) -> None:
    """Add the four tools to `server`, answering from `context`'s store."""

    @tool_errors
    def pack(
        question: Question,
        ctx: Context[Any, Any],
        collections: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=64)]],
            Field(
                min_length=1,
                max_length=100,
                description="The collections to pack from; the budget follows relevance "
                "across them.",
            ),
        ] = ["default"],  # noqa: B006 (pydantic copies defaults; this one is never mutated)
        budget: Annotated[
            int | None,
            Field(
                strict=True,
                ge=1,
                description="The window's budget in tokens (default and at most: max_tokens).",
            ),
        ] = None,
        tokenizer: Tokenizer = "o200k_base",
        filter: MetadataFilter = None,  # noqa: A002 (the argument's name in the MCP schema)
        headers: Annotated[
            HeaderStyle,
            Field(
                description="What the window says around its passages: compact (each "
                "document's title once), full (every passage's document, position and "
                "heading path) or none."
            ),
        ] = "compact",
        max_tokens: MaxTokens = DEFAULT_MAX_TOKENS,
    ) -> CallToolResult:
        """The best context for a question, in at most min(budget, max_tokens) tokens: the
        passages that answer it verbatim, summaries of the rest of the corpus, in document
        order, each under its document's title. Put the answer in your context and read it
        before answering; ask again with a larger budget if it is not enough."""
        context.check_limit("max_tokens", max_tokens, context.max_budget)
        window_budget = min(budget or max_tokens, max_tokens)
        counter = context.counter(tokenizer)
        where = parse_filter(filter, "filter")
        access = context.access(ctx)
        for name in collections:
            access.read(name)
        store = access.store
        window = store.pack(
            question,
            collections=collections,
            budget=window_budget,
            tokenizer=tokenizer,
            headers=headers,
            where=where,
        )
        if window.text:  # counted exactly by the packer, within window_budget <= max_tokens
            fitted = Fitted(window.text, len(window.items), window.tokens)
        else:
            reason = f"(an empty window: {window.reason or 'nothing to pack'})"
            fitted = fit(lambda _shown: reason, 0, counter=counter, max_tokens=max_tokens)
        return answer(fitted, tokenizer, budget=window_budget)

    @tool_errors
    def search(
        question: Question,
        ctx: Context[Any, Any],
        collection: CollectionName = "default",
        k: Annotated[
            int, Field(strict=True, ge=1, description="How many hits to look for, best first.")
        ] = 10,
        filter: MetadataFilter = None,  # noqa: A002 (the argument's name in the MCP schema)
        tokenizer: Tokenizer = "o200k_base",
        max_tokens: MaxTokens = DEFAULT_MAX_TOKENS,
    ) -> CallToolResult:
        """The passages most relevant to a question or keywords, best first, verbatim, each
        with its document, title, position and score (JSON). Hits that do not fit in
        max_tokens are left out, and the answer says how many."""
        context.check_limit("k", k, context.max_k)
        context.check_limit("max_tokens", max_tokens, context.max_budget)
        counter = context.counter(tokenizer)
        where = parse_filter(filter, "filter")
        found = context.access(ctx).read(collection)
        hits = [_hit(hit) for hit in found.search(question, k, where=where)]

        def render(shown: int) -> str:
            note = left_out_note(len(hits) - shown, "hits", max_tokens)
            return dumps({"hits": hits[:shown], "found": len(hits), **note})

        return answer(fit(render, len(hits), counter=counter, max_tokens=max_tokens), tokenizer)

    @tool_errors
    def add(
        ctx: Context[Any, Any],
        collection: CollectionName = "default",
        text: Annotated[
            str | None, Field(min_length=1, description="The text of one document to add.")
        ] = None,
        id: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=1024,
                description="The document's stable id: adding the same id again replaces it "
                "(default: derived from the text).",
            ),
        ] = None,
        title: Annotated[str | None, Field(max_length=1024, description="Its title.")] = None,
        metadata: Annotated[
            dict[str, Any] | None,
            Field(description='Its metadata (what `filter` matches on), e.g. {"team": "ops"}.'),
        ] = None,
        files: Annotated[
            list[Annotated[str, Field(min_length=1)]] | None,
            Field(
                min_length=1,
                max_length=10_000,
                description="Over stdio only: paths of files and folders on this machine "
                "(text, markdown, html, pdf, json, jsonl) to add instead of `text`; each "
                "file's id is its path.",
            ),
        ] = None,
        tokenizer: Tokenizer = "o200k_base",
        max_tokens: MaxTokens = DEFAULT_MAX_TOKENS,
    ) -> CallToolResult:
        """Add a document (`text`) or files to a collection, created by its first add;
        a document whose id exists is replaced. Answers what was added (JSON)."""
        context.check_limit("max_tokens", max_tokens, context.max_budget)
        counter = context.counter(tokenizer)
        target = context.writable(context.access(ctx), collection)
        if files is not None:
            if text is not None:
                raise InvalidArgumentError("files", "give `text` or `files`, not both")
            for name, value in (("id", id), ("title", title), ("metadata", metadata)):
                if value is not None:
                    raise InvalidArgumentError(
                        name, "describes `text`; with `files` each file's id is its path"
                    )
            if not context.local:
                raise InvalidArgumentError(
                    "files",
                    "over HTTP the server opens no file a client names: send a file's text "
                    "as `text`, or upload files to the REST API (POST .../files)",
                )
            report = target.add_files(files)
        elif text is None:
            raise InvalidArgumentError("text", "give the text of a document to add (or `files`)")
        else:
            document = Document(text=text, id=id, title=title, metadata=metadata or {})
            report = target.add([document])
        notes = _report_notes(report)
        summary = {"collection": target.name, **_report_counts(report)}

        def render(shown: int) -> str:
            note = left_out_note(len(notes) - shown, "notes", max_tokens)
            shown_notes = {"notes": notes[:shown]} if notes else {}
            return dumps({**summary, **shown_notes, **note})

        return answer(fit(render, len(notes), counter=counter, max_tokens=max_tokens), tokenizer)

    @tool_errors
    def collections(
        ctx: Context[Any, Any],
        tokenizer: Tokenizer = "o200k_base",
        max_tokens: MaxTokens = DEFAULT_MAX_TOKENS,
    ) -> CallToolResult:
        """The collections you may read, by name, with their sizes (documents, chunks,
        tokens) and index versions (JSON)."""
        context.check_limit("max_tokens", max_tokens, context.max_budget)
        counter = context.counter(tokenizer)
        access = context.access(ctx)
        listed = [
            {
                "name": stats.name,
                "documents": stats.documents,
                "chunks": stats.chunks,
                "tokens": stats.tokens,
                "index_version": stats.index_version,
            }
            for stats in access.store.stats()
            if access.can_see(stats.name)
        ]

        def render(shown: int) -> str:
            note = left_out_note(len(listed) - shown, "collections", max_tokens)
            return dumps({"collections": listed[:shown], **note})

        return answer(fit(render, len(listed), counter=counter, max_tokens=max_tokens), tokenizer)

    for function, hints in (
        (pack, READ_ONLY),
        (search, READ_ONLY),
        (add, WRITES),
        (collections, READ_ONLY),
    ):
        server.add_tool(
            function,
            description=inspect.cleandoc(function.__doc__ or ""),
            annotations=hints,
            structured_output=False,
        )


def _hit(hit: Hit) -> dict[str, Any]:
    """What an agent needs of a hit: where it is from, how good it is, its text."""
    shown: dict[str, Any] = {
        "score": round(hit.score, 4),
        "document_id": hit.document_id,
        "title": hit.title,
        "chunk": hit.ordinal,
    }
    if hit.heading_path:
        shown["heading"] = " › ".join(hit.heading_path)
    if hit.kind == "summary":
        shown |= {"summary_level": hit.level, "last_chunk": hit.last_ordinal}
    return {**shown, "text": hit.text}


def _report_counts(report: IngestReport) -> dict[str, int]:
    names = ("added", "replaced", "unchanged", "chunks", "tokens", "summaries", "index_version")
    return {name: getattr(report, name) for name in names}


def _report_notes(report: IngestReport) -> list[dict[str, str]]:
    """What the add did not do as asked: files skipped, failed summaries, repeated texts,
    and its warnings (most documents sharing one title)."""
    return [
        *({"skipped": name, "why": why} for name, why in report.skipped.items()),
        *({"summary_failed": name, "why": why} for name, why in report.summary_failures.items()),
        *({"duplicate": name, "of": first} for name, first in report.duplicates.items()),
        *({"warning": warning} for warning in report.warnings),
    ]
