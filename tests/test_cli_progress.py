"""The ingest progress line: the stage's current throughput, not a cumulative average."""

from __future__ import annotations

import pytest

from windowpack.cli.progress import Throughput, describe
from windowpack.types import IngestProgress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_rate_is_over_the_last_seconds_and_drops_when_stalled() -> None:
    clock = Clock()
    throughput = Throughput(window=5.0, clock=clock)
    throughput.record("chunk", 0)
    clock.now += 1
    throughput.record("chunk", 200_000)  # a fast stage: 200K tok/s
    assert throughput.rate() == pytest.approx(200_000)

    throughput.record("embed", 0)  # a new stage is measured on its own
    for _ in range(10):
        clock.now += 1
        throughput.record("embed", int(throughput._samples[-1][1]) + 64)
    assert throughput.rate() == pytest.approx(64)
    clock.now += 30  # nothing reported for longer than the window: stalled
    assert throughput.rate() == 0


def test_the_line_names_the_stage_and_its_unit() -> None:
    clock = Clock()
    throughput = Throughput(clock=clock)
    progress = IngestProgress(stage="embed", documents_total=4, documents=4, chunks=90)
    throughput.record("embed", 0)
    clock.now += 2
    progress.embedded = 64
    throughput.record("embed", 64)

    line = describe(progress, throughput)

    assert line.startswith("embed: 4/4 docs, 90 chunks, 64/90 embedded")
    assert line.endswith("· 32 texts/s")
    assert describe(IngestProgress(stage="index", documents_total=1), throughput).startswith(
        "index: 0/1 docs"
    )
