"""A file's bytes to text and to a `Document`: read within the size limit, decoded as UTF-8
with newlines normalised, and named by its path (the rules every format's parser shares)."""

from __future__ import annotations

import codecs
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from windowpack.errors import (
    EmptyDocumentError,
    FileTooLargeError,
    InputPathNotFoundError,
    UnsupportedFileError,
)
from windowpack.types import Document, DocumentKind, Span

_BINARY_SNIFF_BYTES = 8 * 1024


def read_bytes(path: Path, name: str, max_bytes: int) -> bytes:
    """The bytes of the regular file at `path` (`name` in errors), refused past `max_bytes`."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InputPathNotFoundError(name) from None
    except OSError as error:
        raise UnsupportedFileError(name, f"cannot be read: {error.strerror}") from error
    # Only regular files: reading a FIFO or device would block or never end.
    if not stat.S_ISREG(info.st_mode):
        raise UnsupportedFileError(name, "is not a regular file")
    _check_size(name, info.st_size, max_bytes)
    try:
        with path.open("rb") as handle:
            # Read one byte past the limit so a file that grew since `stat` is still refused.
            data = handle.read(max_bytes + 1)
    except OSError as error:
        raise UnsupportedFileError(name, f"cannot be read: {error.strerror}") from error
    _check_size(name, len(data), max_bytes)
    return data


def _check_size(name: str, size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise FileTooLargeError(
            name,
            f"is {_format_size(size)}; the limit is {_format_size(max_bytes)} (max_file_bytes)",
        )


def _format_size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    if size >= 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size} bytes"


def decode_text(data: bytes, name: str) -> str:
    """UTF-8 text (a BOM is accepted and dropped) with newlines normalised to "\\n"."""
    if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
        raise UnsupportedFileError(
            name, f"looks binary (a NUL byte in the first {_BINARY_SNIFF_BYTES // 1024} KiB)"
        )
    # The BOM is stripped by hand rather than with "utf-8-sig" so error offsets count from the
    # start of the file.
    body_start = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        text = data[body_start:].decode("utf-8")
    except UnicodeDecodeError as error:
        offset = body_start + error.start
        raise UnsupportedFileError(
            name, f"is not valid UTF-8: byte 0x{data[offset]:02x} at offset {offset}"
        ) from None
    text = normalise_newlines(text)
    if not text.strip():
        raise EmptyDocumentError(name, "has no text")
    return text


def normalise_newlines(text: str) -> str:
    """`text` with every "\\r\\n" and "\\r" made "\\n"."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def file_document(
    text: str,
    path: Path,
    *,
    file_format: str,
    kind: DocumentKind,
    title: str | None = None,
    units: list[Span] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Document:
    """The document of the file at `path`: its id, source and metadata path are the path's
    POSIX form, its title `title` or else the file name."""
    name = path.as_posix()
    return Document(
        text=text,
        title=title or path.name,
        id=name,
        metadata={"path": name, "format": file_format, **(extra or {})},
        kind=kind,
        units=units,
        source=name,
    )
