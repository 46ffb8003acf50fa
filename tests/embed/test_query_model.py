"""Questions through ONNX Runtime: the same vectors as torch's, a derived file kept and
checked, and torch whenever the ONNX path cannot be trusted."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from windowpack.embed import query_model
from windowpack.embed.embedder import SentenceTransformerEmbedder, get_embedder

pytestmark = pytest.mark.model

QUESTIONS = (
    "tapirs",
    "Which essay says that startups should do things that don't scale?",
    "What did the lighthouse keeper feed his three orange parrots at dawn, and why? " * 6,
)


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
    first = query_model.load_query_model(model, embedder.model_id)
    assert first is not None
    kept = list(cache.glob("*.onnx"))
    assert len(kept) == 1 and kept[0].stat().st_size > 1_000_000
    assert not list(cache.glob(".*.tmp"))

    def no_export(*args: object) -> bytes:
        raise AssertionError("exported again although a matching file was kept")

    monkeypatch.setattr(query_model, "_exported", no_export)
    again = query_model.load_query_model(model, embedder.model_id)
    assert again is not None
    features = model.preprocess([QUESTIONS[1]])
    np.testing.assert_allclose(again.embed(features), first.embed(features), atol=1e-6)


def test_a_damaged_file_is_exported_again(
    embedder: SentenceTransformerEmbedder, cache: Path
) -> None:
    model = embedder._loaded()
    assert query_model.load_query_model(model, embedder.model_id) is not None
    (kept,) = cache.glob("*.onnx")
    whole = kept.read_bytes()
    kept.write_bytes(whole[: len(whole) // 2])  # a full disk, an interrupted copy
    repaired = query_model.load_query_model(model, embedder.model_id)
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
    model = embedder._loaded()
    real = query_model._torch_pooled
    # As if the graph computed something else than the model: torch's answers moved.
    monkeypatch.setattr(query_model, "_torch_pooled", lambda m, f: -real(m, f))
    with caplog.at_level(logging.WARNING, logger="windowpack"):
        assert query_model.load_query_model(model, embedder.model_id) is None
    assert "does not match torch" in caplog.text
    assert not list(cache.glob("*.onnx"))  # nothing wrong is kept for the next process


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
        loaded = query_model.load_query_model(embedder._loaded(), embedder.model_id)
    assert loaded is not None
    assert "cannot keep the ONNX query model" in caplog.text
    assert blocker.read_text() == "not a folder"


def test_without_onnx_runtime_questions_stay_on_torch(
    embedder: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails
    assert query_model.load_query_model(embedder._loaded(), embedder.model_id) is None
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
    assert query_model.load_query_model(cls_pooled, "cls-pooled") is None


def test_questions_arriving_together_load_the_session_once(
    embedder: SentenceTransformerEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    import time

    from windowpack.embed import embedder as embedder_module

    loads: list[int] = []
    real = embedder_module.load_query_model

    def slow_load(model: object, name: str) -> object:
        loads.append(1)
        time.sleep(0.2)  # as an export would: the others arrive meanwhile
        return real(model, name)  # type: ignore[arg-type]

    monkeypatch.setattr(embedder_module, "load_query_model", slow_load)
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
