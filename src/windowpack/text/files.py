"""Writing a derived file so that a reader never sees half of it."""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path


def write_atomically(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file of this writer's own in the same
    folder (made if missing), then a rename: a reader finds the old file or the whole new
    one, and writers racing on one path each leave a whole file. Raises `OSError`, after
    removing the temporary file."""
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):  # its folder may be what could not be made
            temporary.unlink(missing_ok=True)
        raise
