"""The ingest progress of the CLI: a `rich` progress line per step, each counted against its own
total, its rate over a window of seconds, fitted to the terminal's width.

A step is what the pipeline reports (`IngestProgress`): chunk (documents), summarize
(documents; with the nodes summarised afresh), embed (chunks: each one's pass embeds its
sentences too), embed again (texts: the summaries, and any chunk the cache still lacks) and
index (no count). A hand-made line once counted the
texts embedded against the number of chunks (2,176/1,847), showed a rate over the last 5 s
that fell to 0 between two batches of a slow model, and wrapped at 80 columns. Here each
step's count is its own `completed`/`total`, the rate is rich's estimate over the last
`SPEED_WINDOW_SECONDS` of reports (steady between batches), and rich fits every column to the
console's width, shortening a column before a line would wrap. Where stderr is not a terminal,
the same steps are plain lines at a steady interval (`log_lines`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Column
from rich.text import Text

from windowpack.ingest import LOG_INTERVAL_SECONDS, ProgressLog
from windowpack.types import IngestProgress

SPEED_WINDOW_SECONDS = 30.0
"""How far back a step's rate looks: longer than a batch of a slow embedding model takes."""

# Shorter names of the units, so that a line fits 80 columns.
_UNITS = {"documents": "docs", "texts": "texts", "sentences": "sentences"}


def _unit(task: Task) -> str:
    unit: str = task.fields.get("unit", "")
    return _UNITS.get(unit, unit)


class _CountColumn(ProgressColumn):
    """`1,234/2,176 texts`: the step's count against its own total (the count alone while the
    total is not known); a chunk step adds its chunks, a summarize step what it summarised
    afresh."""

    def render(self, task: Task) -> Text:
        unit = _unit(task)
        if not unit:
            return Text("")
        done = f"{int(task.completed):,}"
        count = f"{done}/{int(task.total):,} {unit}" if task.total is not None else f"{done} {unit}"
        detail = task.fields.get("detail", "")
        return Text(f"{count}, {detail}" if detail else count)


class _RateColumn(ProgressColumn):
    """`31 texts/s`: the rate over the last `SPEED_WINDOW_SECONDS`; a finished step's average."""

    def render(self, task: Task) -> Text:
        unit = _unit(task)
        rate = _rate(task)
        if not unit or (task.finished and not task.completed):
            return Text("")  # nothing counted, or nothing to do (all of it was cached)
        if rate is None:
            return Text(f"… {unit}/s")
        shown = f"{rate:,.0f}" if rate >= 10 else f"{rate:.1f}"
        return Text(f"{shown} {unit}/s")


def _rate(task: Task) -> float | None:
    """The step's work per second: rich's estimate over its window of reports; before there
    are two reports to measure between, the work so far over the time to the last report
    (steady until the next one); a finished step's whole count over its time."""
    if task.finished and task.finished_time:
        return task.completed / task.finished_time
    speed = task.speed
    if speed is not None:
        return speed
    reported_at = task.fields.get("reported_at")
    if task.start_time is None or reported_at is None or task.completed <= 0:
        return None
    spent = float(reported_at) - task.start_time
    return task.completed / spent if spent > 0 else None


class IngestDisplay:
    """Draws an ingest's progress reports on `console`: one line per step, kept until the
    ingest ends (then cleared, with `transient`).

    `get_time` is the clock rich measures rates and elapsed time with (the console's by
    default); tests give a fake one and `auto_refresh=False`, and render `progress` themselves.
    """

    def __init__(
        self,
        console: Console,
        *,
        get_time: Callable[[], float] | None = None,
        auto_refresh: bool = True,
        transient: bool = True,
        first: str | None = None,
    ) -> None:
        # No column wraps: a line too long for the console is shortened, column by column.
        self.progress = Progress(
            TextColumn("{task.description}", table_column=Column(no_wrap=True)),
            BarColumn(bar_width=None),
            _CountColumn(table_column=Column(no_wrap=True, overflow="ellipsis")),
            _RateColumn(table_column=Column(no_wrap=True, overflow="ellipsis")),
            TimeElapsedColumn(),
            console=console,
            transient=transient,
            auto_refresh=auto_refresh,
            speed_estimate_period=SPEED_WINDOW_SECONDS,
            get_time=get_time,
            expand=True,
        )
        self._steps: dict[tuple[str, str], TaskID] = {}
        self._current: TaskID | None = None
        if first is not None:  # the work before the first report (parsing the files)
            self._current = self.progress.add_task(first, total=None, unit="")

    def update(self, report: IngestProgress) -> None:
        """Show `report`: its step's line, added when the step begins."""
        if report.note:
            self.progress.console.print(report.note, highlight=False)
        if report.stage == "done":
            self._finish_current()
            return
        key = (report.stage, report.unit)
        task = self._steps.get(key)
        if task is None:
            self._finish_current()
            task = self.progress.add_task(report.stage, total=report.total, unit=report.unit)
            self._steps[key] = task
            self._current = task
        detail = ""
        if report.stage == "chunk":
            detail = f"{report.chunks:,} chunks"
        elif report.stage == "summarize":
            detail = f"{report.summaries:,} summarised afresh"
        self.progress.update(
            task,
            total=report.total,
            completed=report.completed,
            detail=detail,
            reported_at=self.progress.get_time(),
        )

    def _finish_current(self) -> None:
        """The step before the next is over: a step without a total (index, parse) is done at
        what it did, a counted one keeps its count; either stops its clock."""
        if self._current is None:
            return
        task = next(task for task in self.progress.tasks if task.id == self._current)
        if task.total is None:
            done = max(task.completed, 1)
            self.progress.update(self._current, total=done, completed=done)
        self.progress.stop_task(self._current)
        self._current = None

    def __enter__(self) -> IngestDisplay:
        self.progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.progress.stop()


@contextmanager
def ingest_progress(
    console: Console, *, parsing: bool = False
) -> Iterator[Callable[[IngestProgress], None]]:
    """A progress callback drawing the ingest's steps on `console`, cleared when it ends;
    with `parsing`, a first line for the files being parsed before the first report.

    When `console` is not a terminal (a log file, a pipe, nohup, CI) nothing can be redrawn:
    the steps go there as plain lines at a steady interval instead (`ProgressLog`), so a long
    ingest is never silent in a log."""
    if not console.is_terminal:
        with log_lines(console, label="ingest") as log:
            if parsing:
                log.update("parse", 0, None, "")
            yield log.report
        return
    with IngestDisplay(console, first="parse" if parsing else None) as display:
        yield display.update


@contextmanager
def log_lines(console: Console, *, label: str) -> Iterator[ProgressLog]:
    """A `ProgressLog` writing plain lines to `console` (no markup, never wrapped), closed
    (its last state written) when the block ends."""

    def write(line: str) -> None:
        console.print(line, markup=False, highlight=False, soft_wrap=True)

    log = ProgressLog(write, label=label, interval_s=LOG_INTERVAL_SECONDS)
    try:
        yield log
    finally:
        log.close()
