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


def test_a_writer_given_the_temporary_path_and_its_suffix(tmp_path: Path) -> None:
    import numpy as np

    path = tmp_path / "counts.npy"
    seen: list[Path] = []

    def save(where: Path) -> None:
        seen.append(where)
        np.save(where, np.arange(3))

    write_atomically(path, save, suffix=".npy")
    assert seen[0].name.endswith(".tmp.npy") and seen[0].parent == tmp_path
    assert np.load(path).tolist() == [0, 1, 2]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counts.npy"]


def test_a_failing_writer_raises_its_error_and_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "index.faiss"
    path.write_bytes(b"old")

    def half_then_fail(where: Path) -> None:
        where.write_bytes(b"ha")
        raise RuntimeError("disk gone")

    with pytest.raises(RuntimeError, match="disk gone"):
        write_atomically(path, half_then_fail)
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.faiss"]
