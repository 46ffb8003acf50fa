"""Loading a collection's packing state: from scratch vs from the previous version's state.

Run from the repository root with the project virtualenv; keep the store with `--store` (the
build takes a minute or two with the hash embedder and is reused afterwards):

    .venv/bin/python benchmarks/state_reload.py --store /tmp/wp-state-essays

The RULER essays JSON split into ~20K-character documents (~680K tokens) is ingested with the
hash embedder into collection `essays`. The run works on a scratch copy of the store and
times, each the median of `--repeats` loads in o200k_base:

- "full": `load_state` with nothing to reuse (the first pack of a process pays this);
- "reload after add": one more document is added (a new version, as an ingest job publishes),
  then `load_state` of the new version given the previous version's state;
- "reload after upsert" and "reload after delete": the same for an upsert of an existing
  document with new text, and for a delete;
- "first pack after add": `Collection.pack` at B=128K right after an add, in a store whose
  packer holds the previous version (what the REST benchmark's packs wait for).

Every reloaded state is checked against a full load of the same version (same costs).
`--smoke` runs it in seconds on a few essay parts, one load each: a check, not figures.
"""

from __future__ import annotations

import argparse
import functools
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from bench_common import (
    ESSAYS_JSON,
    SMOKE_TOKENS,
    add_smoke_option,
    limit_tokens,
    load_corpus,
    reusable_store_folder,
)

import windowpack as wp
from windowpack.pack import PackingState, load_state
from windowpack.storage import repository
from windowpack.text import get_token_counter

COLLECTION = "essays"
CONFIG = wp.StoreConfig(embedder="hash")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="store folder to build or reuse")
    parser.add_argument("--repeats", type=int, default=5)
    add_smoke_option(parser)
    args = parser.parse_args()
    documents = load_corpus([ESSAYS_JSON], max_bytes=64 * 1024 * 1024).documents
    if args.smoke:  # 4 documents at least: the edits change the first four
        counter = get_token_counter("o200k_base")
        documents, args.repeats = limit_tokens(documents, counter, 4 * SMOKE_TOKENS), 1
    with reusable_store_folder(args.store, "wp-state-") as folder:
        with wp.open(folder, config=CONFIG) as store:
            store.collection(COLLECTION).add(documents)
        with tempfile.TemporaryDirectory(prefix="wp-state-run-") as scratch:
            copy = Path(scratch) / "store"
            shutil.copytree(folder, copy)
            _measure(copy, documents, args.repeats)


def _measure(folder: Path, documents: list[wp.Document], repeats: int) -> None:
    with wp.open(folder, config=CONFIG) as store:
        collection = store.collection(COLLECTION)
        stats = collection.stats()
        print(f"{stats.documents} documents, {stats.chunks} chunks, {stats.tokens:,} tokens")
        full, state = _timed(lambda: _load(store, None), repeats)
        print(f"full load:            {full * 1000:7.1f} ms")
        edits: list[tuple[str, Callable[[], object]]] = [
            ("add", lambda: collection.add([_edited(documents[0], "new/0")])),
            ("upsert", lambda: collection.add([_edited(documents[1], documents[1].id or "")])),
            ("delete", lambda: collection.delete(documents[2].id or "")),
        ]
        for label, edit in edits:
            edit()
            seconds, state_after = _timed(functools.partial(_load, store, state), repeats)
            _check_identical(state_after, _load(store, None))
            print(f"reload after {label + ':':8s} {seconds * 1000:7.1f} ms")
            state = state_after
        collection.pack("what did the author learn from startups", budget=128_000)
        collection.add([_edited(documents[3], "new/3")])
        started = time.perf_counter()
        collection.pack("what does the author say about essays", budget=128_000)
        print(f"first pack after add: {(time.perf_counter() - started) * 1000:7.1f} ms")


def _load(store: wp.Store, previous: PackingState | None) -> PackingState:
    """The state of the collection's current version, lent `previous`'s counts if given."""
    sessions = store.sessions  # the benchmark times the loader itself
    with sessions() as session:
        row = repository.get_collection(session, COLLECTION)
        assert row is not None
        collection_id, version = row.id, repository.index_version(session, row.id)
    counter = get_token_counter("o200k_base")
    return load_state(sessions, collection_id, COLLECTION, version, counter, previous=previous)


def _timed(load: Callable[[], PackingState], repeats: int) -> tuple[float, PackingState]:
    """Median seconds of `repeats` loads, and the last state loaded."""
    seconds, state = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        state = load()
        seconds.append(time.perf_counter() - started)
    assert state is not None
    return statistics.median(seconds), state


def _edited(document: wp.Document, new_id: str) -> wp.Document:
    """`document` under `new_id` with each paragraph tagged: every chunk is new text."""
    text = "\n\n".join(f"[edit] {part}" for part in document.text.split("\n\n"))
    return wp.Document(id=new_id, title=document.title, text=text)


def _check_identical(reloaded: PackingState, fresh: PackingState) -> None:
    assert reloaded.documents == fresh.documents and reloaded.nodes == fresh.nodes
    for field in ("chunk_cost", "node_cost", "node_first", "node_last", "node_parent"):
        assert np.array_equal(getattr(reloaded.corpus, field), getattr(fresh.corpus, field))


if __name__ == "__main__":
    main()
