"""What one write costs end to end, by the size of the collection it goes into.

One ~5K-token `Collection.add` (a fresh document, all new text) into an empty collection, a
~2M-token one and a ~10M-token one, with the hash embedder (`StoreConfig(embedder="hash")`:
deterministic, model-free vectors, so what is timed is the write, not a model); then the
delete of that document. Run from the repository root with the project virtualenv; the
stores take a while to build, so keep them with `--store` and reuse them:

    nice -n 10 .venv/bin/python benchmarks/write_cost.py --store /tmp/wp-write
    .venv/bin/python benchmarks/write_cost.py --store /tmp/wp-write --sizes 0,2000000

`--store DIR` holds one store per size (`DIR/tokens-<size>`), built by the first run as
`benchmarks/large.py` builds its own (the RULER essays and the NIAH essay folder, then copies
of them under `variant-c/...` with a corpus sentence before each paragraph, one add per copy)
and reused as it is by later runs; every run deletes what it added, so a reused store keeps
its size. The empty collection is a new one in a temporary store for each add.

Each size: one warm-up add and delete (the indexes load, the tokenizer warms up; not
counted), then `--adds` adds, each timed and then deleted. The split of an add: parse/chunk
(start → last "chunk" of the progress callback), tree (the document's own levels: → first
"embed"), collection levels (the regrouping of the collection-level nodes, inside the
commit), transaction (the rest of the commit: documents, chunks, nodes, the version),
index (embedding the new collection-level nodes and publishing the indexes) and rest
(validation, the write lock, embedding the chunks and sentences, the packing states). The
stages come from `bench_common.StageClock` and `ingest.timed_calls()`. Medians are printed
per size (wall ms, and the add's CPU ms: the process's, all threads), with the ratio of the
median wall time to the empty collection's add; targets: <= 2x at 2M, <= 3x at 10M.

`--smoke` runs it in seconds (stores of a few thousand tokens, ~1K-token documents, 2 adds
a size): a check that the stages add up, not figures. Results go to
`benchmarks/results/write_cost.json`.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from bench_common import (
    BUILD_RECORD,
    SMOKE_TOKENS,
    CallTimer,
    EssayCorpus,
    StageClock,
    add_smoke_option,
    build_collection,
    corpus_sentences,
    essay_corpus,
    machine_info,
    variant_batches,
    write_results,
)

import windowpack as wp
from windowpack import ingest
from windowpack.text import TokenCounter, get_token_counter

COLLECTION = "write-cost"
CONFIG = wp.StoreConfig(embedder="hash")
TOKENIZER = "o200k_base"
SIZES = (0, 2_000_000, 10_000_000)
DOCUMENT_TOKENS = 5_000
TARGETS = {2_000_000: 2.0, 10_000_000: 3.0}  # ratio to the empty collection's add, at most
WRITE_PREFIX = "write-cost/"
PARTS = ("parse/chunk", "tree", "collection levels", "transaction", "index", "rest")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    counter = get_token_counter(TOKENIZER)
    corpus = essay_corpus(
        counter,
        target_tokens=0,
        max_bytes=64 << 20,
        source_tokens=SMOKE_TOKENS // 2 if args.smoke else None,
    )
    sentences = corpus_sentences([doc.text for doc, _ in corpus.sources])
    sources = _sources(corpus, args.document_tokens)
    figures: dict[str, Any] = {"command": " ".join(sys.argv), "sizes": {}}
    with _stores_folder(args.store) as folder:
        for size in args.sizes:
            runs = _measure_size(size, folder, corpus, sentences, sources, args, counter)
            figures["sizes"][str(size)] = runs
            _print_size(size, runs)
    figures["targets"] = _verdicts(figures["sizes"])
    figures["machine"] = machine_info()
    print(f"targets: {figures['targets']}")
    print(f"load average at the end: {os.getloadavg()}")
    if args.smoke:
        _check(figures["sizes"])
    print(f"Figures written to {write_results('write_cost', figures)}")
    return 0


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="The end-to-end cost of one add (and delete) by collection size.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--store", type=Path, help="folder of the stores to build or reuse")
    parser.add_argument(
        "--sizes",
        type=lambda text: [int(part) for part in text.split(",")],
        default=list(SIZES),
        help="collection sizes in tokens, comma-separated (0: an empty collection)",
    )
    parser.add_argument("--adds", type=int, default=5, help="timed adds per size")
    parser.add_argument("--document-tokens", type=int, default=DOCUMENT_TOKENS)
    add_smoke_option(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.adds, args.document_tokens = [0, SMOKE_TOKENS, 2 * SMOKE_TOKENS], 2, 1_000
    return args


@contextlib.contextmanager
def _stores_folder(given: Path | None) -> Iterator[Path]:
    if given is not None:
        given.mkdir(parents=True, exist_ok=True)
        yield given
        return
    with tempfile.TemporaryDirectory(prefix="wp-write-cost-") as temporary:
        yield Path(temporary)


def _sources(corpus: EssayCorpus, tokens: int) -> list[wp.Document]:
    """Source documents of about `tokens` tokens each (within 20%), the closest first: the
    adds are made of them with new text (see `_fresh`)."""
    near = sorted(corpus.sources, key=lambda pair: abs(pair[1] - tokens))
    kept = [doc for doc, count in near if abs(count - tokens) <= tokens // 5]
    if not kept:  # a smoke corpus: the start of the closest document
        doc, count = near[0]
        kept = [wp.Document(text=doc.text[: len(doc.text) * tokens // max(count, 1)], id=doc.id)]
    return kept[:8]


def _fresh(source: wp.Document, sentences: list[str]) -> wp.Document:
    """`source` as text no store has seen: a random corpus sentence and a word of this add's
    own before each paragraph (nothing of it is in an embedding or summary cache)."""
    nonce = uuid.uuid4().hex[:12]
    rng = random.Random(nonce)
    paragraphs = source.text.split("\n\n")
    text = "\n\n".join(
        f"{rng.choice(sentences)} ({nonce}-{number}) {paragraph}"
        for number, paragraph in enumerate(paragraphs)
    )
    return wp.Document(text=text, id=f"{WRITE_PREFIX}{nonce}", title=f"Write {nonce}")


def _measure_size(
    size: int,
    folder: Path,
    corpus: EssayCorpus,
    sentences: list[str],
    sources: list[wp.Document],
    args: argparse.Namespace,
    counter: TokenCounter,
) -> dict[str, Any]:
    """The timed adds (and deletes) into a collection of `size` tokens."""
    documents = [_fresh(sources[i % len(sources)], sentences) for i in range(args.adds + 1)]
    if size == 0:
        with tempfile.TemporaryDirectory(prefix="wp-write-empty-") as temporary:
            with wp.open(Path(temporary) / "store", config=CONFIG) as store:
                # Created before the add: what is timed is the add, not the collection's creation.
                empty = [store.create_collection(f"empty-{n}") for n in range(len(documents))]
                runs = [_timed_write(*pair) for pair in zip(empty, documents, strict=True)]
            return _summary(runs[1:], {"documents": 0, "tokens": 0}, counter, documents)
    store_folder = folder / f"tokens-{size}"
    finished = (store_folder / BUILD_RECORD).exists()
    batches = [] if finished else _batches(corpus, sentences, size, counter)
    with wp.open(store_folder, config=CONFIG) as store:
        collection = store.collection(COLLECTION)
        build = build_collection(print, store_folder, batches, collection)
        _remove_earlier_writes(collection)
        runs = [_timed_write(collection, document) for document in documents]
    return _summary(runs[1:], build, counter, documents)


def _batches(
    corpus: EssayCorpus, sentences: list[str], size: int, counter: TokenCounter
) -> list[tuple[list[wp.Document], str]]:
    """`variant_batches` up to `size` tokens: the last copy only as far as it takes (a whole
    copy is ~1M tokens, which would make a 2M-token store one of 2.8M)."""
    batches, total = [], 0
    for documents, note in variant_batches(corpus, sentences, size, counter):
        counts = counter.count_many([doc.text for doc in documents])
        kept = []
        for document, count in zip(documents, counts, strict=True):
            if total >= size:
                break
            kept.append(document)
            total += count
        batches.append((kept, note if len(kept) == len(documents) else f"{note}, {len(kept)} kept"))
    return batches


def _remove_earlier_writes(collection: wp.Collection) -> None:
    """Delete what an interrupted earlier run added and never deleted (a reused store)."""
    for document in collection.documents():
        if document.id.startswith(WRITE_PREFIX):
            collection.delete(document.id)


def _timed_write(collection: wp.Collection, document: wp.Document) -> dict[str, float]:
    """One add, split into its parts (seconds), then the delete of what it added."""
    clock = StageClock()
    with CallTimer(ingest.timed_calls()) as timer, _CollectorClock() as collector:
        clock.start()
        collection.add([document], progress=clock)
        clock.finish()
    stages = clock.stages()
    levels = timer.seconds["collection levels"]
    parts = {
        "parse/chunk": stages["chunk"],
        "tree": stages["summarize"],
        "collection levels": levels,
        "transaction": timer.seconds["commit"] - levels,
        "index": timer.seconds["embed and publish"],
    }
    parts["rest"] = stages["total"] - sum(parts.values())
    parts["total"] = stages["total"]
    # CPU seconds of the process (all threads): on a shared machine the wall clock also
    # counts the time the scheduler gave to others.
    parts["total cpu"] = clock.stages(clock=1)["total"]
    parts["of which gc"] = collector.seconds
    assert document.id is not None
    with CallTimer(ingest.timed_calls()) as timer:
        started = time.perf_counter()
        collection.delete(document.id)
        parts["delete"] = time.perf_counter() - started
    parts["delete collection levels"] = timer.seconds["collection levels"]
    return parts


class _CollectorClock:
    """Seconds Python's cyclic collector ran while the block ran, within whichever part it
    interrupted: a full collection over all this process holds (the corpus too) can take
    ~100 ms, and lands in one add now and then."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0

    def __enter__(self) -> _CollectorClock:
        gc.callbacks.append(self._note)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._note)

    def _note(self, phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started


def _summary(
    runs: list[dict[str, float]],
    build: dict[str, Any],
    counter: TokenCounter,
    documents: list[wp.Document],
) -> dict[str, Any]:
    return {
        "collection": {
            key: build.get(key) for key in ("documents", "chunks", "tokens", "build_seconds")
        },
        "document_tokens": statistics.median(counter.count(doc.text) for doc in documents),
        "median_ms": {
            part: round(statistics.median(run[part] for run in runs) * 1000, 1) for part in runs[0]
        },
        "runs_ms": [{part: round(value * 1000, 1) for part, value in run.items()} for run in runs],
        "load_average": list(os.getloadavg()),
    }


def _print_size(size: int, figures: dict[str, Any]) -> None:
    median = figures["median_ms"]
    collection = figures["collection"]
    split = ", ".join(f"{part} {median[part]:,.0f}" for part in PARTS)
    print(
        f"{size:>11,} tokens ({collection['documents'] or 0:,} documents): add median "
        f"{median['total']:,.0f} ms, cpu {median['total cpu']:,.0f} ms ({split}; gc "
        f"{median['of which gc']:,.0f}); delete "
        f"{median['delete']:,.0f} ms (collection levels {median['delete collection levels']:,.0f}"
        f"); load {figures['load_average'][0]:.2f}"
    )


def _verdicts(sizes: dict[str, Any]) -> dict[str, Any]:
    """Each size's median add against the empty collection's, and its target where stated."""
    if "0" not in sizes:
        return {}
    empty = sizes["0"]["median_ms"]["total"]
    verdicts: dict[str, Any] = {}
    for size, figures in sizes.items():
        if size == "0":
            continue
        ratio = figures["median_ms"]["total"] / empty
        target = TARGETS.get(int(size))
        verdicts[size] = {
            "ratio_to_empty": round(ratio, 2),
            "target": target,
            "met": None if target is None else ratio <= target,
        }
    return verdicts


def _check(sizes: dict[str, Any]) -> None:
    """A smoke run's check: every size measured, its parts non-negative and adding up."""
    for size, figures in sizes.items():
        for run in figures["runs_ms"]:
            parts = [run[part] for part in PARTS[:-1]]
            assert all(value >= 0 for value in parts), (size, run)
            assert abs(sum(run[part] for part in PARTS) - run["total"]) < 1.0, (size, run)
    assert set(sizes) == {"0", str(SMOKE_TOKENS), str(2 * SMOKE_TOKENS)}, sizes


if __name__ == "__main__":
    raise SystemExit(main())
