"""The kept query model's files: named by the model's files and the versions that shaped
them, trusted only when they are the bytes recorded (no model needed)."""

from __future__ import annotations

import os
import sys
from importlib import metadata
from pathlib import Path

import pytest

from windowpack.embed import query_files
from windowpack.embed.query_files import QueryModelFiles, new_record

DEFINITION = '{"version": "1.0"}'


@pytest.fixture
def model_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WINDOWPACK_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "model"
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"weights")
    (folder / "1_Pooling" / "config.json").write_text("{}")
    return folder


def _kept(folder: Path, graph: bytes = b"graph") -> QueryModelFiles:
    files = QueryModelFiles.of("my-model", str(folder))
    record = new_record(
        "my-model", graph, DEFINITION, max_length=8, inputs=("input_ids",), dimension=4
    )
    files.keep(graph, DEFINITION, record)
    return files


def test_kept_files_are_trusted_as_recorded(model_folder: Path) -> None:
    files = _kept(model_folder)
    trusted = files.trusted()
    assert trusted is not None
    record, definition = trusted
    assert definition == DEFINITION
    assert (record.max_length, record.inputs, record.dimension) == (8, ("input_ids",), 4)


@pytest.mark.parametrize("damaged", ["graph", "tokenizer"])
def test_a_file_that_is_not_the_recorded_one_is_not_trusted(
    model_folder: Path, damaged: str
) -> None:
    files = _kept(model_folder)
    path = files.graph if damaged == "graph" else files.tokenizer
    path.write_bytes(path.read_bytes()[:-1])
    assert files.trusted() is None


@pytest.mark.parametrize("missing", ["graph", "tokenizer", "record"])
def test_a_missing_file_is_not_trusted(model_folder: Path, missing: str) -> None:
    files = _kept(model_folder)
    getattr(files, missing).unlink()
    assert files.trusted() is None


def test_an_unreadable_record_is_not_trusted(model_folder: Path) -> None:
    files = _kept(model_folder)
    files.record.write_text('{"format": "query-model-2"}')
    assert files.trusted() is None
    files.record.write_text("not json")
    assert files.trusted() is None


def test_a_model_file_replaced_in_place_names_other_files(model_folder: Path) -> None:
    before = QueryModelFiles.of("my-model", str(model_folder))
    weights = model_folder / "model.safetensors"
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    after = QueryModelFiles.of("my-model", str(model_folder))
    assert after.graph != before.graph
    assert QueryModelFiles.of("my-model", str(model_folder)) == after


def test_another_version_of_a_shaping_library_names_other_files(
    model_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = QueryModelFiles.of("my-model", str(model_folder))
    real = query_files._versions
    monkeypatch.setattr(query_files, "_versions", lambda: {**real(), "torch": "99.0"})
    assert QueryModelFiles.of("my-model", str(model_folder)).graph != before.graph


def test_the_name_needs_no_import_of_the_libraries_it_names(
    model_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    named = QueryModelFiles.of("my-model", str(model_folder))
    for module in ("torch", "transformers", "sentence_transformers", "onnxruntime"):
        monkeypatch.setitem(sys.modules, module, None)  # an import of it fails
    assert QueryModelFiles.of("my-model", str(model_folder)) == named
    assert query_files._versions()["torch"] == metadata.version("torch")
