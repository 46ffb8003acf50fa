"""The exception tree. Every error windowpack raises on purpose derives from `WindowpackError`.

Each class carries a stable machine-readable `code` and the HTTP status the REST API maps it
to, so one handler turns any of them into `{"error": {"code", "message"}}`.

    WindowpackError
    ├── InvalidInputError            400  bad argument or bad input data
    │   ├── InvalidArgumentError     400  an argument out of range (names the argument)
    │   ├── UnsupportedFileError     415  a file type or content we cannot parse (names the file)
    │   ├── EmptyDocumentError       422  a file or document with no text (names it)
    │   ├── FileTooLargeError        413  a file over the configured size limit (names it)
    │   └── RequestTooLargeError     413  a request body over the server's limit
    ├── AuthenticationError          401  no API key, or an unknown or revoked one
    ├── PermissionDeniedError        403  the key may read this collection but not write it
    ├── NotFoundError                404
    │   ├── StoreNotFoundError       404  a store opened to read is not there (names the place)
    │   ├── CollectionNotFoundError  404  (also what a key sees for a collection outside its scope)
    │   ├── DocumentNotFoundError    404
    │   ├── JobNotFoundError         404  an ingest job id this server does not know
    │   └── InputPathNotFoundError   404  a path given to ingest does not exist
    ├── ConflictError                409  e.g. a collection opened with other settings
    ├── MissingDependencyError       500  an optional extra is not installed (names the extra)
    └── StorageError                 503  the database or index files could not be used
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

    def __init__(self, argument: str, problem: str) -> None:
        super().__init__(f"invalid argument {argument!r}: {problem}")
        self.argument = argument


class FileInputError(InvalidInputError):
    """Base for errors about one input file; the message names the file."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


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

    def __init__(self, limit: int) -> None:
        super().__init__(f"request body is over the limit of {limit:,} bytes")
        self.limit = limit


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

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"no windowpack store at {where!r}: {problem}")
        self.where = where


class CollectionNotFoundError(NotFoundError):
    """The collection does not exist; `existing` (when known) lists those that do."""

    code = "collection_not_found"

    def __init__(self, name: str, *, existing: Sequence[str] | None = None) -> None:
        message = f"collection {name!r} does not exist"
        if existing is not None:
            names = ", ".join(repr(name) for name in existing)
            message += f"; collections here: {names}" if names else "; there are no collections yet"
        super().__init__(message)
        self.name = name
        self.existing = list(existing) if existing is not None else None


class DocumentNotFoundError(NotFoundError):
    code = "document_not_found"

    def __init__(self, document_id: str, collection: str) -> None:
        super().__init__(f"document {document_id!r} does not exist in collection {collection!r}")
        self.document_id = document_id


class JobNotFoundError(NotFoundError):
    code = "job_not_found"

    def __init__(self, job_id: str) -> None:
        super().__init__(f"job {job_id!r} does not exist")
        self.job_id = job_id


class InputPathNotFoundError(NotFoundError):
    code = "path_not_found"

    def __init__(self, path: str) -> None:
        super().__init__(f"{path}: no such file or folder")
        self.path = path


class ConflictError(WindowpackError):
    """The request conflicts with stored state (e.g. a collection's fixed settings)."""

    code = "conflict"
    http_status = 409


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
