"""The ingest progress line of the CLI: the stage, its counts and its current throughput.

The rate is the stage's own work (tokens chunked, texts embedded, summaries written) over
the last few seconds, not a total divided by the time since the start: a cumulative rate
keeps showing the fast chunking stage's figure for the whole of a slow embedding stage.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TimeElapsedColumn
from rich.text import Text

from windowpack.types import IngestProgress

WINDOW_SECONDS = 5.0
"""How far back "current" throughput looks."""

# What each stage's rate counts: the progress field and its unit.
_MEASURES = {
    "chunk": ("tokens", "tok/s"),
    "summarize": ("summaries", "summaries/s"),
    "embed": ("embedded", "texts/s"),
}


class Throughput:
    """The rate of one stage's work over the last `window` seconds.

    A new stage starts a new measurement. With no progress reported for a whole window the
    rate is 0, so a stalled stage shows as stalled.
    """

    def __init__(
        self, *, window: float = WINDOW_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._window = window
        self._clock = clock
        self._stage: str | None = None
        self._samples: deque[tuple[float, int]] = deque()

    def record(self, stage: str, amount: int) -> None:
        """The stage's running total at this moment."""
        now = self._clock()
        if stage != self._stage:
            self._stage = stage
            self._samples.clear()
        self._samples.append((now, amount))
        # Keep one sample at or before the window's start: the baseline of the next rate.
        while len(self._samples) > 1 and self._samples[1][0] <= now - self._window:
            self._samples.popleft()

    def rate(self) -> float | None:
        """Work per second over the window ending now; None until there is a time span."""
        if not self._samples:
            return None
        now = self._clock()
        start = max(self._samples[0][0], now - self._window)
        if now - start < 0.2:
            return None
        baseline = self._samples[0][1]
        for moment, amount in self._samples:
            if moment <= start:
                baseline = amount
        return (self._samples[-1][1] - baseline) / (now - start)


def describe(progress: IngestProgress, throughput: Throughput) -> str:
    """`embed: 12/12 docs, 480 chunks, 96/480 embedded, 24 summaries · 31 texts/s`."""
    text = (
        f"{progress.stage}: {progress.documents}/{progress.documents_total} docs, "
        f"{progress.chunks:,} chunks, {progress.embedded:,}/{progress.chunks:,} embedded, "
        f"{progress.summaries:,} summaries"
    )
    measure = _MEASURES.get(progress.stage)
    rate = throughput.rate() if measure is not None else None
    if measure is not None:
        text += f" · {rate:,.0f} {measure[1]}" if rate is not None else f" · … {measure[1]}"
    return text


class _StageColumn(ProgressColumn):
    """The description, rebuilt at every refresh from the latest report and the rate now."""

    def __init__(self, throughput: Throughput) -> None:
        super().__init__()
        self.throughput = throughput
        self.latest: IngestProgress | None = None

    def render(self, task: Task) -> Text:
        if self.latest is None:
            return Text("parsing")
        return Text(describe(self.latest, self.throughput))


@contextmanager
def ingest_progress(console: Console) -> Iterator[Callable[[IngestProgress], None]]:
    """A progress callback drawing a transient bar on `console`, redrawn ten times a second
    so that the rate stays current between reports."""
    stage = _StageColumn(Throughput())
    with Progress(stage, BarColumn(), TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task("ingest", total=None)

        def update(progress: IngestProgress) -> None:
            if progress.note:
                bar.console.print(progress.note, highlight=False)
            measure = _MEASURES.get(progress.stage)
            amount = getattr(progress, measure[0]) if measure is not None else 0
            stage.throughput.record(progress.stage, amount)
            stage.latest = progress
            bar.update(task, total=progress.chunks or None, completed=progress.embedded)

        yield update
