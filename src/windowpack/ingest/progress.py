"""An ingest's progress: what is done so far, told to the caller's callback as it changes."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from windowpack.documents import Chunk
from windowpack.types import IngestProgress

ProgressCallback = Callable[[IngestProgress], None]
"""Called with the ingest's progress each time it changes (the same object, updated)."""


class ProgressTracker:
    """Counts work done and reports it to the progress callback, if any."""

    def __init__(self, total: int, callback: ProgressCallback | None) -> None:
        self._callback = callback
        self._progress = IngestProgress(stage="chunk", documents_total=total)

    def chunked(self, chunks: Sequence[Chunk]) -> None:
        """One more document chunked, into `chunks`."""
        self._progress.documents += 1
        self._progress.chunks += len(chunks)
        self._progress.tokens += sum(chunk.tokens for chunk in chunks)
        self._emit()

    def embedded(self, count: int) -> None:
        self._progress.stage = "embed"
        self._progress.embedded += count
        self._emit()

    def summarised(self, count: int) -> None:
        self._progress.summaries += count
        self._emit()

    def note(self, text: str) -> None:
        self._progress.note = text
        self._emit()
        self._progress.note = None

    def stage(self, name: str) -> None:
        self._progress.stage = name
        self._emit()

    def _emit(self) -> None:
        if self._callback is not None:
            self._callback(self._progress)
