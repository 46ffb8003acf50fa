"""An ingest's progress: what is done so far, told to the caller's callback as it changes.

Each step counts its own work against its own total (`IngestProgress.completed` of `total`):
a step's total is what that step has to do, never another step's (the embedding step once
counted chunks, summaries and sentences against the number of chunks).
"""

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

    def step(self, stage: str, *, total: int | None = None, unit: str = "documents") -> None:
        """A new step begins: `total` `unit` to do (None: not known yet, or not counted)."""
        self._progress.stage = stage
        self._progress.unit = unit
        self._progress.completed = 0
        self._progress.total = total
        self._emit()

    def total(self, total: int) -> None:
        """The current step's total, once it is known (the texts the cache lacks)."""
        self._progress.total = total
        self._emit()

    def chunked(self, chunks: Sequence[Chunk]) -> None:
        """One more document chunked, into `chunks`."""
        self._progress.documents += 1
        self._progress.chunks += len(chunks)
        self._progress.tokens += sum(chunk.tokens for chunk in chunks)
        self._progress.completed += 1
        self._emit()

    def summarised(self, count: int) -> None:
        """`count` more nodes summarised afresh (the summarize step counts documents)."""
        self._progress.summaries += count
        self._emit()

    def document_summarised(self) -> None:
        """One more document's summary levels built."""
        self._progress.completed += 1
        self._emit()

    def embedded(self, count: int) -> None:
        """`count` more texts embedded afresh."""
        self._progress.embedded += count
        self._progress.completed += count
        self._emit()

    def note(self, text: str) -> None:
        self._progress.note = text
        self._emit()
        self._progress.note = None

    def stage(self, name: str) -> None:
        """A step with no count of its own (index, done)."""
        self.step(name, total=None, unit="")

    def _emit(self) -> None:
        if self._callback is not None:
            self._callback(self._progress)
