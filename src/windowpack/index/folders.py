"""Index versions as folders: written aside and swapped in, unchanged files hard-linked.

Shared by the BM25 segments and the appendable dense index: a version's folder is built under
a temporary name and renamed into place (a reader never sees half a version), files that never
change once written (segments, a dense base) are hard-linked from the previous version's folder
instead of written again, and a manifest names the format, so an older store's folder is
recognised as such and rebuilt from the database.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"


def fresh_temporary(target: Path) -> Path:
    """An empty folder beside `target` to build its next version in."""
    temporary = target.with_name(target.name + ".tmp")
    shutil.rmtree(temporary, ignore_errors=True)
    temporary.mkdir(parents=True)
    return temporary


def swap_in(temporary: Path, target: Path, manifest: dict[str, Any]) -> None:
    """Write the manifest last, then replace `target` by the folder built in `temporary`."""
    (temporary / MANIFEST).write_text(json.dumps(manifest))
    shutil.rmtree(target, ignore_errors=True)
    os.replace(temporary, target)


def read_manifest(folder: Path, expected_format: str) -> dict[str, Any]:
    """The folder's manifest; `ValueError` (or `OSError`) when absent or of another format."""
    manifest: dict[str, Any] = json.loads((folder / MANIFEST).read_text())
    if manifest.get("format") != expected_format:
        raise ValueError(f"format {manifest.get('format')!r}, not {expected_format!r}")
    return manifest


def link_or_write(saved: Path | None, target: Path, write: Callable[[Path], None]) -> None:
    """Hard-link `saved` (a file that never changes) to `target`, else `write(target)`."""
    if saved is not None:
        try:
            os.link(saved, target)
            return
        except OSError:
            pass  # the old file is gone or links are unsupported here: write it again
    write(target)
