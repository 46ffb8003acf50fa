"""Plain data types shared by every component: no behaviour, no heavy imports."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from windowpack.prompt_cache import (
    PROMPT_CACHE_MINIMUMS,
    Tier,
    cache_plan,
    chat_messages,
)

SEPARATOR = "\n\n"
"""Between two blocks of a window: a blank line."""

DocumentKind = Literal["text", "markdown", "conversation", "records"]

UNIT_NAMES: Mapping[str, str] = {"conversation": "turn", "records": "record", "markdown": "section"}
"""What a document of each kind calls its units (`Document.units`), in every label for people:
a chat's turns, a JSON file's records, a markdown (or HTML, or outlined PDF) document's
sections. A kind not named here calls its units parts (`unit_name`)."""


def unit_name(kind: str) -> str:
    """What a document of `kind` calls one of its units: turn, record, section or part."""
    return UNIT_NAMES.get(kind, "part")


Why = Literal[
    "words",
    "meaning",
    "words_and_meaning",
    "linked",
    "repeat",
    "context",
    "room",
    "whole",
    "follow_up",
    "overview",
    "summary",
    "gap",
]
"""Why an item is in a window (`WindowItem.why`): one of a closed set, each meaning one line
of `WHY` says. Read from what the packer knew when it chose the item, never from its text."""

WHY: Mapping[Why, str] = {
    "words": "matched the question's words (BM25 ranked it high)",
    "meaning": "matched the question's meaning (its vector or a sentence's ranked it high)",
    "words_and_meaning": "matched both the question's words and its meaning",
    "linked": "linked to a hit by a name or rare term the hit adds (the second hop)",
    "repeat": "an instance of the repeated request the question asks about",
    "context": "context around a hit: the rest of its section, turn or record, or next to it",
    "room": "ranked low or not at all: in because the budget had room left for it",
    "whole": "the whole collection fits the budget: every chunk is in, whatever the question",
    "follow_up": "added for a follow-up question of the session",
    "overview": "the collection overview: the top of the summary tree, the same for every question",
    "summary": "a summary standing for a part of the corpus not shown word for word",
    "gap": "a marker of what was left out, and how much",
}
"""What each `Why` code means, in one line: the inspector, the CLI and the docs say these."""


HeaderStyle = Literal["full", "compact", "none"]
"""What a window says around its passages (`pack(headers=...)`), provenance being in its
items whatever the style:

- "compact" (the default): each document's title once; a passage's heading path only where
  its text does not start with that heading, a turn's or record's number; gap markers one
  per run of what was left out;
- "full": each document's title, id and position, every passage's chunk numbers,
  characters and full heading path, a marker per left-out piece;
- "none": no document or passage headers at all, for callers that render provenance from
  the items themselves; summaries still say they are summaries, and gap markers stay.
"""
HEADER_STYLES: tuple[HeaderStyle, ...] = ("compact", "full", "none")
"""The header styles, the default first."""

MIN_BUDGET = 1
MAX_BUDGET = 1 << 20
"""The budgets a window may be asked for, in every surface (library, CLI, REST, MCP): whole
numbers of tokens from `MIN_BUDGET` to `MAX_BUDGET`, 1,048,576, which is 1M as model context
windows are counted. Nothing between is an error: a budget too small for anything gives an
empty window whose `reason` says so (design §4.1); windows are built to be useful from about
1K up."""
BUDGET_RULE = (
    f"from {MIN_BUDGET} to {MAX_BUDGET:,} tokens (1M); a budget too small for anything gives "
    "an empty window whose reason says so"
)
"""The budget rule in words: what every surface's help, schema and error says."""


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
    document, `span` its characters, `unit` the unit it lies in (None outside any), which the
    document's kind names in `unit_name` (turn, record, section or part: `UNIT_NAMES`). A
    chunk of a section has the section's `heading_path`: the titles of the headings it lies
    under, outermost first, its own last (empty for any other chunk and for a summary).

    A summary (`kind="summary"`, level ≥ 1) stands for the chunks `ordinal` to `last_ordinal`
    of its document (`span` covers them); a collection-level summary has `document_id=None`
    and stands for documents.
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
    unit_name: str | None = None
    heading_path: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class WindowItem:
    """One piece of a packed window and where it came from.

    `text` is the item exactly as rendered in `Window.text`, starting at char `offset`: its
    bracketed header line (if its style gives it one), then the verbatim chunk text or the
    summary (a gap marker alone for a gap). Provenance: the document's id, `title`,
    `document_index` (0-based, in collection order: a "full" header reads "document
    {document_index + 1} of N") and `metadata`
    (shared with the loaded collection: do not mutate it); `ordinal` to
    `last_ordinal` are the chunks of the document the item holds or stands for, `unit` the
    conversation turn or record of a passage, `span` their characters in the document. A
    collection-level summary has no document (`document_id`, `document_index`, `span` are None)
    and stands for the documents `document_range` (first and last `document_index`, inclusive).
    Positions (`document_index`, `ordinal`, `unit`) count from 0; the rendered headers and
    every label meant for people count from 1 ("chunk 1" is ordinal 0). How much of this the
    header line repeats depends on the window's header style (`HeaderStyle`): with "compact"
    a passage may have no header line (its text starts with its own heading), with "none"
    no passage has one.
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
    duplicates: tuple[str, ...] = ()
    """The ids of the collection's other documents whose text is this item's document's: a
    window shows a text once, under the first document (in collection order) that has it."""
    why: Why | None = None
    """Why the item is in the window, as a code of `WHY` (words, meaning, repeat, context,
    overview, summary, gap, ...): the packer names one for every item it makes (None only on
    an item built by hand). It is not in the window's text."""


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
    retrieval: Mapping[str, Any] | None = None
    """How the question was read and ranked: the language rules, its terms and literals, the
    retrieval stages run (`search.Evidence.describe`); None for a window no ranking chose
    (lossless, empty, cached from the whole corpus)."""

    session_tiers: tuple[Tier, ...] = ()
    """In a session window (`Collection.session`), where each earlier question's material and
    this question's end: the stable tiers after the overview, which the next window of the
    session starts with byte for byte. Empty outside a session."""

    @property
    def tiers(self) -> tuple[Tier, ...]:
        """Every stable tier's end, in order: the query-independent prefix (the overview, or
        the whole window when it is lossless), then the session's tiers."""
        fixed = self.cacheable_prefix_chars
        first = (Tier(end=fixed, tokens=self.cacheable_prefix_tokens, fixed=True),)
        return (first if fixed else ()) + self.session_tiers

    @property
    def stable_tokens(self) -> int:
        """The tokens before the last stable tier's end: what the next request that starts
        with this window can have served from a prefix cache."""
        tiers = self.tiers
        return tiers[-1].tokens if tiers else 0

    def messages(
        self,
        *,
        provider: str | None = None,
        cache_control: bool = False,
        include_question: bool = True,
    ) -> list[dict[str, Any]]:
        """The window as chat messages: the overview, the question's material, the question.

        The overview (the query-independent tier) is a system message, the material a user
        message in text parts that end where the session's tiers end, and the question
        (`query`, verbatim) the last user message unless `include_question=False`. Content is
        a list of text parts, the shape both the OpenAI and the Anthropic chat APIs accept.
        With an Anthropic `provider` the parts ending stable tiers carry `cache_control`
        breakpoints (`cache_plan` gives the whole request in each provider's shape);
        `cache_control=True` marks the system message alone.
        """
        return chat_messages(
            self.text,
            self.tiers,
            self.query,
            provider=provider,
            cache_control=cache_control,
            include_question=include_question,
        )

    def cache_plan(self, provider: str) -> dict[str, Any]:
        """The request fields that make `provider`'s prompt cache reuse the stable tiers:
        Anthropic's `system` and `messages` with `cache_control` breakpoints, OpenAI's
        `messages` with a `prompt_cache_key`, Gemini's `messages` (see
        `windowpack.prompt_cache.cache_plan` for every field)."""
        return cache_plan(
            self.text,
            self.tiers,
            self.query,
            provider=provider,
            tokenizer=self.tokenizer,
            versions=self.index_versions,
        )

    def prefix_cache(self) -> dict[str, bool]:
        """Whether the stable prefix reaches each provider's minimum (`PROMPT_CACHE_MINIMUMS`).

        Counted in the window's tokenizer, which approximates the provider's own.
        """
        return {
            provider: self.stable_tokens >= minimum
            for provider, minimum in PROMPT_CACHE_MINIMUMS.items()
        }

    def cached_prefix_tokens(self, previous: Window) -> int:
        """The tokens at the start of this window that a prefix cache holds after a prompt
        that started with `previous.text`: those before the longest stable tier of this window
        that `previous` shares byte for byte and also ends a tier (or its text) at, counted
        exactly; 0 across tokenizers.

        A tier ends on a block boundary, after a blank line and before a `[` or `#`, where no
        tokenizer merges across: an engine's own token-level match agrees with it whenever the
        text that follows `previous` in its prompt starts with neither (a question does not).
        """
        if previous.tokenizer != self.tokenizer:
            return 0
        ends = {tier.end for tier in previous.tiers}
        if previous.text.endswith(SEPARATOR):
            ends.add(len(previous.text))
        shared = [
            tier.tokens
            for tier in self.tiers
            if tier.end in ends and self.text[: tier.end] == previous.text[: tier.end]
        ]
        return max(shared, default=0)


@dataclass(frozen=True, kw_only=True)
class IngestReport:
    """What one `add`/`add_files` call did.

    `embedded` counts the texts embedded afresh (not from the cache): chunks, summaries and,
    with the sentence index, the chunks' sentences. `skipped` maps a file to why it was
    skipped. `summaries` counts the tree nodes summarised afresh, not the nodes written: a
    node whose summary was cached, or that is a table of contents, is not counted (the name
    stays for the REST and JSON readers that have it; the CLI says "summarised afresh").
    `summary_failures` maps a node to why its summarizer failed (it then got the extractive
    summary instead). `duplicates` maps each document this call added or changed whose text
    is, byte for byte, that of another document of the collection (or of one before it in the
    call) to that document's id: it was added all the same, under its own id, since two ids
    may hold one text on purpose; the same files ingested again under other ids (a folder
    ingested from elsewhere without `root`) show here. `warnings` says what a reader of the
    collection will stumble on, though nothing failed: most documents of the call sharing one
    title (`documents.shared_title_warning`).
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
    duplicates: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class DeleteReport:
    """What one `Collection.delete` call did: the ids of the documents deleted (in
    collection order), the ids asked for that the collection does not hold (`missing`), and
    the index version after it (one new version for the whole call; unchanged when nothing
    was deleted)."""

    deleted: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    index_version: int = 0


@dataclass(kw_only=True)
class IngestProgress:
    """Running totals of an ingest for progress callbacks.

    `stage` goes chunk → summarize → embed → index → done. Each step counts its own work
    against its own total: `completed` of `total` `unit` (None while not known, and for the
    index step, which has no count): the documents chunked of those that changed, the
    documents whose summaries are built of those that changed, the texts (chunks and
    summaries) embedded of those not in the embedding cache, then, still in stage embed, the
    chunks' sentences (`unit` "sentences") likewise. The running totals beside it are the
    whole call's: `documents` chunked of the `documents_total` given, their `chunks` and
    `tokens`, every text `embedded` afresh (chunks, summaries and sentences alike) and the
    nodes summarised afresh (`summaries`). `note` carries a one-off message for the user,
    such as an LLM summarizer's cost estimate before the tree build starts.
    """

    stage: str
    documents_total: int
    documents: int = 0
    chunks: int = 0
    tokens: int = 0
    embedded: int = 0
    summaries: int = 0
    note: str | None = None
    completed: int = 0
    total: int | None = None
    unit: str = "documents"


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
    `error` says why a failed job failed, and then nothing was stored. `attempts` counts the
    runs begun: more than one when a worker running it stopped (a crash, a restart) and
    another took it up again.
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
    started_at: datetime | None = None
    attempts: int = 0

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


TREE_LABEL_CHARS = 80
"""The longest `TreeChild.label`: the first words of a text, cut at a word boundary."""


@dataclass(frozen=True, kw_only=True)
class TreeChild:
    """A child of a node: another node, a chunk (level 0) or a document's only chunk.

    `label` names it for people: a document's title (its id when untitled) for the root of a
    document under a collection node, else the first words of its text (a section's heading,
    a turn's request, a summary's subject), at most `TREE_LABEL_CHARS` characters."""

    kind: Literal["node", "chunk"]
    node_id: int | None
    document_id: str | None
    ordinal: int | None
    tokens: int
    label: str | None = None


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
