"""The public hooks the benchmarks use: each component's `timed_calls()` and the store's parts.

A benchmark times a stage by wrapping the (owner, attribute) a component names; a name whose
owner no longer looks it up at call time would time nothing, so each is checked to be called
by the operation it belongs to.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import pytest

import windowpack as wp
from windowpack import embed, index, ingest, pack, search
from windowpack.ingest import IngestExecutor
from windowpack.pack import PackingState
from windowpack.storage import repository

DOCUMENTS = [
    wp.Document(
        id=f"doc-{number}",
        title=f"Document {number}",
        text="\n\n".join(
            f"Paragraph {paragraph} of document {number} is about topic {number * paragraph}: "
            "founders, investors and the essays they wrote about startups and painting."
            for paragraph in range(12)
        ),
    )
    for number in range(4)
]


def _counted(
    monkeypatch: pytest.MonkeyPatch, targets: Mapping[str, tuple[object, str]]
) -> Counter[str]:
    """Wrap every target for the test; the counter says how often each was called."""
    calls: Counter[str] = Counter()

    def wrapped(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def counting(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return original(*args, **kwargs)

        return counting

    for name, (owner, attribute) in targets.items():
        monkeypatch.setattr(owner, attribute, wrapped(name, getattr(owner, attribute)))
    return calls


# The reranker is off by default; on here, so that its stage is called too.
RERANKING = wp.StoreConfig(embedder="hash", evidence=wp.EvidenceSettings(reranker="sentence"))


@pytest.fixture
def store(tmp_path: Any) -> Iterator[wp.Store]:
    with wp.open(tmp_path / "store", config=RERANKING) as opened:
        yield opened


@pytest.mark.parametrize("component", [embed, index, ingest, pack, search])
def test_every_timed_call_names_a_callable(component: Any) -> None:
    named = component.timed_calls()
    assert named
    for name, (owner, attribute) in named.items():
        assert callable(getattr(owner, attribute)), name


def test_an_add_calls_what_ingest_and_index_name(
    store: wp.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _counted(
        monkeypatch, {**ingest.timed_calls(), "publish": index.timed_calls()["publish"]}
    )
    store.collection("docs").add(DOCUMENTS)
    assert set(calls) == {"commit", "collection levels", "embed and publish", "publish"}


def test_a_search_calls_what_search_and_index_name(
    store: wp.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    collection = store.collection("docs")
    collection.add(DOCUMENTS)
    named = {**search.timed_calls(), **index.timed_calls()}
    del named["publish"]
    calls = _counted(monkeypatch, named)
    assert collection.search("founders and investors", k=5)
    assert set(calls) == set(named)


def test_packs_call_what_pack_names(store: wp.Store, monkeypatch: pytest.MonkeyPatch) -> None:
    collection = store.collection("docs")
    collection.add(DOCUMENTS)
    calls = _counted(monkeypatch, pack.timed_calls())
    collection.pack("founders and investors", budget=300)  # far less than the collection
    collection.pack("painting", budget=100_000)  # the whole collection fits: lossless
    assert set(calls) == set(pack.timed_calls())


def test_the_store_hands_out_its_parts(store: wp.Store) -> None:
    collection = store.collection("docs")
    collection.add(DOCUMENTS)
    with store.sessions() as session:
        row = repository.get_collection(session, "docs")
    assert row is not None and row.id == collection.collection_id
    indexes = store.indexes.current(collection.collection_id)
    assert indexes.version == collection.index_version
    vector = store.query_vectors.get("founders")
    assert np.allclose(vector, store.embedder.embed_query("founders"))
    executor: IngestExecutor = store.executor
    assert executor.embedder(store.embedder) is not None

    state = store.packer.state(row.id, "docs", indexes.version, "o200k_base")
    assert isinstance(state, PackingState)
    assert state.corpus.chunks == collection.stats().chunks
    assert store.packer.window_cache.bytes == 0
    collection.pack("founders", budget=300)
    assert store.packer.window_cache.bytes > 0
    store.packer.window_cache.clear()
    assert store.packer.window_cache.bytes == 0
