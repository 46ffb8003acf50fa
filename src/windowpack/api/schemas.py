"""Request and response bodies of the REST API (pydantic), and their conversions.

Library dataclasses that already say what a client needs (`Hit`, `IngestReport`,
`TreeOverview`, `TreeNode`, `DocumentInfo`, `CollectionStats`) are returned as they are; the
models here cover requests and the shapes the library does not have.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from windowpack.text import storable
from windowpack.types import (
    Document,
    DocumentInfo,
    DocumentKind,
    IngestReport,
    JobState,
    JobStatus,
    Span,
    Window,
    WindowItem,
)

_QUERY = Field(min_length=1, max_length=20_000, description="The question or keywords.")
Tokenizer = Literal["o200k_base", "cl100k_base"]
"""Over HTTP only the bundled encodings: a server must not open files a client names (the
library and CLI also take a tokenizer.json path)."""
_NAME = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$", description="Collection name.")


def _checked(check: Callable[[str], str | None]) -> Callable[[str], str]:
    """A pydantic validator from a `text.storable` check: the library's rule, named by field."""

    def validate(value: str) -> str:
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


class CollectionCreate(_Body):
    name: str = _NAME
    tokenizer: Tokenizer | None = None
    chunk_tokens: int | None = Field(default=None, ge=16, le=100_000)


class CollectionList(BaseModel):
    collections: list[str]


class DocumentUpsert(_Body):
    """The document stored under the id in the path."""

    text: StorableText = Field(min_length=1)
    title: StorableText | None = Field(default=None, max_length=storable.MAX_TITLE_CHARS)
    metadata: dict[str, Any] = Field(default_factory=dict)
    kind: DocumentKind = "text"

    @field_validator("metadata")
    @classmethod
    def _storable_metadata(cls, metadata: dict[str, Any]) -> dict[str, Any]:
        found = storable.metadata_problem(metadata)
        if found is not None:
            raise ValueError(f"{found[0]}: {found[1]}")
        return metadata

    def to_document(self, id: str | None) -> Document:
        return Document(
            text=self.text, title=self.title, id=id, metadata=self.metadata, kind=self.kind
        )


class DocumentIn(DocumentUpsert):
    """A document to add; `id` makes it an upsert (replaced when changed, kept when not)."""

    id: NewDocumentId | None = None


class DocumentsIn(_Body):
    documents: list[DocumentIn] = Field(min_length=1, max_length=100_000)


class DocumentOut(BaseModel):
    id: str | None
    title: str | None
    text: str
    kind: str
    metadata: dict[str, Any]
    source: str | None

    @classmethod
    def of(cls, document: Document) -> DocumentOut:
        return cls(
            id=document.id,
            title=document.title,
            text=document.text,
            kind=document.kind,
            metadata=document.metadata,
            source=document.source,
        )


class SearchIn(_Body):
    query: str = _QUERY
    k: int = Field(default=10, ge=1)
    include_summaries: bool = False


class PackOptions(_Body):
    query: str = _QUERY
    budget: int = Field(ge=1, description="Most tokens the window may hold, in `tokenizer`.")
    tokenizer: Tokenizer = "o200k_base"
    format: Literal["text", "messages"] = Field(
        default="text", description="text: one string; messages: chat messages, stable tier first."
    )
    overview_tokens: int | None = Field(
        default=None, ge=0, description="Cap on the query-independent overview tier."
    )
    align: bool | int = Field(
        default=False,
        description="true: pad the stable tier to a multiple of 256 tokens; N (e.g. 1024, the "
        "OpenAI and Anthropic cache minimum): to at least N tokens, if N is at most half the "
        "budget.",
    )
    cache_control: bool = Field(
        default=False, description="With format=messages: an Anthropic cache breakpoint."
    )
    include_question: bool = Field(
        default=True, description="With format=messages: the question as the last user message."
    )

    def window_options(self) -> dict[str, Any]:
        """The keyword arguments of `pack` in the library."""
        return {
            "budget": self.budget,
            "tokenizer": self.tokenizer,
            "overview_tokens": self.overview_tokens,
            "align": self.align,
        }


class PackIn(PackOptions):
    pass


class MultiPackIn(PackOptions):
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
    prefix_cache: dict[str, bool] = Field(
        default_factory=dict,
        description="Whether the cacheable prefix reaches each provider's minimum cacheable "
        "prompt (openai: 1,024 tokens; anthropic: 1,024; anthropic-haiku-4.5: 4,096).",
    )

    @classmethod
    def of(cls, window: Window, options: PackOptions) -> PackOut:
        as_messages = options.format == "messages"
        messages = (
            window.messages(
                cache_control=options.cache_control, include_question=options.include_question
            )
            if as_messages
            else None
        )
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
            prefix_cache=window.prefix_cache(),
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
