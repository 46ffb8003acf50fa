"""An ingest's progress: every step counts its own work against its own total.

The CLI once showed "2,176/1,847 embedded": the texts embedded (chunks, summaries, sentences)
counted against the number of chunks. Here each report is checked as it comes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

import windowpack as wp
from windowpack.ingest import LocalExecutor
from windowpack.types import IngestProgress


def _pages(count: int, *, start: int = 0) -> list[wp.Document]:
    return [
        wp.Document(
            id=f"page{page}.md",
            text=f"# Page {page}\n\n"
            + "".join(
                f"## Part {part}\n\nPage {page} part {part} holds {' '.join(['text'] * 30)}. "
                f"A second sentence names item {page}-{part}.\n\n"
                for part in range(5)
            ),
        )
        for page in range(start, start + count)
    ]


def _ingest(collection: wp.Collection, documents: list[wp.Document]) -> list[IngestProgress]:
    seen: list[IngestProgress] = []
    collection.add(documents, progress=lambda progress: seen.append(replace(progress)))
    return seen


def _last(seen: list[IngestProgress], stage: str, unit: str) -> IngestProgress:
    return [p for p in seen if p.stage == stage and p.unit == unit][-1]


def test_no_count_passes_its_total(hash_store: wp.Store) -> None:
    seen = _ingest(hash_store.collection("docs"), _pages(10))

    assert all(p.completed <= p.total for p in seen if p.total is not None)
    assert all(p.completed == 0 for p in seen if p.total is None)  # not known: nothing counted
    stages = [(p.stage, p.unit) for p in seen]
    assert stages[-1] == ("done", "")
    order = list(dict.fromkeys(stages))
    assert order == [
        ("chunk", "documents"),
        ("summarize", "documents"),
        ("embed", "chunks"),  # each chunk's pass embeds its sentences too
        ("embed", "sentences"),  # but those foreign to their chunk are embedded alone
        ("embed", "texts"),
        ("index", ""),
        ("done", ""),
    ]


def test_each_step_ends_at_its_own_total(hash_store: wp.Store) -> None:
    collection = hash_store.collection("docs")
    _ingest(collection, _pages(6))

    seen = _ingest(collection, _pages(9))  # 6 unchanged, 3 new

    chunk, summarize = _last(seen, "chunk", "documents"), _last(seen, "summarize", "documents")
    chunks, texts = _last(seen, "embed", "chunks"), _last(seen, "embed", "texts")
    alone = _last(seen, "embed", "sentences")
    assert (chunk.completed, chunk.total) == (3, 3)  # the changed documents, not all 9
    assert (summarize.completed, summarize.total) == (3, 3)
    # The new chunks, each embedded once with its sentences; the sentences foreign to their
    # chunk alone; then only what they left: the summaries (the chunks' own vectors came with
    # their sentences').
    assert (chunks.completed, chunks.total) == (chunk.chunks, chunk.chunks)
    assert alone.total is not None and alone.completed == alone.total > 0
    assert texts.total is not None and texts.completed == texts.total > 0
    assert seen[-1].embedded == chunks.total + alone.total + texts.total


def test_chunking_is_reported_as_it_goes(
    hash_store: wp.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Documents are chunked a slice at a time, so the count moves before the step ends."""
    calls: list[int] = []
    chunk = LocalExecutor.chunk

    def counted(self: LocalExecutor, documents: Any, **options: Any) -> Any:
        calls.append(len(documents))
        return chunk(self, documents, **options)

    monkeypatch.setattr(LocalExecutor, "chunk", counted)
    monkeypatch.setattr("windowpack.ingest.pipeline._CHUNK_SLICE_CHARS", 1_000)
    made: list[int] = []

    def update(progress: IngestProgress) -> None:
        if progress.stage == "chunk" and progress.completed:
            made.append(len(calls))  # chunk calls made by this report

    hash_store.collection("docs").add(_pages(4), progress=update)

    assert calls == [1, 1, 1, 1] and made == [1, 2, 3, 4]


def test_nothing_to_embed_is_a_total_of_zero(hash_store: wp.Store) -> None:
    collection = hash_store.collection("docs")
    pages = _pages(3)
    _ingest(collection, pages)
    collection.delete(pages[0].id)

    seen = _ingest(collection, pages[:1])  # every text of it is in the embedding cache

    texts = _last(seen, "embed", "texts")
    assert (texts.completed, texts.total) == (0, 0)
