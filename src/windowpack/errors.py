"""The exception tree. Every error windowpack raises on purpose derives from `WindowpackError`.

Each class carries a stable machine-readable `code` and the HTTP status the REST API maps it
to, so one handler turns any of them into `{"error": {"code", "message"}}`.

    WindowpackError
    ├── InvalidInputError            400  bad argument or bad input data
    │   ├── InvalidArgumentError     400  an argument out of range (names the argument)
    │   ├── UnsupportedFileError     415  a file type or content we cannot parse (names the file)
    │   ├── EmptyDocumentError       422  a file or document with no text (names it)
    │   ├── FileTooLargeError        413  a file over the configured size limit (names it)
    │   ├── RequestTooLargeError     413  a request body over the server's limit
    │   └── RequestTimeoutError      408  a request body that stopped arriving
    ├── AuthenticationError          401  no API key, or an unknown or revoked one
    ├── PermissionDeniedError        403  the key may read this collection but not write it
    ├── NotFoundError                404
    │   ├── StoreNotFoundError       404  a store opened to read is not there (names the place)
    │   ├── CollectionNotFoundError  404  (also what a key sees for a collection outside its scope)
    │   │   └── CollectionDeletedError 404  deleted while a handle or request was using it
    │   ├── DocumentNotFoundError    404
    │   ├── JobNotFoundError         404  an ingest job id this server does not know
    │   └── InputPathNotFoundError   404  a path given to ingest does not exist
    ├── ConflictError                409  e.g. a collection opened with other settings
    │   └── EmbedderMismatchError    409  a collection built with another embedder (says the fix)
    ├── MissingDependencyError       500  an optional extra is not installed (names the extra)
    ├── StorageError                 503  the database or index files could not be used
    ├── JobInterruptedError          503  a job whose worker stopped too many times
    └── ServerUnavailableError       503  (client) the REST server could not be reached

`windowpack.Client` raises the same classes from the server's error codes (`from_wire`).
"""

from __future__ import annotations

from collections.abc import Sequence


class WindowpackError(Exception):
    """Root of every error windowpack raises on purpose."""

    code: str = "windowpack_error"
    http_status: int = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInputError(WindowpackError):
    """The caller gave input that cannot be used."""

    code = "invalid_input"
    http_status = 400


class InvalidArgumentError(InvalidInputError):
    """An argument is out of range or of the wrong form; the message names the argument."""

    code = "invalid_argument"
    argument: str | None = None  # None when raised by the client from a server's answer

    def __init__(self, argument: str, problem: str) -> None:
        super().__init__(f"invalid argument {argument!r}: {problem}")
        self.argument = argument


class FileInputError(InvalidInputError):
    """Base for errors about one input file; the message names the file."""

    path: str | None = None
    problem: str | None = None

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem

    def __reduce__(self) -> tuple[type[FileInputError], tuple[str, str]]:
        # Pickled as its arguments: a parse on a Ray worker sends its error back whole.
        return (type(self), (str(self.path), str(self.problem)))


class UnsupportedFileError(FileInputError):
    """The file's type or content cannot be parsed (binary, undecodable, unknown extension)."""

    code = "unsupported_file"
    http_status = 415


class EmptyDocumentError(FileInputError):
    """The file or document holds no text (an empty file, a PDF with no text layer)."""

    code = "empty_document"
    http_status = 422


class FileTooLargeError(FileInputError):
    """The file is larger than the configured `max_file_bytes`."""

    code = "file_too_large"
    http_status = 413


class RequestTooLargeError(InvalidInputError):
    """A request body is larger than the server's `max_request_bytes`."""

    code = "request_too_large"
    http_status = 413
    limit: int | None = None

    def __init__(self, limit: int) -> None:
        super().__init__(f"request body is over the limit of {limit:,} bytes")
        self.limit = limit


class RequestTimeoutError(InvalidInputError):
    """Nothing of a request's body arrived for `seconds`, or (`whole`) the body did not all
    arrive within `seconds` of its headers (a stalled or very slow client)."""

    code = "request_timeout"
    http_status = 408
    seconds: float | None = None

    def __init__(self, seconds: float, *, whole: bool = False) -> None:
        super().__init__(
            f"the request body did not arrive within {seconds:g} s of its headers"
            if whole
            else f"the request body stopped arriving: nothing for {seconds:g} s"
        )
        self.seconds = seconds


class AuthenticationError(WindowpackError):
    """The server needs an API key and got none, or one that is unknown or revoked."""

    code = "unauthorized"
    http_status = 401


class PermissionDeniedError(WindowpackError):
    """The API key may read the collection but this request writes to it."""

    code = "forbidden"
    http_status = 403


class NotFoundError(WindowpackError):
    """Something named by the caller does not exist."""

    code = "not_found"
    http_status = 404


class StoreNotFoundError(NotFoundError):
    """A store opened with `create=False` (every read path of the CLI) is not there."""

    code = "store_not_found"
    where: str | None = None

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"no windowpack store at {where!r}: {problem}")
        self.where = where


class CollectionNotFoundError(NotFoundError):
    """The collection does not exist; `existing` (when known) lists those that do."""

    code = "collection_not_found"
    name: str | None = None
    existing: list[str] | None = None

    def __init__(self, name: str, *, existing: Sequence[str] | None = None) -> None:
        message = f"collection {name!r} does not exist"
        if existing is not None:
            names = ", ".join(repr(name) for name in existing)
            message += f"; collections here: {names}" if names else "; there are no collections yet"
        super().__init__(message)
        self.name = name
        self.existing = list(existing) if existing is not None else None


class CollectionDeletedError(CollectionNotFoundError):
    """The collection a handle (or a request) was using was deleted meanwhile, by another
    handle, process or replica, or its id was given to another collection since (SQLite).
    Raised where the collection's row is read, named by the caller (by id where only the
    index layer knew it); `Store.collection(name)` opens what the name holds now."""

    code = "collection_deleted"
    collection_id: int | None = None

    def __init__(self, name: str | None = None, *, collection_id: int | None = None) -> None:
        what = repr(name) if name is not None else f"with id {collection_id}"
        WindowpackError.__init__(
            self,
            f"collection {what} was deleted after it was opened (here, or by another "
            "process or replica): open it again by name to use what is stored under that "
            "name now",
        )
        self.name, self.existing, self.collection_id = name, None, collection_id


class DocumentNotFoundError(NotFoundError):
    code = "document_not_found"
    document_id: str | None = None

    def __init__(self, document_id: str, collection: str) -> None:
        super().__init__(f"document {document_id!r} does not exist in collection {collection!r}")
        self.document_id = document_id


class JobNotFoundError(NotFoundError):
    code = "job_not_found"
    job_id: str | None = None

    def __init__(self, job_id: str) -> None:
        super().__init__(f"job {job_id!r} does not exist")
        self.job_id = job_id


class InputPathNotFoundError(NotFoundError):
    code = "path_not_found"
    path: str | None = None

    def __init__(self, path: str) -> None:
        super().__init__(f"{path}: no such file or folder")
        self.path = path


class ConflictError(WindowpackError):
    """The request conflicts with stored state (e.g. a collection's fixed settings)."""

    code = "conflict"
    http_status = 409


class EmbedderMismatchError(ConflictError):
    """A collection was built with another embedding model than the store was opened with:
    its vectors and a question's would not compare. The message ends with the fix in the
    terms of the caller's surface (`fixed_by`): the library's `StoreConfig(embedder=...)`,
    the CLI's `--embedder`, the server's setting."""

    code = "embedder_mismatch"
    collection: str | None = None
    built_with: str | None = None

    def __init__(self, collection: str, built_with: str, *, fix: str | None = None) -> None:
        fix = fix or f"open the store with StoreConfig(embedder={built_with!r})"
        super().__init__(f"collection {collection!r} was built with embedder {built_with!r}; {fix}")
        self.collection, self.built_with = collection, built_with

    def fixed_by(self, fix: str) -> EmbedderMismatchError:
        """The same error, its fix said as `fix` (for a surface whose user changes
        something else than a `StoreConfig`)."""
        return EmbedderMismatchError(str(self.collection), str(self.built_with), fix=fix)


class MissingDependencyError(WindowpackError, ImportError):
    """An optional extra is needed; the message says which one to install."""

    code = "missing_dependency"
    http_status = 500

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"{package} is not installed; install it with: pip install 'windowpack[{extra}]'"
        )


class StorageError(WindowpackError):
    """The database or the index files could not be read or written."""

    code = "storage_error"
    http_status = 503


class JobInterruptedError(WindowpackError):
    """An ingest job was interrupted (the process running it stopped) as many times as a job
    may be run; none of its documents were stored, and sending it again is safe."""

    code = "job_interrupted"
    http_status = 503


class ServerUnavailableError(WindowpackError):
    """The client could not reach the REST server, or it answered with a server error."""

    code = "server_unavailable"
    http_status = 503


# Errors the REST layer answers with codes of its own (FastAPI validation, routing).
_OTHER_CODES: dict[str, type[WindowpackError]] = {
    "validation_error": InvalidInputError,
    "method_not_allowed": InvalidInputError,
    "unsupported_media_type": UnsupportedFileError,
    "bad_request": InvalidInputError,
}
_BY_STATUS: dict[int, type[WindowpackError]] = {
    400: InvalidInputError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    408: RequestTimeoutError,
    409: ConflictError,
    413: RequestTooLargeError,
    415: UnsupportedFileError,
    422: InvalidInputError,
}


def from_wire(code: str, message: str, status: int) -> WindowpackError:
    """The error a server answered (`{"error": {"code", "message"}}` with `status`) as the
    class of this tree with that code, keeping the server's code, status and message.

    An unknown code maps by status (5xx: `ServerUnavailableError`); attributes a class sets
    from its constructor's arguments (`argument`, `name`, ...) are None.
    """
    classes = {cls.code: cls for cls in _subclasses(WindowpackError)}
    cls = classes.get(code) or _OTHER_CODES.get(code) or _BY_STATUS.get(status)
    cls = cls or (ServerUnavailableError if status >= 500 else WindowpackError)
    error = cls.__new__(cls)
    WindowpackError.__init__(error, message)
    error.code, error.http_status = code, status
    return error


def from_code(code: str, message: str) -> WindowpackError:
    """The error of this tree with `code` and `message` (as a job recorded it), with its
    class's HTTP status."""
    classes = {cls.code: cls for cls in _subclasses(WindowpackError)}
    cls = classes.get(code) or _OTHER_CODES.get(code)
    return from_wire(code, message, cls.http_status if cls is not None else 500)


def _subclasses(root: type[WindowpackError]) -> list[type[WindowpackError]]:
    found = []
    for cls in root.__subclasses__():
        found.append(cls)
        found.extend(_subclasses(cls))
    return found
