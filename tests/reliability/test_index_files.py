"""Damaged and wrong-shaped index files are noticed and rebuilt (issue 14, D13).

Each case damages the files of the current version on disk, opens a new store on them and
checks that search and pack answer as before and that the files were written again. Before
the fix a FAISS file of another dimension, or an ids file of the wrong length, loaded
without error and every search then failed for good.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.index.dense import FaissIndex

CONFIG = StoreConfig(embedder="hash", chunk_tokens=64)
TEXTS = [
    "Lighthouse keepers trim the wick and polish the great lens every evening.",
    "Beekeepers check the queen in spring; healthy colonies store honey for winter.",
    "Glaciers carve valleys while meltwater carries gravel and silt to the plains.",
    "Grandmasters study endgames where knights and bishops trap the opposing king.",
]


def _faiss_of_dimension(dense: Path, dimension: int) -> None:
    count = 12
    vectors = np.random.default_rng(0).standard_normal((count, dimension)).astype(np.float32)
    ids = np.arange(count, dtype=np.int64)
    FaissIndex.build(dimension, ids, vectors, ann_threshold=10**6).save(dense)


def _ids_file_of_length(dense: Path, delta: int) -> None:
    """The dense base's ids, saved beside its FAISS file, of the wrong length."""
    ids_file = dense.with_name(dense.name.replace(".faiss", ".ids.npy"))
    ids = np.load(ids_file)
    np.save(ids_file, ids[:delta] if delta < 0 else np.concatenate([ids, ids[:delta]]))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _each_file(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


DAMAGE: dict[str, Callable[[Path, Path], None]] = {
    "faiss of another dimension": lambda dense, _: _faiss_of_dimension(dense, 17),
    "faiss of the right dimension, other vectors": lambda dense, _: _faiss_of_dimension(dense, 384),
    "ids file too short": lambda dense, _: _ids_file_of_length(dense, -1),
    "ids file too long": lambda dense, _: _ids_file_of_length(dense, 3),
    "truncated faiss": lambda dense, _: _truncate(dense),
    "truncated lexical files": lambda _, lexical: [_truncate(p) for p in _each_file(lexical)],
    "garbage faiss": lambda dense, _: dense.write_bytes(b"\x00garbage" * 100),
    "garbage lexical files": lambda _, lexical: [
        p.write_bytes(b"{not json") for p in _each_file(lexical)
    ],
    "lexical folder gone": lambda _, lexical: shutil.rmtree(lexical),
    "faiss gone": lambda dense, _: dense.unlink(),
    "manifest gone": lambda dense, _: next(dense.parent.parent.glob("manifest-*")).unlink(),
    "files of the previous version renamed": lambda dense, lexical: _older_version(dense, lexical),
}


def _older_version(dense: Path, lexical: Path) -> None:
    """The version's files replaced by a copy of another store's, with its manifest."""
    other = dense.parent.parent.parent.parent.parent / "other"
    with wp.open(other, config=CONFIG) as store:
        store.collection("docs").add([wp.Document(text=TEXTS[0], id="t0")])
    source = next((other / "indexes").glob("collection-*"))
    shutil.rmtree(dense.parent)
    shutil.copytree(next(p for p in source.glob("dense-v*") if p.is_dir()), dense.parent)
    shutil.rmtree(lexical)
    shutil.copytree(next(p for p in source.glob("lexical-v*") if p.is_dir()), lexical)
    manifest = next(dense.parent.parent.glob("manifest-*"))
    text = next(source.glob("manifest-*")).read_text().replace('"version": 1', '"version": 2')
    manifest.write_text(text)


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, list[tuple[str, float]], str]:
    """A store of four documents at version 2, its search results and an 80-token window."""
    folder = tmp_path / "s" / "store"
    with wp.open(folder, config=CONFIG) as store:
        col = store.collection("docs")
        col.add([wp.Document(text=t, id=f"t{i}") for i, t in enumerate(TEXTS[:2])])
        col.add([wp.Document(text=t, id=f"t{i + 2}") for i, t in enumerate(TEXTS[2:])])
        hits = [(h.document_id, round(h.score, 5)) for h in col.search("knights king lens", k=4)]
        window = col.pack("knights and the king", budget=80).text
    return folder, hits, window


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damaged_index_files_are_rebuilt(
    built: tuple[Path, list[tuple[str, float]], str], damage: str
) -> None:
    folder, hits, window = built
    collection_dir = next((folder / "indexes").glob("collection-*"))
    # Versions are folders: "faiss" below is the dense base's file inside dense-v2/.
    dense = next((collection_dir / "dense-v2").glob("*.faiss"))
    lexical = collection_dir / "lexical-v2"
    DAMAGE[damage](dense, lexical)
    with wp.open(folder, config=CONFIG, create=False) as store:
        col = store.collection("docs", create=False)
        again = [(h.document_id, round(h.score, 5)) for h in col.search("knights king lens", k=4)]
        assert again == hits
        assert col.pack("knights and the king", budget=80).text == window
    # The rebuilt files are whole again: a third store loads them without rebuilding.
    with wp.open(folder, config=CONFIG, create=False) as store:
        indexes = store.indexes
        loaded = indexes._load_checked(store.collection("docs").collection_id, 2)
        assert loaded is not None and loaded.dense.size == indexes._unit_count(1)
