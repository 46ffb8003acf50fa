"""Plain data types shared by every component: no behaviour, no heavy imports."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

DocumentKind = Literal["text", "markdown", "conversation", "records"]


@dataclass(frozen=True, kw_only=True)
class Span:
    """A half-open character range `[start, end)` in a document's text."""

    start: int
    end: int


@dataclass(kw_only=True)
class Document:
    """A unit of input: text plus an optional stable id, title and metadata.

    `id` is the caller's stable id: adding a document whose id exists replaces it when its
    text changed and does nothing when it did not (upsert). Without an id one is derived
    from the text's hash. `kind` picks the chunking rules; `units` optionally fixes atomic
    spans (conversation turns, JSON records) that chunks must not merge across.
    """

    text: str
    title: str | None = None
    id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    kind: DocumentKind = "text"
    units: list[Span] | None = None
    source: str | None = None


@dataclass(frozen=True, kw_only=True)
class Hit:
    """One search result with its score and provenance.

    A chunk (`kind="chunk"`, level 0) is verbatim text: `ordinal` is its position in the
    document, `span` its characters. A summary (`kind="summary"`, level ≥ 1) stands for the
    chunks `ordinal` to `last_ordinal` of its document (`span` covers them); a
    collection-level summary has `document_id=None` and stands for documents.
    """

    text: str
    score: float
    document_id: str | None
    title: str | None
    ordinal: int
    span: Span | None
    chunk_id: int | None
    unit: int | None = None
    kind: Literal["chunk", "summary"] = "chunk"
    level: int = 0
    node_id: int | None = None
    last_ordinal: int | None = None


@dataclass(frozen=True, kw_only=True)
class WindowItem:
    """One piece of a packed window and where it came from.

    `text` is the item exactly as rendered in `Window.text`, starting at char `offset`: its
    bracketed header line, then the verbatim chunk text or the summary (a gap marker alone
    for a gap). Provenance: the document's id, `title`, `document_index` (0-based, in
    collection order: the header reads "document {document_index + 1} of N") and `metadata`
    (shared with the loaded collection: do not mutate it); `ordinal` to
    `last_ordinal` are the chunks of the document the item holds or stands for, `unit` the
    conversation turn or record of a passage, `span` their characters in the document. A
    collection-level summary has no document (`document_id`, `document_index`, `span` are None)
    and stands for the documents `document_range` (first and last `document_index`, inclusive).
    Positions (`document_index`, `ordinal`, `unit`) count from 0; the rendered headers and
    every label meant for people count from 1 ("chunk 1" is ordinal 0).
    """

    kind: Literal["chunk", "summary", "gap"]
    document_id: str | None
    level: int
    span: Span | None
    tokens: int
    score: float
    collection: str | None = None
    text: str = ""
    offset: int = 0
    title: str | None = None
    document_index: int | None = None
    ordinal: int | None = None
    last_ordinal: int | None = None
    unit: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    document_range: tuple[int, int] | None = None


@dataclass(frozen=True, kw_only=True)
class Window:
    """A packed context window: rendered text, its exact token count and its contents.

    `tokens` is the exact count of `text` in `tokenizer` and never exceeds `budget`. The
    first `cacheable_prefix_tokens` tokens (`cacheable_prefix_chars` characters) do not depend
    on the question: put them first in a prompt and provider/engine prefix caches reuse them.
    An empty window says why in `reason`. `index_versions` names each collection's version
    (a window over several collections gives the highest as `index_version`).
    """

    text: str
    tokens: int
    items: tuple[WindowItem, ...]
    cacheable_prefix_tokens: int
    cacheable_prefix_chars: int
    index_version: int
    budget: int
    tokenizer: str
    query: str
    reason: str | None = None
    index_versions: tuple[tuple[str, int], ...] = ()

    def messages(
        self, *, cache_control: bool = False, include_question: bool = True
    ) -> list[dict[str, Any]]:
        """The window as chat messages: the stable tier, the question's material, the question.

        The stable tier is a system message (with `cache_control`, carrying an Anthropic
        cache breakpoint), the material a user message, and the question (`query`, verbatim)
        the last user message unless `include_question=False`. Content is a list of text parts, the
        shape both the OpenAI and the Anthropic chat APIs accept.
        """
        stable = self.text[: self.cacheable_prefix_chars]
        specific = self.text[self.cacheable_prefix_chars :]
        messages: list[dict[str, Any]] = []
        if stable:
            part: dict[str, Any] = {"type": "text", "text": stable}
            if cache_control:
                part["cache_control"] = {"type": "ephemeral"}
            messages.append({"role": "system", "content": [part]})
        for text in (specific, self.query if include_question else ""):
            if text:
                messages.append({"role": "user", "content": [{"type": "text", "text": text}]})
        return messages

    def prefix_cache(self) -> dict[str, bool]:
        """Whether the cacheable prefix reaches each provider's minimum (`PROMPT_CACHE_MINIMUMS`).

        Counted in the window's tokenizer, which approximates the provider's own.
        """
        return {
            provider: self.cacheable_prefix_tokens >= minimum
            for provider, minimum in PROMPT_CACHE_MINIMUMS.items()
        }


PROMPT_CACHE_MINIMUMS: dict[str, int] = {
    "openai": 1024,
    "anthropic": 1024,
    "anthropic-haiku-4.5": 4096,
}
"""The shortest prompt prefix each provider caches, in tokens, as their documentation states:
OpenAI's automatic caching from 1,024 tokens; Anthropic's `cache_control` from 1,024 tokens
(Claude Sonnet 4.x, Opus 4 and 4.1) and 4,096 (Claude Haiku 4.5). Below it the provider
silently caches nothing. `align=N` in `pack` pads the stable tier to reach N."""


@dataclass(frozen=True, kw_only=True)
class IngestReport:
    """What one `add`/`add_files` call did.

    `embedded` counts the texts embedded afresh (not from the cache): chunks, summaries and,
    with the sentence index, the chunks' sentences. `skipped` maps a file to why it was
    skipped; `summaries` counts tree nodes summarised
    afresh (not from cache); `summary_failures` maps a node to why its summarizer failed (it
    then got the extractive summary instead).
    """

    added: int = 0
    replaced: int = 0
    unchanged: int = 0
    chunks: int = 0
    tokens: int = 0
    embedded: int = 0
    index_version: int = 0
    skipped: dict[str, str] = field(default_factory=dict)
    summaries: int = 0
    summary_failures: dict[str, str] = field(default_factory=dict)


@dataclass(kw_only=True)
class IngestProgress:
    """Running totals of an ingest for progress callbacks.

    `stage` goes chunk → summarize → embed → index → done. `note` carries a one-off message
    for the user, such as an LLM summarizer's cost estimate before the tree build starts.
    """

    stage: str
    documents_total: int
    documents: int = 0
    chunks: int = 0
    tokens: int = 0
    embedded: int = 0
    summaries: int = 0
    note: str | None = None


JobStatus = Literal["queued", "running", "succeeded", "failed"]


@dataclass(frozen=True, kw_only=True)
class JobError:
    """Why a job failed, as the REST API reports an error: its `code` and `message`."""

    code: str
    message: str


@dataclass(frozen=True, kw_only=True)
class JobState:
    """A background ingest job at one moment: what the server's job runner keeps, what
    `GET /v1/jobs/{id}` answers and what the REST client reads.

    `stage` and the counts are the ingest pipeline's progress (`IngestProgress`; stage queued,
    chunk, summarize, embed, index, done). `failures` maps a file to why it was skipped;
    `error` says why a failed job failed, and then nothing was stored.
    """

    id: str
    collection: str
    status: JobStatus
    stage: str
    documents_total: int
    documents: int
    chunks: int
    tokens: int
    embedded: int
    failures: dict[str, str]
    error: JobError | None
    report: IngestReport | None
    created_at: datetime
    finished_at: datetime | None

    @property
    def done(self) -> bool:
        """Whether the job has finished, either way."""
        return self.status in ("succeeded", "failed")


@dataclass(frozen=True, kw_only=True)
class DocumentInfo:
    """A stored document without its text."""

    id: str
    title: str | None
    kind: str
    tokens: int
    chunks: int
    position: int
    metadata: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class CollectionStats:
    """A collection's fixed settings and its size at its current index version."""

    name: str
    tokenizer: str
    chunk_tokens: int
    documents: int
    chunks: int
    tokens: int
    index_version: int


@dataclass(frozen=True, kw_only=True)
class LevelStats:
    """One level of the tree: `scope` is "document" or "collection"."""

    level: int
    scope: Literal["document", "collection"]
    nodes: int
    tokens: int


@dataclass(frozen=True, kw_only=True)
class TreeOverview:
    """The tree's shape. `summary_ratio` = summary tokens / chunk tokens."""

    documents: int
    chunks: int
    chunk_tokens: int
    summary_tokens: int
    levels: list[LevelStats]
    root_id: int | None

    @property
    def summary_ratio(self) -> float:
        return self.summary_tokens / self.chunk_tokens if self.chunk_tokens else 0.0


@dataclass(frozen=True, kw_only=True)
class TreeChild:
    """A child of a node: another node, a chunk (level 0) or a document's only chunk."""

    kind: Literal["node", "chunk"]
    node_id: int | None
    document_id: str | None
    ordinal: int | None
    tokens: int


@dataclass(frozen=True, kw_only=True)
class TreeNode:
    """A summary node: its text, what it stands for, its parent and its children."""

    id: int
    level: int
    document_id: str | None
    parent_id: int | None
    leaf_start: int
    leaf_end: int
    char_start: int | None
    char_end: int | None
    text: str
    tokens: int
    summarizer: str
    children: list[TreeChild]


ALL_COLLECTIONS = "*"


@dataclass(frozen=True, kw_only=True)
class ApiKey:
    """What a key may do; never its secret."""

    key_id: str
    name: str
    collections: tuple[str, ...]
    can_write: bool
    created_at: datetime
    revoked: bool

    def can_see(self, collection: str) -> bool:
        """Whether the key may use `collection` at all (reading it, or writing with `can_write`)."""
        return ALL_COLLECTIONS in self.collections or collection in self.collections


@dataclass(frozen=True, kw_only=True)
class CreatedKey:
    """A new key: `secret` is the full key to hand to the client, shown only this once."""

    key: ApiKey
    secret: str
