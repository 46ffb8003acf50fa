"""Request and response bodies of the REST API (pydantic), and their conversions.

Library dataclasses that already say what a client needs (`Hit`, `IngestReport`,
`TreeOverview`, `TreeNode`, `DocumentInfo`, `CollectionStats`) are returned as they are; the
models here cover requests and the shapes the library does not have.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from windowpack.prompt_cache import MINIMUMS_CHECKED, PROMPT_CACHE_MINIMUMS, Tier
from windowpack.text import storable
from windowpack.types import (
    BUDGET_RULE,
    HEADER_STYLES,
    MAX_BUDGET,
    MIN_BUDGET,
    WHY,
    Document,
    DocumentInfo,
    DocumentKind,
    HeaderStyle,
    IngestReport,
    JobState,
    JobStatus,
    Span,
    Why,
    Window,
    WindowItem,
)

_V = TypeVar("_V")
_QUERY = Field(min_length=1, max_length=20_000, description="The question or keywords.")
Tokenizer = Literal["o200k_base", "cl100k_base"]
"""Over HTTP only the bundled encodings: a server must not open files a client names (the
library and CLI also take a tokenizer.json path)."""
MAX_SESSION_CHARS = 1_000_000
"""The longest session token a request may send: it grows by each follow-up's chunk positions,
a few characters each, so a long session at a large budget stays far below it."""
_NAME = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$", description="Collection name.")


def _checked(check: Callable[[_V], str | None]) -> Callable[[_V], _V]:
    """A pydantic validator from a library check (`text.storable`'s, the budget's): the
    library's rule in its words, named by field."""

    def validate(value: _V) -> _V:
        problem = check(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    return validate


StorableText = Annotated[str, AfterValidator(_checked(storable.text_problem))]
NewDocumentId = Annotated[
    str,
    Field(min_length=1, max_length=storable.MAX_ID_CHARS),
    AfterValidator(_checked(storable.id_problem)),
]
"""An id a new document may have: one a URL carries faithfully (see `text.storable`)."""
LookupDocumentId = Annotated[str, AfterValidator(_checked(storable.lookup_id_problem))]
"""An id looked up: anything a stored document could have."""


def _metadata_problem(metadata: dict[str, Any]) -> str | None:
    found = storable.metadata_problem(metadata)
    return None if found is None else f"{found[0]}: {found[1]}"


StorableMetadata = Annotated[dict[str, Any], AfterValidator(_checked(_metadata_problem))]
"""A document's metadata: what a database holds faithfully (see `text.storable`)."""


def _budget_problem(budget: int) -> str | None:
    return None if MIN_BUDGET <= budget <= MAX_BUDGET else f"must be a whole number {BUDGET_RULE}"


Budget = Annotated[
    int,
    Field(
        description=f"Most tokens the window may hold, in `tokenizer`: {BUDGET_RULE}.",
        json_schema_extra={"minimum": MIN_BUDGET, "maximum": MAX_BUDGET},
    ),
    AfterValidator(_checked(_budget_problem)),  # the library's rule, in its words
]


class _Body(BaseModel):
    # An unknown field is a typo the client should hear about, not something to ignore; and
    # strict types, so that `"budget": true` or `"k": 2.5` is an error, not 1 or 2.
    model_config = ConfigDict(extra="forbid", strict=True)


class ErrorDetail(BaseModel):
    code: str = Field(description="Stable machine-readable code, e.g. collection_not_found.")
    message: str = Field(description="What went wrong, naming the offending input.")


class ErrorBody(BaseModel):
    """Every error the API answers."""

    error: ErrorDetail


CHUNK_TOKENS = (16, 100_000)
"""The chunk sizes a new collection may be given over HTTP (least, most)."""


class CollectionCreate(_Body):
    name: str = _NAME
    tokenizer: Tokenizer | None = None
    chunk_tokens: int | None = Field(default=None, ge=CHUNK_TOKENS[0], le=CHUNK_TOKENS[1])


class CollectionList(BaseModel):
    collections: list[str]


class UnitIn(_Body):
    """A unit of a document: the characters `[start, end)` of its text."""

    start: int = Field(ge=0)
    end: int = Field(ge=0)


class DocumentUpsert(_Body):
    """The document stored under the id in the path: the library's `Document`."""

    text: StorableText = Field(min_length=1)
    title: StorableText | None = Field(default=None, max_length=storable.MAX_TITLE_CHARS)
    metadata: StorableMetadata = Field(default_factory=dict)
    kind: DocumentKind = "text"
    units: list[UnitIn] | None = Field(
        default=None,
        description="Its units (a chat's turns, a file's records or sections) as character "
        "ranges of `text`, in order, not overlapping: chunks never cross one, and a window "
        "holds one whole, summarised or left out. Default: the kind's own (a conversation's "
        "turns from its `User:` lines, a markdown document's sections).",
    )
    source: StorableText | None = Field(
        default=None,
        max_length=storable.MAX_ID_CHARS,
        description="Where it came from, such as a file's name.",
    )

    def to_document(self, id: str | None) -> Document:
        units = None if self.units is None else [Span(start=u.start, end=u.end) for u in self.units]
        return Document(
            text=self.text,
            title=self.title,
            id=id,
            metadata=self.metadata,
            kind=self.kind,
            units=units,
            source=self.source,
        )


class DocumentIn(DocumentUpsert):
    """A document to add; `id` makes it an upsert (replaced when changed, kept when not)."""

    id: NewDocumentId | None = None


class DocumentsIn(_Body):
    documents: list[DocumentIn] = Field(min_length=1, max_length=100_000)


class Message(BaseModel):
    """One message of a chat; other fields a chat export carries (`name`, ...) are ignored,
    as the library ignores them."""

    model_config = ConfigDict(extra="ignore", strict=True)

    role: StorableText = Field(min_length=1, max_length=64)
    content: StorableText


class ConversationIn(_Body):
    """A chat added as one document whose units are its turns (`Collection.add_conversation`)."""

    messages: list[Message] | StorableText = Field(
        description="The chat: a list of `{role, content}` messages, or one transcript text "
        "whose messages start lines with their role (`User: ...`, `Assistant: ...`).",
    )
    id: NewDocumentId | None = None
    title: StorableText | None = Field(default=None, max_length=storable.MAX_TITLE_CHARS)
    metadata: StorableMetadata = Field(default_factory=dict)

    def chat(self) -> list[dict[str, str]] | str:
        """The messages as the library takes them."""
        if isinstance(self.messages, str):
            return self.messages
        return [{"role": m.role, "content": m.content} for m in self.messages]

    @property
    def size(self) -> int:
        """Characters of text, for the background threshold."""
        if isinstance(self.messages, str):
            return len(self.messages)
        return sum(len(m.content) for m in self.messages)


class DocumentOut(BaseModel):
    """A stored document: the library's `Document`."""

    id: str | None
    title: str | None
    text: str
    kind: str
    metadata: dict[str, Any]
    source: str | None
    units: list[Span] | None = Field(
        default=None, description="Its units as character ranges of `text` (see `units` in)."
    )

    @classmethod
    def of(cls, document: Document) -> DocumentOut:
        return cls(
            id=document.id,
            title=document.title,
            text=document.text,
            kind=document.kind,
            metadata=document.metadata,
            source=document.source,
            units=document.units,
        )


_WHERE = Field(
    default=None,
    description="Only documents whose metadata matches this filter, in Chroma's `where` shape: "
    '`{"team": "ops"}`, `{"year": {"$gte": 2020}}`, `{"$or": [...]}` (docs/library.md). A '
    "malformed one is an error naming `where` and the path inside it.",
)


class SearchIn(_Body):
    query: str = _QUERY
    k: int = Field(default=10, ge=1)
    include_summaries: bool = False
    where: dict[str, Any] | None = _WHERE


class DocumentsDeleteIn(_Body):
    """Documents to delete in one call and one index version: by id, by filter, or both (the
    listed documents the filter keeps)."""

    ids: list[LookupDocumentId] | None = Field(
        default=None, max_length=100_000, description="Ids; those not stored are reported."
    )
    where: dict[str, Any] | None = _WHERE
    all: bool = Field(
        default=False,
        description="Required (true) when the `where` filter keeps every document of the "
        "collection: a delete that empties it must say so.",
    )


class WindowOptions(_Body):
    """What a pack and a session pack both take: the question, the budget, the format."""

    query: str = _QUERY
    budget: Budget
    tokenizer: Tokenizer = "o200k_base"
    provider: str | None = Field(
        default=None,
        max_length=64,
        description="A provider whose prompt cache the stable tier should reach, when the "
        f"budget allows it: one of {', '.join(PROMPT_CACHE_MINIMUMS)} "
        "(`windowpack.PROMPT_CACHE_MINIMUMS`). The answer then carries its `cache_plan`, and "
        "format=messages marks its breakpoints.",
    )
    format: Literal["text", "messages"] = Field(
        default="text", description="text: one string; messages: chat messages, stable tier first."
    )
    overview_tokens: int | None = Field(
        default=None,
        ge=0,
        description="Tokens of the query-independent overview tier (default: none, unless "
        "`align` asks for a cacheable prefix).",
    )
    cache_control: bool = Field(
        default=False,
        description="With format=messages and no provider: an Anthropic cache breakpoint on "
        "the system message.",
    )
    include_question: bool = Field(
        default=True, description="With format=messages: the question as the last user message."
    )
    where: dict[str, Any] | None = _WHERE


class PackOptions(WindowOptions):
    align: bool | int = Field(
        default=False,
        description="true: pad the stable tier to a multiple of 256 tokens; N (e.g. 1024, the "
        "OpenAI and Anthropic cache minimum): to at least N tokens, if N is at most half the "
        "budget.",
    )
    headers: HeaderStyle = Field(
        default=HEADER_STYLES[0],
        description="What the window says around its passages. compact: each document's title "
        "once, a passage's heading path only where its text does not start with it, one gap "
        "marker per run of what was left out; full: every passage's document id and position, "
        "chunk numbers, characters and heading path; none: no document or passage headers "
        "(summaries and gap markers stay). The provenance is in `items` whatever the style.",
    )

    def window_options(self) -> dict[str, Any]:
        """The keyword arguments of `pack` in the library."""
        return {
            "budget": self.budget,
            "tokenizer": self.tokenizer,
            "overview_tokens": self.overview_tokens,
            "align": self.align,
            "provider": self.provider,
            "headers": self.headers,
            "where": self.where,
        }


class PackIn(PackOptions):
    pass


class MultiPackIn(PackOptions):
    collections: list[str] = Field(min_length=1, max_length=100)


class SessionOptions(WindowOptions):
    """A question of a session: its window extends the previous one's while the budget allows."""

    first_tokens: int | None = Field(
        default=None, ge=1, description="The first window's size (default: half the budget)."
    )
    follow_up_tokens: int | None = Field(
        default=None,
        ge=1,
        description="Most tokens a follow-up adds to the previous window (default: a twentieth "
        "of the budget).",
    )
    session: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_SESSION_CHARS,
        description="The `session` of the previous answer; null for the session's first "
        "question. The server keeps nothing between questions: any replica answers.",
    )

    def session_options(self) -> dict[str, Any]:
        """The keyword arguments of `session` in the library."""
        return {
            "budget": self.budget,
            "tokenizer": self.tokenizer,
            "provider": self.provider,
            "overview_tokens": self.overview_tokens,
            "first_tokens": self.first_tokens,
            "follow_up_tokens": self.follow_up_tokens,
            "token": self.session,
            "where": self.where,
        }


class SessionPackIn(SessionOptions):
    pass


class MultiSessionPackIn(SessionOptions):
    collections: list[str] = Field(min_length=1, max_length=100)


class PackItem(BaseModel):
    """One item of the window. Its text is `text[offset:offset + chars]` of the window (in the
    text format), so it is not sent twice."""

    kind: Literal["chunk", "summary", "gap"]
    document_id: str | None
    title: str | None
    collection: str | None
    document_index: int | None
    level: int
    span: Span | None
    ordinal: int | None
    last_ordinal: int | None
    unit: int | None
    tokens: int
    score: float
    offset: int
    chars: int
    metadata: dict[str, Any]
    document_range: tuple[int, int] | None = Field(
        default=None, description="A collection-level summary's documents (first, last)."
    )
    duplicates: list[str] = Field(
        default_factory=list,
        description="The collection's other documents with this document's text: a window "
        "shows a text once, under the first document that has it.",
    )
    why: Why | None = Field(
        default=None,
        description="Why the item is in the window, one of: "
        + "; ".join(f"{code}: {meaning}" for code, meaning in WHY.items())
        + " (`windowpack.types.WHY`).",
    )

    @classmethod
    def of(cls, item: WindowItem) -> PackItem:
        # Built from the library's own window, so not validated again: at 128K a window has
        # ~700 items, and validating them was most of a cached pack's time. The pydantic mypy
        # plugin checks that every field is given.
        return cls.model_construct(
            kind=item.kind,
            document_id=item.document_id,
            title=item.title,
            collection=item.collection,
            document_index=item.document_index,
            level=item.level,
            span=item.span,
            ordinal=item.ordinal,
            last_ordinal=item.last_ordinal,
            unit=item.unit,
            tokens=item.tokens,
            score=item.score,
            offset=item.offset,
            chars=len(item.text),
            metadata=item.metadata,
            document_range=item.document_range,
            duplicates=list(item.duplicates),
            why=item.why,
        )


class PackOut(BaseModel):
    """A packed window. `text` or `messages`, by the requested format."""

    text: str | None
    messages: list[dict[str, Any]] | None
    tokens: int
    budget: int
    tokenizer: str
    cacheable_prefix_tokens: int
    cacheable_prefix_chars: int
    index_version: int
    index_versions: dict[str, int]
    items: list[PackItem]
    reason: str | None
    retrieval: dict[str, Any] | None = Field(
        default=None,
        description="How the question was read and ranked: the language rules (`language`), "
        "its BM25 `terms`, its `literals` (options, identifiers, quoted strings matched "
        "exactly) and the retrieval `stages` run; null when no ranking chose the window "
        "(the whole collection fits).",
    )
    prefix_cache: dict[str, bool] = Field(
        default_factory=dict,
        description="Whether the stable prefix (`stable_tokens`) reaches each provider's "
        "minimum cacheable prompt: "
        + "; ".join(f"{name}: {tokens:,}" for name, tokens in PROMPT_CACHE_MINIMUMS.items())
        + f" tokens (`windowpack.PROMPT_CACHE_MINIMUMS`, checked {MINIMUMS_CHECKED}).",
    )
    session_tiers: list[Tier] = Field(
        default_factory=list,
        description="In a session window, where each earlier question's material ends and "
        "where this question's does (characters `end` and tokens before it): the next window "
        "of the session starts with these bytes. Empty outside a session.",
    )
    stable_tokens: int = Field(
        default=0,
        description="The tokens before the last stable tier's end: what a prefix cache can "
        "serve of the next request that starts with this window.",
    )
    cache_plan: dict[str, Any] | None = Field(
        default=None,
        description="With a `provider`: the request fields that make its prompt cache reuse "
        "the stable tiers (Anthropic `system` and `messages` with `cache_control` "
        "breakpoints, OpenAI `messages` and `prompt_cache_key`, Gemini `messages`), the "
        "`breakpoints`, `stable_tokens` and whether they reach the provider's minimum.",
    )

    @classmethod
    def of(cls, window: Window, options: WindowOptions) -> PackOut:
        """The answer for `window`, shaped as `options` asks (text or messages, a provider's
        cache plan)."""
        as_messages = options.format == "messages"
        messages = (
            window.messages(
                provider=options.provider,
                cache_control=options.cache_control,
                include_question=options.include_question,
            )
            if as_messages
            else None
        )
        plan = window.cache_plan(options.provider) if options.provider is not None else None
        return cls.model_construct(
            text=None if as_messages else window.text,
            messages=messages,
            tokens=window.tokens,
            budget=window.budget,
            tokenizer=window.tokenizer,
            cacheable_prefix_tokens=window.cacheable_prefix_tokens,
            cacheable_prefix_chars=window.cacheable_prefix_chars,
            index_version=window.index_version,
            index_versions=dict(window.index_versions),
            items=[PackItem.of(item) for item in window.items],
            reason=window.reason,
            retrieval=dict(window.retrieval) if window.retrieval is not None else None,
            prefix_cache=window.prefix_cache(),
            session_tiers=list(window.session_tiers),
            stable_tokens=window.stable_tokens,
            cache_plan=plan,
        )


class SessionPackOut(PackOut):
    """A session's window, and the session to send with the next question."""

    session: str = Field(
        description="The session's state after this question, opaque: send it as `session` "
        "with the next question, to any replica, after restarts too (after a write to a "
        "collection the next question is packed afresh, saying why)."
    )
    extends: bool = Field(
        description="Whether this window starts with the previous answer's text, byte for "
        "byte (false for the first question, and when it was packed afresh)."
    )
    session_reason: str | None = Field(
        description="Why this window was packed afresh (no room left for another follow-up, a "
        "collection changed, other settings); null when it extends, and for the first question."
    )

    @classmethod
    def of_session(
        cls,
        window: Window,
        options: SessionOptions,
        *,
        token: str,
        extends: bool,
        reason: str | None,
    ) -> SessionPackOut:
        # The pack's fields as `PackOut.of` builds them (each one checked there), shallow.
        return cls.model_construct(
            **dict(PackOut.of(window, options)),
            session=token,
            extends=extends,
            session_reason=reason,
        )


class JobOut(BaseModel):
    """An ingest job: its status, progress and per-file failures."""

    id: str
    collection: str
    status: JobStatus
    stage: str
    documents_total: int
    documents: int
    chunks: int
    tokens: int
    embedded: int
    failures: dict[str, str] = Field(description="File name -> why it was not ingested.")
    error: ErrorDetail | None
    report: IngestReport | None
    created_at: datetime
    finished_at: datetime | None
    started_at: datetime | None = Field(description="When its latest run began.")
    attempts: int = Field(
        description="Runs begun: more than 1 when a worker running it stopped and another "
        "took it up again."
    )

    @classmethod
    def of(cls, job: JobState) -> JobOut:
        # The wire form of `JobState`, field for field (a test keeps the two in step); a
        # model of its own for the field descriptions and the shared `ErrorDetail` schema.
        error = job.error
        return cls(
            id=job.id,
            collection=job.collection,
            status=job.status,
            stage=job.stage,
            documents_total=job.documents_total,
            documents=job.documents,
            chunks=job.chunks,
            tokens=job.tokens,
            embedded=job.embedded,
            failures=job.failures,
            error=ErrorDetail(code=error.code, message=error.message) if error else None,
            report=job.report,
            created_at=job.created_at,
            finished_at=job.finished_at,
            started_at=job.started_at,
            attempts=job.attempts,
        )


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    keys_required: bool


class Readiness(BaseModel):
    """`ready` once the warm-up at start is done (or was turned off), else `warming`."""

    status: Literal["ready", "warming"]
    warmed: list[str] = Field(description="Collections the warm-up loaded, in order.")


class DocumentPage(BaseModel):
    """One page of a collection's documents, in collection order, without their text."""

    items: list[DocumentInfo]
    total: int
    offset: int
    limit: int
    next_offset: int | None = Field(description="Offset of the next page; null on the last.")
