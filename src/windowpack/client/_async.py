"""`AsyncClient`: the same as `Client`, for asyncio (every call awaited)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, Literal, TypeVar, overload

import httpx

from windowpack.client import _calls
from windowpack.client._calls import Call, Where
from windowpack.errors import CollectionNotFoundError, ServerUnavailableError
from windowpack.types import (
    CollectionStats,
    DeleteReport,
    Document,
    DocumentInfo,
    HeaderStyle,
    Hit,
    IngestReport,
    JobState,
    TreeNode,
    TreeOverview,
    Window,
)

T = TypeVar("T")


class AsyncClient:
    """A windowpack server at `url`, for asyncio: the methods of `Client`, awaited.

    Errors are the library's (`wp.CollectionNotFoundError`, ...) made from the server's
    error codes; a server that cannot be reached is a `wp.ServerUnavailableError`.
    """

    def __init__(
        self,
        url: str = "http://127.0.0.1:8000",
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.url = url.rstrip("/")
        self._http = httpx.AsyncClient(
            base_url=self.url, headers=headers, timeout=timeout, transport=transport
        )

    async def _send(self, call: Call[T]) -> T:
        """Make one call; its answer as the library's types, or its error raised. A write
        whose connection fails is sent again a few times with its Idempotency-Key."""
        for pause in (*call.retries, None):
            try:
                response = await self._http.request(
                    call.method,
                    call.path,
                    json=call.json,
                    params=call.params,
                    files=call.files,
                    headers=call.headers,
                )
                break
            except httpx.TransportError as error:
                if pause is None:
                    raise _calls.unreachable(self.url, error) from error
                await asyncio.sleep(pause)
        body = response.json() if response.content else None
        return call.parse(_calls.checked(response.status_code, body, str(response.url)))

    async def health(self) -> dict[str, Any]:
        """`/healthz`: status, version, whether keys are required."""
        return await self._send(_calls.health())

    async def collections(self) -> list[str]:
        """Names of the collections this key may see, sorted."""
        return await self._send(_calls.collections())

    def collection(
        self,
        name: str,
        *,
        create: bool = True,
        tokenizer: str | None = None,
        chunk_tokens: int | None = None,
    ) -> AsyncRemoteCollection:
        """The collection `name`. Like the library, a new one is created by its first write
        (with `tokenizer` and `chunk_tokens`); reading one that does not exist is an error.
        With `create=False` it must exist: no write through this handle creates it, and its
        first call says so if it does not (the library's says it at once)."""
        return AsyncRemoteCollection(
            self, name, tokenizer=tokenizer, chunk_tokens=chunk_tokens, must_exist=not create
        )

    async def create_collection(
        self, name: str, *, tokenizer: str | None = None, chunk_tokens: int | None = None
    ) -> AsyncRemoteCollection:
        """Create `name` now (`wp.ConflictError` if it exists)."""
        await self._send(_calls.create_collection(name, tokenizer, chunk_tokens))
        return AsyncRemoteCollection(self, name, seen=True)

    async def delete_collection(self, name: str) -> None:
        """Delete a collection with its documents, tree and index files."""
        await self._send(_calls.delete_collection(name))

    async def pack(
        self,
        query: str,
        *,
        collections: Sequence[str],
        budget: int,
        tokenizer: str = "o200k_base",
        overview_tokens: int | None = None,
        align: bool | int = False,
        provider: str | None = None,
        headers: HeaderStyle | None = None,
        where: Where = None,
    ) -> Window:
        """One window over several collections, the budget following relevance (`headers`
        as in `Collection.pack`; None: the server's default); `where` filters the documents
        of every collection named."""
        options = _calls.pack_options(
            budget, tokenizer, overview_tokens, align, provider, headers, where
        )
        return await self._send(_calls.pack(list(collections), query, options))

    def session(
        self,
        *,
        collections: Sequence[str],
        budget: int,
        tokenizer: str = "o200k_base",
        provider: str | None = None,
        overview_tokens: int | None = None,
        first_tokens: int | None = None,
        follow_up_tokens: int | None = None,
        token: str | None = None,
        where: Where = None,
    ) -> AsyncRemoteSession:
        """A session of follow-up questions over several collections, as `Store.session`:
        each `pack(question)` window extends the last one while the budget allows. The
        server keeps nothing; `token` (a session's `token`) resumes one, in any client."""
        options = _calls.session_options(
            budget=budget,
            tokenizer=tokenizer,
            provider=provider,
            overview_tokens=overview_tokens,
            first_tokens=first_tokens,
            follow_up_tokens=follow_up_tokens,
            where=where,
        )
        return AsyncRemoteSession(self, list(collections), options, token)

    async def job(self, job_id: str) -> AsyncRemoteJob:
        """A background ingest job by id."""
        return AsyncRemoteJob(self, await self._send(_calls.job(job_id)))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()


class AsyncRemoteSession(_calls.SessionFields):
    """Follow-up questions in one conversation, on the server: the library's `WindowSession`
    (`pack`, `window`, `extends`, `reason`, `token`), the token kept here between calls."""

    def __init__(
        self,
        client: AsyncClient,
        names: Sequence[str] | str,
        options: Mapping[str, Any],
        token: str | None = None,
    ) -> None:
        super().__init__(names, options, token)
        self._client = client

    async def pack(self, query: str) -> Window:
        """The window for `query`, extending the last one when the budget allows."""
        return self._record(await self._client._send(self._call(query)))


class AsyncRemoteJob:
    """A background ingest on the server; `wait()` returns its report."""

    def __init__(self, client: AsyncClient, state: JobState) -> None:
        self._client = client
        self.state = state
        self.id = state.id

    async def refresh(self) -> JobState:
        """The job's state now (status, stage, counts, failures)."""
        self.state = await self._client._send(_calls.job(self.id))
        return self.state

    async def wait(self, timeout: float | None = None) -> IngestReport:
        """Poll until the job is done: its report, or its error raised (`TimeoutError` past
        `timeout` seconds). A server that cannot be reached meanwhile (restarting) is asked
        again until then: the job is kept in its database."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.state.done:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"job {self.id} not done after {timeout} s")
            await asyncio.sleep(_calls.POLL_SECONDS)
            try:
                await self.refresh()
            except ServerUnavailableError:
                continue  # the server is restarting: the job is in its database, ask again
        return _calls.finished(self.state)


class AsyncRemoteCollection(_calls.CollectionFields):
    """A collection on the server, with the library's `Collection` methods, awaited.

    Like a library handle: a collection that does not exist yet is created by its first add
    (with the handle's `tokenizer` and `chunk_tokens`, checked against an existing one's),
    and once the handle has seen it exist, finding it gone is a `CollectionDeletedError` and
    its adds are refused rather than creating a new collection under the name.
    """

    def __init__(
        self,
        client: AsyncClient,
        name: str,
        *,
        tokenizer: str | None = None,
        chunk_tokens: int | None = None,
        must_exist: bool = False,
        seen: bool = False,
    ) -> None:
        super().__init__(
            name,
            tokenizer=tokenizer,
            chunk_tokens=chunk_tokens,
            must_exist=must_exist,
            seen=seen,
        )
        self._client = client

    async def _send(self, call: Call[T]) -> T:
        try:
            answer = await self._client._send(call)
        except CollectionNotFoundError as error:
            deleted = self._deleted(error)
            if deleted is None:
                raise
            raise deleted from error
        self._seen = True
        return answer

    @overload
    async def add(
        self, documents: Iterable[Document | str], *, background: Literal[True]
    ) -> AsyncRemoteJob: ...
    @overload
    async def add(
        self, documents: Iterable[Document | str], *, background: Literal[False] | None = None
    ) -> IngestReport: ...
    async def add(
        self, documents: Iterable[Document | str], *, background: bool | None = None
    ) -> IngestReport | AsyncRemoteJob:
        """Add documents (upsert by id). With `background=True` a `AsyncRemoteJob` to `wait()` on;
        otherwise the report (waiting for the job if the server made one of a large input)."""
        return await self._ingest(_calls.add(self._to(background), list(documents)), background)

    @overload
    async def add_files(
        self,
        paths: Sequence[str | os.PathLike[str]],
        *,
        root: str | os.PathLike[str] | None = None,
        background: Literal[True],
    ) -> AsyncRemoteJob: ...
    @overload
    async def add_files(
        self,
        paths: Sequence[str | os.PathLike[str]],
        *,
        root: str | os.PathLike[str] | None = None,
        background: Literal[False] | None = None,
    ) -> IngestReport: ...
    async def add_files(
        self,
        paths: Sequence[str | os.PathLike[str]],
        *,
        root: str | os.PathLike[str] | None = None,
        background: bool | None = None,
    ) -> IngestReport | AsyncRemoteJob:
        """Upload files (folders are walked here). Ids are the files' paths relative to
        `root`, as the library's `add_files(..., root=)` names them; without `root`, a file's
        name, and a folder's files by their path inside it."""
        return await self._ingest(_calls.add_files(self._to(background), paths, root), background)

    @overload
    async def add_conversation(
        self,
        messages: Sequence[Mapping[str, Any]] | str,
        *,
        id: str | None = None,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
        background: Literal[True],
    ) -> AsyncRemoteJob: ...
    @overload
    async def add_conversation(
        self,
        messages: Sequence[Mapping[str, Any]] | str,
        *,
        id: str | None = None,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
        background: Literal[False] | None = None,
    ) -> IngestReport: ...
    async def add_conversation(
        self,
        messages: Sequence[Mapping[str, Any]] | str,
        *,
        id: str | None = None,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
        background: bool | None = None,
    ) -> IngestReport | AsyncRemoteJob:
        """Add a chat as one document, each turn one unit, as `Collection.add_conversation`:
        a list of `{role, content}` messages, or one transcript text (`User: ...` lines)."""
        call = _calls.add_conversation(
            self._to(background), messages, id=id, title=title, metadata=metadata
        )
        return await self._ingest(call, background)

    @overload
    async def add_llama_documents(
        self,
        documents: Iterable[Any],
        *,
        root: str | os.PathLike[str] | None = None,
        background: Literal[True],
    ) -> AsyncRemoteJob: ...
    @overload
    async def add_llama_documents(
        self,
        documents: Iterable[Any],
        *,
        root: str | os.PathLike[str] | None = None,
        background: Literal[False] | None = None,
    ) -> IngestReport: ...
    async def add_llama_documents(
        self,
        documents: Iterable[Any],
        *,
        root: str | os.PathLike[str] | None = None,
        background: bool | None = None,
    ) -> IngestReport | AsyncRemoteJob:
        """Add llama-index `Document`s as `Collection.add_llama_documents` does, read here
        (their `id_` and metadata kept; a reader's file paths named relative to `root`,
        default the working directory; HTML and raw PDF parsed), then sent as documents."""
        converted = _calls.llama_documents(documents, root)
        return await self._ingest(_calls.add(self._to(background), converted), background)

    @overload
    async def rebuild_tree(
        self, summarizer: None = None, *, background: Literal[True]
    ) -> AsyncRemoteJob: ...
    @overload
    async def rebuild_tree(
        self, summarizer: None = None, *, background: Literal[False] | None = None
    ) -> IngestReport: ...
    async def rebuild_tree(
        self, summarizer: None = None, *, background: bool | None = None
    ) -> IngestReport | AsyncRemoteJob:
        """Rebuild every summary node with the server's summarizer, atomically (a
        summarizer of your own runs through the library, where the store is)."""
        return await self._ingest(
            _calls.rebuild_tree(self.name, summarizer, background), background
        )

    async def search(
        self, query: str, k: int = 10, *, include_summaries: bool = False, where: Where = None
    ) -> list[Hit]:
        """The k most relevant verbatim chunks (and summaries, if asked), best first; with
        `where`, of the documents that metadata filter keeps (as `Collection.search`)."""
        call = _calls.search(self.name, query, k, include_summaries, where)
        return await self._send(call)

    async def pack(
        self,
        query: str,
        *,
        budget: int,
        tokenizer: str = "o200k_base",
        overview_tokens: int | None = None,
        align: bool | int = False,
        provider: str | None = None,
        headers: HeaderStyle | None = None,
        where: Where = None,
    ) -> Window:
        """The best window for `query` within `budget` tokens, as `Collection.pack`; with a
        `provider`, `window.cache_plan(provider)` lays it out as that provider's request.
        `headers` (compact, full, none) as in `Collection.pack`; None: the server's default.
        `where` packs only the documents that metadata filter keeps."""
        options = _calls.pack_options(
            budget, tokenizer, overview_tokens, align, provider, headers, where
        )
        return await self._send(_calls.pack(self.name, query, options))

    def session(
        self,
        *,
        budget: int,
        tokenizer: str = "o200k_base",
        provider: str | None = None,
        overview_tokens: int | None = None,
        first_tokens: int | None = None,
        follow_up_tokens: int | None = None,
        token: str | None = None,
        where: Where = None,
    ) -> AsyncRemoteSession:
        """A session of follow-up questions whose windows extend each other, as
        `Collection.session`. The server keeps nothing; `token` (a session's `token`) resumes
        one, in this client or another."""
        options = _calls.session_options(
            budget=budget,
            tokenizer=tokenizer,
            provider=provider,
            overview_tokens=overview_tokens,
            first_tokens=first_tokens,
            follow_up_tokens=follow_up_tokens,
            where=where,
        )
        return AsyncRemoteSession(self._client, self.name, options, token)

    async def tree(self) -> TreeOverview:
        """The summary tree's shape: per level, node counts and token totals."""
        return await self._send(_calls.tree(self.name))

    async def node(self, node_id: int) -> TreeNode:
        """One summary node: its text, span, parent and children."""
        return await self._send(_calls.node(self.name, node_id))

    async def get(self, document_id: str) -> Document:
        """The stored document with this id."""
        return await self._send(_calls.get(self.name, document_id))

    async def documents(self, *, offset: int = 0, limit: int | None = None) -> list[DocumentInfo]:
        """Stored documents in collection order, without their text (paged through)."""
        found: list[DocumentInfo] = []
        following: int | None = offset
        while following is not None and (limit is None or len(found) < limit):
            page_size = min(_calls.PAGE, limit - len(found)) if limit is not None else _calls.PAGE
            page, following = await self._send(_calls.documents(self.name, following, page_size))
            found.extend(page)
        return found

    async def delete(
        self, ids: str | Sequence[str] | None = None, *, where: Where = None, all: bool = False
    ) -> DeleteReport:
        """Delete documents by id, by metadata filter, or both, in one index version, as
        `Collection.delete` (one id not stored is a `DocumentNotFoundError`; in a list it is
        reported in `missing`; a filter that keeps every document needs `all=True`)."""
        return await self._send(_calls.delete(self.name, ids, where, all=all))

    async def stats(self) -> CollectionStats:
        """Settings and size of the collection: documents, chunks, tokens, index version."""
        return await self._send(_calls.stats(self.name))

    async def _ingest(
        self, call: Call[IngestReport | JobState], background: bool | None
    ) -> IngestReport | AsyncRemoteJob:
        answer = await self._send(call)
        if isinstance(answer, IngestReport):
            return answer
        job = AsyncRemoteJob(self._client, answer)
        return job if background else await job.wait()
