"""Uploaded files, streamed to a private temporary folder under the names the client gave.

Starlette spools each multipart file to disk past 1 MiB; here it is copied in 1 MiB blocks
into a fresh folder, so no upload is ever held whole in memory. A name is the file's id: a
relative path keeps its folders (`guide/index.md` beside `api/index.md`, as the library names
files by their path relative to its root), with no `.`, `..` or empty segment, so no name
reaches outside the folder (the rest of the id rules are the library's, at ingest); an
absolute name (`/home/me/report.pdf`, `C:\\Users\\me\\report.pdf`, as some clients send
them) is reduced to its last component. Names must be distinct, and a name no file system here
can hold (a component over 255 bytes, a NUL, not Unicode) is refused naming it.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fastapi import UploadFile

from windowpack.errors import InvalidArgumentError
from windowpack.text import storable

_BLOCK = 1024 * 1024
# The longest file name (one path component) of Linux, macOS and Windows file systems.
MAX_NAME_BYTES = 255


@dataclass(frozen=True)
class SavedUploads:
    """The files of one request, saved in `folder`; `remove()` deletes them. `digest` is
    the SHA-256 of their names and contents, in order (a retried upload has the same)."""

    folder: Path
    paths: list[Path]
    size: int
    digest: str

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def save_uploads(files: list[UploadFile], parent: Path) -> SavedUploads:
    """Copy `files` into a new folder under `parent`; the folder is removed on any error."""
    parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="upload-", dir=parent))
    try:
        paths, size, digest = [], 0, hashlib.sha256()
        for index, upload in enumerate(files):
            name = _safe_name(upload.filename, index)
            path = folder / name
            if path in paths:
                raise InvalidArgumentError("files", f"two files are named {name!r}")
            digest.update(name.encode() + b"\0")
            with _created(path, folder, index).open("wb") as out:
                while block := upload.file.read(_BLOCK):
                    out.write(block)
                    digest.update(block)
            digest.update(b"\0")
            size += path.stat().st_size
            paths.append(path)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return SavedUploads(folder=folder, paths=paths, size=size, digest=digest.hexdigest())


# A name that starts at a root, its backslashes made slashes: "/" or a Windows drive ("C:/").
_ABSOLUTE = re.compile(r"^(?:/|[A-Za-z]:/)")


def _safe_name(filename: str | None, index: int) -> str:
    """The relative path a file is saved (and named) under; `files[i]` named when refused."""
    name = (filename or "").replace("\\", "/")
    if _ABSOLUTE.match(name):
        name = name.rsplit("/", 1)[-1]
    # No leading dots: a hidden file or folder would be skipped as such when the folder is read.
    name = "/".join(
        part.lstrip(".") if part not in {".", ".."} else part for part in name.split("/")
    )
    if not name:
        return f"upload-{index + 1}"
    problem = storable.text_problem(name)
    parts = name.split("/")
    longest = max(len(part.encode("utf-8")) for part in parts)
    if problem is None and any(part in {"", ".", ".."} for part in parts):
        problem = "has a '.', '..' or empty path segment"
    if problem is None and longest > MAX_NAME_BYTES:
        problem = f"is {longest:,} bytes long; the most is {MAX_NAME_BYTES}"
    if problem is not None:
        shown = repr(name) if len(name) <= 60 else repr(name[:60]) + "..."
        raise InvalidArgumentError(f"files[{index}]", f"file name {shown} {problem}")
    return name


def _created(path: Path, folder: Path, index: int) -> Path:
    """`path`, its folders made, checked to lie inside `folder`; a name that is both a file
    and a folder of another (`a` and `a/b.md`) is refused naming it."""
    if not path.resolve().is_relative_to(folder.resolve()):
        raise InvalidArgumentError(f"files[{index}]", "file name reaches outside the upload")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise InvalidArgumentError(
            f"files[{index}]",
            f"file name {path.relative_to(folder).as_posix()!r} puts a file "
            "inside another file of the upload",
        ) from None
    if path.is_dir():
        raise InvalidArgumentError(
            f"files[{index}]",
            f"file name {path.relative_to(folder).as_posix()!r} is a folder of another file",
        )
    return path
