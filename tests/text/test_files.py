"""A derived file is written whole or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from windowpack.text.files import write_atomically


def test_a_file_is_written_replaced_and_its_folder_made(tmp_path: Path) -> None:
    path = tmp_path / "deeper" / "table.bin"
    write_atomically(path, b"first")
    write_atomically(path, b"second, longer")
    assert path.read_bytes() == b"second, longer"
    assert sorted(p.name for p in path.parent.iterdir()) == ["table.bin"]  # no temporary left


def test_a_failed_write_raises_and_leaves_nothing_behind(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(OSError):
        write_atomically(blocker / "table.bin", b"data")
    assert blocker.read_text() == "not a folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]
