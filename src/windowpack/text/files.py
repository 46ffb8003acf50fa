"""Writing a derived file so that a reader never sees half of it."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable
from pathlib import Path


def write_atomically(
    path: Path, data: bytes | Callable[[Path], object], *, suffix: str = ""
) -> None:
    """Write `data` to `path` through a temporary file of this writer's own in the same
    folder (made if missing), then a rename: a reader finds the old file or the whole new
    one, and writers racing on one path each leave a whole file. Raises what the write
    raised (`OSError`, or a writer's own error), after removing the temporary file.

    `data` is the bytes, or a function that writes the file at the path it is given (for
    writers that take a file name: `np.save`, `faiss.write_index`). The temporary name ends
    in `.tmp` and then `suffix`, for writers that insist on one (`np.save` appends `.npy`
    to a name without it), so that a folder listing never takes it for a finished file.
    """
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp{suffix}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            temporary.write_bytes(data)
        else:
            data(temporary)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):  # its folder may be what could not be made
            temporary.unlink(missing_ok=True)
        raise
