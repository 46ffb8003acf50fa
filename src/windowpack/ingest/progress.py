"""An ingest's progress: what is done so far, told to the caller's callback as it changes.

Each step counts its own work against its own total (`IngestProgress.completed` of `total`):
a step's total is what that step has to do, never another step's (the embedding step once
counted chunks, summaries and sentences against the number of chunks). `ProgressLog` writes
the same reports as plain lines at a steady interval, for logs (the CLI when stderr is not a
terminal, the evals, the jobs of `windowpack serve` and `windowpack worker`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from windowpack.documents import Chunk
from windowpack.errors import InvalidArgumentError
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


LOG_INTERVAL_SECONDS = 10.0
"""Seconds between two progress lines in a log: often enough to show it is alive, rarely
enough that a 30-minute ingest writes ~200 lines."""


class ProgressLog:
    """Progress as plain lines for a log, where a progress bar cannot be drawn (stderr is a file,
    a pipe, nohup, CI; the server's and the worker's logs): a line when a step begins, then at
    most one every `interval_s` while it goes on, and its last state when it ends (when the
    next begins, or at `close`) unless a line already showed it.

    A line is the step, its count against its total, its rate since the step began and the
    time left at that rate: `ingest: embed 1,234/2,176 texts (56.7%), 31.0 texts/s, ETA 0:00:30`.
    No carriage return, no escape code: each line stands alone in a file. `write` takes the
    line; `clock` is injectable so that tests need no sleeps.
    """

    def __init__(
        self,
        write: Callable[[str], None],
        *,
        label: str,
        interval_s: float = LOG_INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not interval_s > 0:
            raise InvalidArgumentError("interval_s", f"must be positive, got {interval_s}")
        self._write, self._label, self._interval_s, self._clock = write, label, interval_s, clock
        self._key: tuple[str, str] | None = None
        self._step_started = 0.0
        self._last_line = 0.0
        self._latest: tuple[str, int, int | None, str] | None = None
        self._written: tuple[str, int, int | None, str] | None = None

    def update(self, stage: str, completed: int, total: int | None, unit: str) -> None:
        """The work's state now: a line if a step begins or `interval_s` passed since the last."""
        now = self._clock()
        if (stage, unit) != self._key:
            self.close()  # the step that ends, as it ended, if no line showed that yet
            self._key, self._step_started = (stage, unit), now
            self._emit(now, (stage, completed, total, unit))
        elif now - self._last_line >= self._interval_s:
            self._emit(now, (stage, completed, total, unit))
        else:
            self._latest = (stage, completed, total, unit)

    def report(self, progress: IngestProgress) -> None:
        """`update` from an ingest's progress report, its note (if any) a line of its own."""
        if progress.note:
            self._write(f"{self._label}: {progress.note}")
        if progress.stage != "done":
            self.update(progress.stage, progress.completed, progress.total, progress.unit)

    def close(self) -> None:
        """A line for the last state reported, if no line has shown it yet."""
        if self._latest is not None and self._latest != self._written:
            self._emit(self._clock(), self._latest)

    def _emit(self, now: float, state: tuple[str, int, int | None, str]) -> None:
        self._latest = self._written = state
        self._last_line = now
        self._write(self._line(now, *state))

    def _line(self, now: float, stage: str, completed: int, total: int | None, unit: str) -> str:
        line = f"{self._label}: {stage}"
        if not unit:
            return line  # a step without a count (index)
        line += (
            f" {completed:,}/{total:,} {unit}" if total is not None else f" {completed:,} {unit}"
        )
        if total:
            line += f" ({100 * completed / total:.1f}%)"
        spent = now - self._step_started
        if completed > 0 and spent > 0:
            rate = completed / spent
            line += f", {rate:,.1f} {unit}/s"
            if total is not None and total >= completed:
                line += f", ETA {_clock_time((total - completed) / rate)}"
        return line


def _clock_time(seconds: float) -> str:
    """`0:01:05` for 65 seconds."""
    whole = round(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
