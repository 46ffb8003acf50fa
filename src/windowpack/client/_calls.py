"""Each REST call the clients make, once: its request, and its answer as the library's types.

`Client` and `AsyncClient` only send these and await or not; everything else (paths, bodies,
parsing, errors) lives here, so the two cannot drift apart.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from pydantic import TypeAdapter

from windowpack.errors import (
    CollectionDeletedError,
    CollectionNotFoundError,
    DocumentNotFoundError,
    InputPathNotFoundError,
    InvalidArgumentError,
    ServerUnavailableError,
    from_code,
    from_wire,
)
from windowpack.filters import Filter, parse_filter
from windowpack.prompt_cache import Tier
from windowpack.types import (
    CollectionStats,
    DeleteReport,
    Document,
    DocumentInfo,
    Hit,
    IngestReport,
    JobState,
    TreeNode,
    TreeOverview,
    Window,
    WindowItem,
)

T = TypeVar("T")
POLL_SECONDS = 0.2
"""How often `wait()` asks for a job's state."""
PAGE = 1000
"""Documents asked per page (the server's default `max_page`)."""


@dataclass(frozen=True, kw_only=True)
class Call(Generic[T]):
    """One request and how to read its answer (`parse` gets the decoded JSON)."""

    method: str
    path: str
    parse: Callable[[Any], T]
    json: Any = None
    params: Mapping[str, Any] = field(default_factory=dict)
    files: list[tuple[str, tuple[str, bytes]]] | None = None
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def retries(self) -> tuple[float, ...]:
        """Pauses before sending again when the connection fails: only a write that carries
        an Idempotency-Key is sent again (the server then answers the job it already made)."""
        return WRITE_RETRY_SECONDS if "Idempotency-Key" in self.headers else ()


WRITE_RETRY_SECONDS = (0.5, 1.0, 2.0, 4.0)


def write_headers() -> dict[str, str]:
    """A new Idempotency-Key for one write: its retries send the same."""
    return {"Idempotency-Key": f"wp-{uuid.uuid4().hex}"}


def checked(status: int, body: Any, url: str) -> Any:
    """The decoded body of a 2xx answer; any other answer raises its error from the tree."""
    if 200 <= status < 300:
        return body
    detail = body.get("error") if isinstance(body, dict) else None
    if isinstance(detail, dict):
        raise from_wire(str(detail.get("code")), str(detail.get("message")), status)
    raise from_wire("http_error", f"{url} answered HTTP {status}", status)


class CollectionFields:
    """What a client-side collection handle keeps, the same for `RemoteCollection` and
    `AsyncRemoteCollection`: its name, the settings its first write creates it with, whether
    it must exist (`create=False`) and whether it has seen it exist (then a collection not
    found was deleted since, and its writes create nothing, as a library handle's)."""

    def __init__(
        self,
        name: str,
        *,
        tokenizer: str | None = None,
        chunk_tokens: int | None = None,
        must_exist: bool = False,
        seen: bool = False,
    ) -> None:
        self.name = name
        self._settings = (tokenizer, chunk_tokens)
        self._must_exist = must_exist
        self._seen = seen

    def _to(self, background: bool | None) -> WriteTo:
        tokenizer, chunk_tokens = self._settings
        return WriteTo(
            name=self.name,
            tokenizer=tokenizer,
            chunk_tokens=chunk_tokens,
            must_exist=self._must_exist or self._seen,
            background=background,
        )

    def _deleted(self, error: CollectionNotFoundError) -> CollectionDeletedError | None:
        """What to raise instead of `error`: a collection this handle saw exist that is not
        found now was deleted since (`CollectionDeletedError`); None to raise `error`."""
        if self._seen and type(error) is CollectionNotFoundError:
            return CollectionDeletedError(self.name)
        return None


def unreachable(url: str, error: Exception) -> ServerUnavailableError:
    return ServerUnavailableError(f"the windowpack server at {url} could not be reached: {error}")


def _name(collection: str) -> str:
    return quote(collection, safe="")


def _adapter(kind: Any) -> Callable[[Any], Any]:
    return TypeAdapter(kind).validate_python


def health() -> Call[dict[str, Any]]:
    return Call(method="GET", path="/healthz", parse=dict)


def collections() -> Call[list[str]]:
    return Call(method="GET", path="/v1/collections", parse=lambda body: body["collections"])


def create_collection(
    name: str, tokenizer: str | None, chunk_tokens: int | None
) -> Call[CollectionStats]:
    body = {"name": name, "tokenizer": tokenizer, "chunk_tokens": chunk_tokens}
    return Call(method="POST", path="/v1/collections", json=body, parse=_adapter(CollectionStats))


def stats(name: str) -> Call[CollectionStats]:
    path = f"/v1/collections/{_name(name)}"
    return Call(method="GET", path=path, parse=_adapter(CollectionStats))


def delete_collection(name: str) -> Call[None]:
    # The server asks for the name again before it deletes a collection.
    return Call(
        method="DELETE",
        path=f"/v1/collections/{_name(name)}",
        params={"confirm": name},
        parse=lambda _body: None,
    )


@dataclass(frozen=True, kw_only=True)
class WriteTo:
    """Where an add goes and how: the collection; the settings of one its first write creates
    (checked against an existing one's); whether it must exist already (a handle that saw it:
    after a delete its writes are refused, as a library handle's are); in the background."""

    name: str
    tokenizer: str | None = None
    chunk_tokens: int | None = None
    must_exist: bool = False
    background: bool | None = None

    @property
    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = _background(self.background)
        if self.must_exist:
            params["create"] = "false"
        if self.tokenizer is not None:
            params["tokenizer"] = self.tokenizer
        if self.chunk_tokens is not None:
            params["chunk_tokens"] = self.chunk_tokens
        return params

    def call(self, route: str, **request: Any) -> Call[Any]:
        """The add to `route` of the collection (`documents`, `files`, ...)."""
        return Call(
            method="POST",
            path=f"/v1/collections/{_name(self.name)}/{route}",
            params=self.params,
            parse=_ingested,
            headers=write_headers(),
            **request,
        )


def add(to: WriteTo, documents: Iterable[Document | str]) -> Call[Any]:
    items = [_document_body(d if isinstance(d, Document) else Document(text=d)) for d in documents]
    return to.call("documents", json={"documents": items})


def add_files(
    to: WriteTo,
    paths: Sequence[str | os.PathLike[str]],
    root: str | os.PathLike[str] | None,
) -> Call[Any]:
    return to.call("files", files=[("files", upload) for upload in uploads(paths, root)])


def add_conversation(
    to: WriteTo,
    messages: Sequence[Mapping[str, Any]] | str,
    *,
    id: str | None,
    title: str | None,
    metadata: Mapping[str, Any] | None,
) -> Call[Any]:
    chat = messages if isinstance(messages, str) else [dict(message) for message in messages]
    body = {"messages": chat, "id": id, "title": title, "metadata": dict(metadata or {})}
    return to.call("conversations", json=body)


def llama_documents(
    documents: Iterable[Any], root: str | os.PathLike[str] | None
) -> list[Document]:
    """llama-index documents as the library reads them (`Collection.add_llama_documents`),
    here, where their files are: paths named relative to `root` (default: the working
    directory, a database-URL store's root), HTML and raw PDF parsed."""
    from windowpack.config import StoreConfig
    from windowpack.documents import from_llama_documents

    limits = StoreConfig()
    return from_llama_documents(
        documents,
        root=Path(root) if root is not None else Path.cwd(),
        max_bytes=limits.max_file_bytes,
        max_pdf_pages=limits.max_pdf_pages,
    )


def rebuild_tree(name: str, summarizer: object, background: bool | None) -> Call[Any]:
    if summarizer is not None:
        raise InvalidArgumentError(
            "summarizer",
            "a client cannot send a summarizer: the server rebuilds the tree with its own "
            "(rebuild with another one through the library, where the store is)",
        )
    return Call(
        method="POST",
        path=f"/v1/collections/{_name(name)}/tree:rebuild",
        params=_background(background),
        parse=_ingested,
        headers=write_headers(),
    )


Where = Mapping[str, Any] | Filter | None
"""A metadata filter as the library takes it (`filters`): Chroma's shape, or parsed."""


def where_body(where: Where) -> dict[str, Any]:
    """`{"where": ...}` for a request body, checked here as the library checks it (an error
    names `where` and the path inside it); {} for no filter, so that a server from before
    filters is not sent a field it does not know."""
    parsed = parse_filter(where)
    return {} if parsed is None else {"where": dict(parsed.where)}


def search(
    name: str, query: str, k: int, include_summaries: bool, where: Where = None
) -> Call[list[Hit]]:
    body = {"query": query, "k": k, "include_summaries": include_summaries, **where_body(where)}
    path = f"/v1/collections/{_name(name)}/search"
    return Call(method="POST", path=path, json=body, parse=_adapter(list[Hit]))


def pack(names: Sequence[str] | str, query: str, options: Mapping[str, Any]) -> Call[Window]:
    """One collection's window (`names` a name), or one over several (a list of names)."""
    body = {"query": query, **options, "format": "text"}

    def parse(answer: Any) -> Window:
        return window(answer, query)

    if isinstance(names, str):
        path = f"/v1/collections/{_name(names)}/pack"
        return Call(method="POST", path=path, json=body, parse=parse)
    body["collections"] = list(names)
    return Call(method="POST", path="/v1/pack", json=body, parse=parse)


@dataclass(frozen=True, kw_only=True)
class SessionAnswer:
    """A session pack's answer: the window, the session's new token, and whether the window
    extends the previous one (else `reason` says why it was packed afresh)."""

    window: Window
    token: str
    extends: bool
    reason: str | None


def session_pack(
    names: Sequence[str] | str, query: str, options: Mapping[str, Any], token: str | None
) -> Call[SessionAnswer]:
    """A session's next question over one collection (`names` a name) or several (a list)."""
    body = {"query": query, **options, "session": token, "format": "text"}

    def parse(answer: Any) -> SessionAnswer:
        return SessionAnswer(
            window=window(answer, query),
            token=answer["session"],
            extends=answer["extends"],
            reason=answer["session_reason"],
        )

    if isinstance(names, str):
        path = f"/v1/collections/{_name(names)}/sessions/pack"
        return Call(method="POST", path=path, json=body, parse=parse)
    body["collections"] = list(names)
    return Call(method="POST", path="/v1/sessions/pack", json=body, parse=parse)


class SessionFields:
    """What a client-side session keeps between questions, the same for `RemoteSession` and
    `AsyncRemoteSession`: the server keeps nothing, so the token is all of it."""

    def __init__(
        self, names: Sequence[str] | str, options: Mapping[str, Any], token: str | None
    ) -> None:
        self._names = names if isinstance(names, str) else list(names)
        self._options = dict(options)
        self._token = token
        self.window: Window | None = None
        """The last window packed (None before the first question)."""
        self.extends = False
        """Whether the last window starts with the previous one's text."""
        self.reason: str | None = None
        """Why the last window was packed afresh (None when it extends, or was the first)."""

    @property
    def budget(self) -> int:
        budget: int = self._options["budget"]
        return budget

    @property
    def token(self) -> str | None:
        """The session's state as an opaque string: `session(token=...)` resumes from it, in
        this client or another (None before the first question, unless resumed)."""
        return self._token

    def _call(self, query: str) -> Call[SessionAnswer]:
        return session_pack(self._names, query, self._options, self._token)

    def _record(self, answer: SessionAnswer) -> Window:
        self._token = answer.token
        self.window, self.extends, self.reason = answer.window, answer.extends, answer.reason
        return answer.window


def tree(name: str) -> Call[TreeOverview]:
    path = f"/v1/collections/{_name(name)}/tree"
    return Call(method="GET", path=path, parse=_adapter(TreeOverview))


def node(name: str, node_id: int) -> Call[TreeNode]:
    path = f"/v1/collections/{_name(name)}/tree/nodes/{node_id}"
    return Call(method="GET", path=path, parse=_adapter(TreeNode))


def get(name: str, document_id: str) -> Call[Document]:
    path = f"/v1/collections/{_name(name)}/documents/{quote(document_id, safe='/')}"
    return Call(method="GET", path=path, parse=_adapter(Document))


def documents(name: str, offset: int, limit: int) -> Call[tuple[list[DocumentInfo], int | None]]:
    def parse(body: Any) -> tuple[list[DocumentInfo], int | None]:
        return _adapter(list[DocumentInfo])(body["items"]), body["next_offset"]

    path = f"/v1/collections/{_name(name)}/documents"
    return Call(method="GET", path=path, params={"offset": offset, "limit": limit}, parse=parse)


def delete(
    name: str, ids: str | Sequence[str] | None, where: Where, *, all: bool = False
) -> Call[DeleteReport]:
    """Documents deleted by id, by filter or both, in one call (`Collection.delete`): one id
    not stored is a `DocumentNotFoundError`, as in the library; in a list, it is reported."""
    listed = [ids] if isinstance(ids, str) else None if ids is None else list(ids)
    body: dict[str, Any] = {**where_body(where)}
    if listed is not None:
        body["ids"] = listed
    if not body:
        raise InvalidArgumentError("ids", "name documents to delete, or give where (or both)")
    if all:
        body["all"] = True

    def parse(answer: Any) -> DeleteReport:
        report: DeleteReport = _delete_report(answer)
        if isinstance(ids, str) and report.missing:
            raise DocumentNotFoundError(ids, name)
        return report

    path = f"/v1/collections/{_name(name)}/documents:delete"
    return Call(method="POST", path=path, json=body, parse=parse, headers=write_headers())


def job(job_id: str) -> Call[JobState]:
    return Call(method="GET", path=f"/v1/jobs/{quote(job_id, safe='')}", parse=job_state)


def window(body: Any, query: str) -> Window:
    """A pack answer as the library's `Window`: each item's text cut from the window's."""
    text = body["text"]
    items = tuple(
        _item({**item, "text": text[item["offset"] : item["offset"] + item.pop("chars")]})
        for item in body["items"]
    )
    return Window(
        text=text,
        tokens=body["tokens"],
        items=items,
        cacheable_prefix_tokens=body["cacheable_prefix_tokens"],
        cacheable_prefix_chars=body["cacheable_prefix_chars"],
        index_version=body["index_version"],
        budget=body["budget"],
        tokenizer=body["tokenizer"],
        query=query,
        reason=body["reason"],
        index_versions=tuple(body["index_versions"].items()),
        retrieval=body.get("retrieval"),
        session_tiers=tuple(Tier(**tier) for tier in body.get("session_tiers", ())),
    )


_item = _adapter(WindowItem)
_delete_report = _adapter(DeleteReport)
_job_state = _adapter(JobState)


def job_state(body: Any) -> JobState:
    """A job as the server reports it (`GET /v1/jobs/{id}`, or a 202 answer)."""
    state: JobState = _job_state(body)
    return state


def finished(state: JobState) -> IngestReport:
    """A done job's report, or its error raised (the class of the tree its code names)."""
    if state.error is not None:
        # A job's error comes without an HTTP status; its code picks the class.
        raise from_code(state.error.code, state.error.message)
    assert state.report is not None, "a succeeded job carries its report"
    return state.report


def _ingested(body: Any) -> IngestReport | JobState:
    """A direct ingest's report, or (202) the job the server made of it."""
    if "status" in body and "stage" in body:
        return job_state(body)
    report: IngestReport = _adapter(IngestReport)(body)
    return report


def _background(background: bool | None) -> dict[str, Any]:
    return {} if background is None else {"background": str(background).lower()}


def _document_body(document: Document) -> dict[str, Any]:
    return asdict(document)


def uploads(
    paths: Sequence[str | os.PathLike[str]], root: str | os.PathLike[str] | None = None
) -> list[tuple[str, bytes]]:
    """Each file to upload with its name, which the server makes its id: with `root`, its
    path relative to `root`, as the library's `add_files(..., root=)` names it (a file outside
    `root` is an error: the server is not told this machine's paths); without, a file given
    by its name and a folder's files by their path inside it (`guide/index.md` beside
    `api/index.md`). A folder is walked here, sorted, hidden entries left out; two files of
    one name are an error naming both."""
    base = None if root is None else Path(os.path.abspath(root))
    named: dict[str, Path] = {}
    for given in map(Path, paths):
        if not given.exists():
            raise InputPathNotFoundError(os.fspath(given))
        files = [given] if given.is_file() else _walked(given)
        for path in files:
            name = _upload_name(path, given, base)
            if name in named and named[name] != path.resolve():
                raise InvalidArgumentError(
                    "paths", f"{named[name]} and {path} would both be named {name!r}: {_ROOT_HINT}"
                )
            named[name] = path.resolve()
    return [(name, path.read_bytes()) for name, path in named.items()]


_ROOT_HINT = "pass root= a folder that holds both, to name them by their paths inside it"


def _walked(folder: Path) -> list[Path]:
    return [
        path
        for path in sorted(folder.rglob("*"))
        if path.is_file()
        and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    ]


def _upload_name(path: Path, given: Path, root: Path | None) -> str:
    if root is None:
        return path.name if path == given else path.relative_to(given).as_posix()
    absolute = Path(os.path.abspath(path))
    if not absolute.is_relative_to(root):
        raise InvalidArgumentError("root", f"{path} is not inside root {root}")
    return absolute.relative_to(root).as_posix()


def pack_options(
    budget: int,
    tokenizer: str,
    overview_tokens: int | None,
    align: bool | int,
    provider: str | None = None,
    headers: str | None = None,
    where: Where = None,
) -> dict[str, Any]:
    """A pack request's options; `headers` and `where` only when asked for (a server from
    before the option answers without it, in its own style)."""
    options: dict[str, Any] = {
        "budget": budget,
        "tokenizer": tokenizer,
        "overview_tokens": overview_tokens,
        "align": align,
        "provider": provider,
        **where_body(where),
    }
    if headers is not None:
        options["headers"] = headers
    return options


def session_options(
    *,
    budget: int,
    tokenizer: str,
    provider: str | None,
    overview_tokens: int | None,
    first_tokens: int | None,
    follow_up_tokens: int | None,
    where: Where = None,
) -> dict[str, Any]:
    return {
        "budget": budget,
        "tokenizer": tokenizer,
        "provider": provider,
        "overview_tokens": overview_tokens,
        "first_tokens": first_tokens,
        "follow_up_tokens": follow_up_tokens,
        **where_body(where),
    }
