"""Where an eval run's time goes: wall and CPU seconds per stage, per case and in total.

CPU seconds (this process, all its threads) say what a stage costs when the machine is
shared: wall time then also counts the waits for a core. An ingest is split into the stages
its progress callback reports (chunk, summarize, embed, index), so a run shows whether its
time goes to the model, the summary tree or the database.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

from windowpack.types import IngestProgress

PART_OF_INGEST = "ingest: "


class StageClock:
    """Wall and CPU seconds per named stage; `case` holds the current case's wall seconds."""

    def __init__(self) -> None:
        self.total: dict[str, float] = {}
        self.total_cpu: dict[str, float] = {}
        self.case: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        started, started_cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.add(stage, time.perf_counter() - started, time.process_time() - started_cpu)

    def add(self, stage: str, seconds: float, cpu: float) -> None:
        self.case[stage] = self.case.get(stage, 0.0) + seconds
        self.total[stage] = self.total.get(stage, 0.0) + seconds
        self.total_cpu[stage] = self.total_cpu.get(stage, 0.0) + cpu

    def take_case(self) -> dict[str, float]:
        """The current case's seconds per stage; the next case starts from nothing."""
        taken, self.case = self.case, {}
        return taken

    def ingest_stages(self) -> IngestStages:
        """A progress callback for one `Collection.add` that times its stages here."""
        return IngestStages(self)


class IngestStages:
    """Times each stage an ingest reports, from its first report to the next stage's."""

    def __init__(self, clock: StageClock) -> None:
        self._clock = clock
        self._stage: str | None = None  # "chunk" until the first report says otherwise
        self._since = (time.perf_counter(), time.process_time())

    def __call__(self, progress: IngestProgress) -> None:
        if progress.stage == self._stage:
            return
        # The first report comes once the chunking is done: it opens no new stage.
        if self._stage is not None:
            now = (time.perf_counter(), time.process_time())
            wall, cpu = now[0] - self._since[0], now[1] - self._since[1]
            self._clock.add(f"{PART_OF_INGEST}{self._stage}", wall, cpu)
            self._since = now
        self._stage = progress.stage


def is_part(stage: str) -> bool:
    """Whether `stage` is a part of another one (an ingest's), already counted in it."""
    return stage.startswith(PART_OF_INGEST)
