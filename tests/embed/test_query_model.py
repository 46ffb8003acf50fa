"""Questions through ONNX Runtime: the same vectors as torch's, a derived file checked when
made, kept with a record and trusted after that, and torch whenever the ONNX path cannot be
trusted."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from windowpack.embed import embedder as embedder_module
from windowpack.embed import query_model
from windowpack.embed.embedder import SentenceTransformerEmbedder, bundled_model_path, get_embedder
from windowpack.embed.query_files import QueryModelFiles

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

pytestmark = pytest.mark.model

QUESTIONS = (
    "tapirs",
    "Which essay says that startups should do things that don't scale?",
    "What did the lighthouse keeper feed his three orange parrots at dawn, and why? " * 6,
    # Past the model's 256 word pieces: embedded in windows, as a document would be.
    "Which of the 1,024 lighthouse keepers fed 3.5 parrots at dawn, and why? " * 30,
)
HEAVY = ("torch", "transformers", "sentence_transformers")


@pytest.fixture(scope="module")
def embedder() -> Iterator[SentenceTransformerEmbedder]:
    model = get_embedder()
    assert isinstance(model, SentenceTransformerEmbedder)
    model.embed(["warm up"])
    yield model


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("WINDOWPACK_CACHE_DIR", str(tmp_path))
    return tmp_path / "query-models"


def _made(
    model: SentenceTransformer, name: str, files: QueryModelFiles
) -> query_model.OnnxQueryModel | None:
    """The question model of a model loaded already (`query_model_for`)."""
    return query_model.query_model_for(files, name, lambda: model)


def _files(embedder: SentenceTransformerEmbedder) -> QueryModelFiles:
    return QueryModelFiles.of(embedder.model_id, bundled_model_path())


def _load(embedder: SentenceTransformerEmbedder) -> query_model.OnnxQueryModel | None:
    """The question model of the real model, kept under the test's cache folder."""
    return _made(embedder._loaded(), embedder.model_id, _files(embedder))


def _torch_vector(embedder: SentenceTransformerEmbedder, text: str) -> np.ndarray:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(embedder, "_query_model", None)
        return embedder.embed_query(text)


def test_questions_go_through_onnx_runtime_with_torchs_vectors(
    embedder: SentenceTransformerEmbedder,
) -> None:
    for question in QUESTIONS:
        vector = embedder.embed_query(question)
        assert vector.dtype == np.float32 and vector.shape == (384,)
        np.testing.assert_allclose(vector, _torch_vector(embedder, question), atol=1e-6)
        np.testing.assert_allclose(vector, embedder.embed([question])[0], atol=1e-6)
    assert isinstance(embedder._query_model, query_model.OnnxQueryModel)


def test_the_session_runs_on_one_intra_op_thread(embedder: SentenceTransformerEmbedder) -> None:
    embedder.embed_query("warm up")
    loaded = embedder._query_model
    assert isinstance(loaded, query_model.OnnxQueryModel)
    assert loaded._session.get_session_options().intra_op_num_threads == 1


def test_the_export_is_kept_and_read_back_without_exporting_again(
    embedder: SentenceTransformerEmbedder, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = embedder._loaded()
    first = _load(embedder)
    assert first is not None
    kept = list(cache.glob("*.onnx"))
    assert len(kept) == 1 and kept[0].stat().st_size > 1_000_000
    assert not list(cache.glob(".*.tmp"))

    def no_export(*args: object) -> bytes:
        raise AssertionError("exported again although a matching file was kept")

    monkeypatch.setattr(query_model, "_exported", no_export)
    again = _load(embedder)
    assert again is not None
    features = model.preprocess([QUESTIONS[1]])
    np.testing.assert_allclose(again.embed(features), first.embed(features), atol=1e-6)


def test_a_damaged_file_is_exported_again(
    embedder: SentenceTransformerEmbedder, cache: Path
) -> None:
    model = embedder._loaded()
    assert _load(embedder) is not None
    (kept,) = cache.glob("*.onnx")
    whole = kept.read_bytes()
    kept.write_bytes(whole[: len(whole) // 2])  # a full disk, an interrupted copy
    repaired = _load(embedder)
    assert repaired is not None
    assert kept.read_bytes() == whole
    features = model.preprocess([QUESTIONS[0]])
    expected = query_model._torch_pooled(model, features)
    found = repaired.embed(features)
    np.testing.assert_allclose(found / np.linalg.norm(found), expected, atol=1e-6)


def test_an_export_that_does_not_match_torch_is_not_used(
    embedder: SentenceTransformerEmbedder,
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    real = query_model._torch_pooled
    # As if the graph computed something else than the model: torch's answers moved.
    monkeypatch.setattr(query_model, "_torch_pooled", lambda m, f: -real(m, f))
    with caplog.at_level(logging.WARNING, logger="windowpack"):
        assert _load(embedder) is None
    assert "does not match torch" in caplog.text
    assert not list(cache.glob("*"))  # nothing wrong is kept for the next process


def test_an_unwritable_cache_folder_still_gives_a_session(
    embedder: SentenceTransformerEmbedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("WINDOWPACK_CACHE_DIR", str(blocker))
    with caplog.at_level(logging.WARNING, logger="windowpack"):
        loaded = _made(embedder._loaded(), embedder.model_id, _files(embedder))
    assert loaded is not None
    assert "cannot keep the ONNX query model" in caplog.text
    assert blocker.read_text() == "not a folder"


def test_without_onnx_runtime_questions_stay_on_torch(
    embedder: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails
    assert _load(embedder) is None
    fresh = SentenceTransformerEmbedder(embedder.model_id)
    monkeypatch.setattr(fresh, "_model", embedder._loaded())
    vector = fresh.embed_query(QUESTIONS[1])
    assert fresh._query_model is None
    np.testing.assert_allclose(vector, embedder.embed([QUESTIONS[1]])[0], atol=1e-6)


def test_a_model_that_is_not_mean_pooled_is_left_to_torch(
    embedder: SentenceTransformerEmbedder,
) -> None:
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.models import Pooling

    model = embedder._loaded()
    cls_pooled = SentenceTransformer(modules=[model[0], Pooling(384, pooling_mode="cls")])
    files = QueryModelFiles.of("cls-pooled", "cls-pooled")
    assert _made(cls_pooled, "cls-pooled", files) is None


def test_questions_arriving_together_load_the_session_once(
    embedder: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    import time

    loads: list[int] = []
    real = embedder_module.query_model_for

    def slow_load(*args: object) -> object:
        loads.append(1)
        time.sleep(0.2)  # as an export would: the others arrive meanwhile
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(embedder_module, "query_model_for", slow_load)
    fresh = SentenceTransformerEmbedder(embedder.model_id)
    monkeypatch.setattr(fresh, "_model", embedder._loaded())
    vectors: list[np.ndarray] = []
    threads = [
        threading.Thread(target=lambda: vectors.append(fresh.embed_query(QUESTIONS[1])))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(loads) == 1 and len(vectors) == 4
    for vector in vectors:
        np.testing.assert_allclose(vector, vectors[0], atol=1e-7)


def test_the_record_names_the_checked_files_and_the_versions_that_made_them(
    embedder: SentenceTransformerEmbedder, cache: Path
) -> None:
    files = _files(embedder)
    made = _made(embedder._loaded(), embedder.model_id, files)
    assert made is not None and made.dimension == 384
    record = json.loads(files.record.read_text())
    assert record["max_length"] == 256 and record["dimension"] == 384
    assert record["inputs"] == ["input_ids", "attention_mask", "token_type_ids"]
    assert set(record["made_by"]) >= {"torch", "transformers", "onnxruntime", "tokenizers"}
    assert files.trusted() is not None


def test_a_record_naming_other_bytes_is_not_trusted_and_the_file_is_made_again(
    embedder: SentenceTransformerEmbedder, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _files(embedder)
    assert _made(embedder._loaded(), embedder.model_id, files) is not None
    record = json.loads(files.record.read_text())
    files.record.write_text(json.dumps({**record, "graph_sha256": "0" * 64}))
    assert query_model.kept_query_model(files) is None
    exports: list[int] = []
    real = query_model._exported
    monkeypatch.setattr(query_model, "_exported", lambda *a: exports.append(1) or real(*a))
    assert _made(embedder._loaded(), embedder.model_id, files) is not None
    assert exports == [1]
    assert query_model.kept_query_model(files) is not None


def test_a_kept_model_embeds_without_the_model_and_knows_its_dimension(
    embedder: SentenceTransformerEmbedder, cache: Path
) -> None:
    assert _load(embedder)
    fresh = SentenceTransformerEmbedder(embedder.model_id)
    assert fresh.dimension == 384
    vector = fresh.embed_query(QUESTIONS[1])
    assert fresh._model is None  # neither question nor dimension loaded the torch model
    np.testing.assert_allclose(vector, embedder.embed([QUESTIONS[1]])[0], atol=1e-6)


def test_a_later_process_embeds_questions_without_importing_torch(
    embedder: SentenceTransformerEmbedder, cache: Path
) -> None:
    assert _load(embedder)
    script = (
        "import json, sys\n"
        "from windowpack.embed import get_embedder\n"
        "embedder = get_embedder()\n"
        "vectors = [embedder.embed_query(q).tolist() for q in json.loads(sys.argv[1])]\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(json.dumps({'vectors': vectors, 'heavy': heavy}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(QUESTIONS)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "WINDOWPACK_CACHE_DIR": str(cache.parent)},
    )
    found = json.loads(done.stdout)
    assert found["heavy"] == []
    expected = embedder.embed(list(QUESTIONS))
    np.testing.assert_allclose(np.asarray(found["vectors"]), expected, atol=1e-6)


def test_the_dimension_without_a_kept_model_loads_the_model_and_exports_nothing(
    embedder: SentenceTransformerEmbedder, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = SentenceTransformerEmbedder(embedder.model_id)
    monkeypatch.setattr(embedder_module, "_load_sentence_transformer", lambda name: embedder.model)
    assert fresh.dimension == 384
    assert fresh._model is not None and not list(cache.glob("*"))
    assert fresh._query_model is False  # undecided: the first question may still export
