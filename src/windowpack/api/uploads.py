"""Uploaded files, streamed to a private temporary folder under the names the client gave.

Starlette spools each multipart file to disk past 1 MiB; here it is copied in 1 MiB blocks
into a fresh folder, so no upload is ever held whole in memory. Names are reduced to their
last component (a client cannot write outside the folder) and must be distinct; a name that
no file system here can hold (over 255 bytes, a NUL, not Unicode) is refused naming it.
"""

from __future__ import annotations

import hashlib
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
            path = folder / _safe_name(upload.filename, index)
            if path in paths:
                raise InvalidArgumentError("files", f"two files are named {path.name!r}")
            digest.update(path.name.encode() + b"\0")
            with path.open("wb") as out:
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


def _safe_name(filename: str | None, index: int) -> str:
    # Last path component only, and no leading dots: a hidden file would be skipped as such.
    name = Path((filename or "").replace("\\", "/")).name.lstrip(".")
    if not name:
        return f"upload-{index + 1}"
    problem = storable.text_problem(name)
    if problem is None and len(name.encode("utf-8")) > MAX_NAME_BYTES:
        problem = f"is {len(name.encode('utf-8')):,} bytes long; the most is {MAX_NAME_BYTES}"
    if problem is not None:
        shown = repr(name) if len(name) <= 60 else repr(name[:60]) + "..."
        raise InvalidArgumentError(f"files[{index}]", f"file name {shown} {problem}")
    return name
