"""Ingest on Ray writes what a local ingest writes: same chunks, same tree, same vectors.

One local Ray instance (`ray.init(num_cpus=2)`) serves the whole module; each Ray store
starts its two worker actors and stops them when closed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import ray

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.errors import InvalidArgumentError, MissingDependencyError, UnsupportedFileError
from windowpack.index import embed_pieces
from windowpack.ingest.executor import make_executor
from windowpack.storage import repository
from windowpack.text.hashing import content_hash

HASH = StoreConfig(embedder="hash", chunk_tokens=64, fanout=3)
MODEL = StoreConfig(chunk_tokens=64, fanout=3)


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A local Ray instance with two CPUs, as CI runs it."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _corpus() -> list[wp.Document]:
    prose = [
        wp.Document(
            text="\n\n".join(
                f"Paragraph {p} of essay {n} talks about topic {n * p % 7}. " * 3 for p in range(6)
            ),
            id=f"essay-{n}",
            title=f"Essay {n}",
        )
        for n in range(5)
    ]
    markdown = wp.Document(
        text="# Guide\n\nIntro words.\n\n## Install\n\nRun the installer twice.\n\n## Use\n\n"
        + "Call it often. " * 30,
        id="guide.md",
        kind="markdown",
    )
    return [*prose, markdown]


_CHAT = [
    message
    for turn in range(12)
    for message in (
        {"role": "user", "content": f"Write a short poem about rivers number {turn}."},
        {"role": "assistant", "content": f"River {turn} runs to the sea. " * (1 + turn % 5)},
    )
]


def _ingest(path: Path, config: StoreConfig) -> dict[str, Any]:
    with wp.open(path, config=config) as store:
        collection = store.collection("docs")
        collection.add(_corpus())
        collection.add_conversation(_CHAT, id="chat")
        return _written(store, collection)


def _written(store: wp.Store, collection: wp.Collection) -> dict[str, Any]:
    """Everything the ingest stored that a Ray ingest must reproduce."""
    with store.sessions() as session:
        documents = repository.list_documents(session, collection.collection_id)
        chunks = [
            (doc.external_id, row.ordinal, row.char_start, row.char_end, row.token_count, row.unit)
            for doc in documents
            for row in repository.chunk_rows(session, doc.id)
        ]
        texts = [row.text for doc in documents for row in repository.chunk_rows(session, doc.id)]
        nodes = sorted(
            (node.level, node.leaf_start, node.leaf_end, node.text)
            for node in repository.tree_nodes(session, collection.collection_id)
        )
        texts += [text for *_, text in nodes]
        hashes = [content_hash(text) for text in texts]
        cached = repository.cached_embeddings(session, store.embedder.model_id, hashes)
    vectors = np.stack([np.frombuffer(cached[key], dtype=np.float32) for key in hashes])
    # The sentence vectors, embedded in their chunks' passes: all in the cache already.
    chunk_texts = texts[: len(chunks)]
    sentences, fresh = embed_pieces(store.sessions, store.embedder, chunk_texts)
    assert fresh == 0
    return {"chunks": chunks, "nodes": nodes, "vectors": vectors, "sentences": sentences}


def _assert_same(ray_run: dict[str, Any], local_run: dict[str, Any]) -> None:
    assert ray_run["chunks"] == local_run["chunks"]
    assert ray_run["nodes"] == local_run["nodes"]
    np.testing.assert_allclose(ray_run["vectors"], local_run["vectors"], atol=1e-5)
    np.testing.assert_allclose(ray_run["sentences"], local_run["sentences"], atol=1e-5)


def test_a_ray_ingest_stores_what_a_local_one_does(local_ray: None, tmp_path: Path) -> None:
    local_run = _ingest(tmp_path / "local", HASH)
    ray_run = _ingest(tmp_path / "ray", StoreConfig(**{**vars(HASH), "executor": "ray"}))
    assert len(local_run["chunks"]) > 20 and len(local_run["nodes"]) > 5
    _assert_same(ray_run, local_run)


@pytest.mark.model
def test_a_ray_ingest_with_the_real_model_matches_within_float_tolerance(
    local_ray: None, tmp_path: Path
) -> None:
    local_run = _ingest(tmp_path / "local", MODEL)
    ray_run = _ingest(tmp_path / "ray", StoreConfig(**{**vars(MODEL), "executor": "ray"}))
    _assert_same(ray_run, local_run)


def test_ray_parses_folders_as_local_parsing_does(local_ray: None, tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nFirst file.\n", encoding="utf-8")
    (folder / "b.txt").write_text("Second file, plain text.\n", encoding="utf-8")
    (folder / "chat.json").write_text(json.dumps(_CHAT[:4]), encoding="utf-8")
    (folder / "bad.bin").write_bytes(b"\x00\x01")  # skipped inside a folder
    reports = {}
    for executor in ("local", "ray"):
        config = StoreConfig(**{**vars(HASH), "executor": executor})
        with wp.open(tmp_path / executor, config=config) as store:
            report = store.collection("docs").add_files([folder], root=tmp_path)
            titles = sorted((doc.id, doc.title) for doc in store.collection("docs").documents())
        reports[executor] = (report.added, report.chunks, report.skipped, titles)
    assert reports["ray"] == reports["local"]
    assert reports["ray"][0] == 3 and "files/bad.bin" in reports["ray"][2]


def test_a_named_file_that_cannot_be_parsed_fails_on_ray_too(
    local_ray: None, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe\x00 not utf-8 \x80")
    on_ray = StoreConfig(**{**vars(HASH), "executor": "ray"})
    with (
        wp.open(tmp_path / "store", config=on_ray) as store,
        pytest.raises(UnsupportedFileError, match=r"bad\.txt"),
    ):
        store.collection("docs").add_files([bad], root=tmp_path)
    with wp.open(tmp_path / "store", config=HASH) as store:
        assert store.collections() == []  # nothing was written


def test_an_unknown_executor_is_refused_by_name() -> None:
    with pytest.raises(InvalidArgumentError, match="executor"):
        StoreConfig(executor="spark")
    with pytest.raises(InvalidArgumentError, match="ray_workers"):
        StoreConfig(executor="ray", ray_workers=0)


def test_without_ray_installed_the_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    monkeypatch.delitem(sys.modules, "windowpack.ingest.ray_executor", raising=False)
    with pytest.raises(MissingDependencyError, match=r"windowpack\[ray\]"):
        make_executor(StoreConfig(executor="ray"))


def test_import_windowpack_does_not_import_ray() -> None:
    code = "import sys, windowpack; print('ray' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_cli_ingest_on_ray_reads_the_address_from_the_environment(
    local_ray: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from windowpack.cli import app

    opened: list[StoreConfig] = []
    real_open = wp.open

    def recording_open(*args: Any, config: StoreConfig, **kwargs: Any) -> wp.Store:
        opened.append(config)
        return real_open(*args, config=config, **kwargs)

    monkeypatch.setattr(wp, "open", recording_open)
    monkeypatch.setenv("WINDOWPACK_RAY_ADDRESS", "auto")
    note = tmp_path / "note.txt"
    note.write_text("A note about the river, to ingest on Ray.\n", encoding="utf-8")
    store = str(tmp_path / "store")
    result = CliRunner().invoke(
        app, ["ingest", str(note), "--store", store, "--embedder", "hash", "--ray"]
    )
    assert result.exit_code == 0, result.output
    assert opened[0].executor == "ray" and opened[0].ray_address == "auto"
    with real_open(store, config=StoreConfig(embedder="hash")) as reopened:
        assert [doc.id for doc in reopened.collection("default").documents()] == ["note.txt"]
