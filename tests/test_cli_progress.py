"""The ingest progress of the CLI, drawn by rich: each step against its own total, within the
console's width, with a rate that holds steady between batches; where stderr is not a terminal,
plain lines at a steady interval (`ProgressLog`), with a rate and the time left.

rich is driven by a fake clock (`get_time`) and renders into a `StringIO` console of a fixed
width; a frame is rendered after each report, so nothing here depends on the machine's speed.
"""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console

import windowpack as wp
from cli_main import run_main
from windowpack.cli.progress import IngestDisplay
from windowpack.ingest import ProgressLog
from windowpack.types import IngestProgress

_COUNT = re.compile(r"(\d[\d,]*)/(\d[\d,]*) (docs|chunks|texts|sentences)")
_RATE = re.compile(r"([\d,.]+) texts/s")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _display(width: int, clock: Clock) -> tuple[IngestDisplay, Console]:
    console = Console(file=StringIO(), width=width, color_system=None, legacy_windows=False)
    return IngestDisplay(console, get_time=clock, auto_refresh=False), console


def _frame(display: IngestDisplay, console: Console) -> list[str]:
    """What the display shows now, line by line."""
    with console.capture() as captured:
        console.print(display.progress.get_renderable())
    return captured.get().splitlines()


def _numbers(line: str) -> tuple[int, int] | None:
    found = _COUNT.search(line)
    return (int(found[1].replace(",", "")), int(found[2].replace(",", ""))) if found else None


def _documents(count: int) -> list[wp.Document]:
    """Markdown pages of a few sections each: chunks (with their sentences) and summaries."""
    pages = []
    for page in range(count):
        sections = "".join(
            f"## Part {part}\n\nPage {page} part {part} says {' '.join(['words'] * 40)}. "
            f"It adds a second sentence about item {page * 10 + part}.\n\n"
            for part in range(6)
        )
        pages.append(wp.Document(id=f"page{page}.md", text=f"# Page {page}\n\n{sections}"))
    return pages


def test_an_ingest_shows_every_step_against_its_own_total_within_80_columns(
    hash_store: wp.Store,
) -> None:
    clock = Clock()
    display, console = _display(80, clock)
    frames: list[list[str]] = []

    def update(progress: IngestProgress) -> None:
        clock.now += 0.7
        display.update(progress)
        frames.append(_frame(display, console))

    report = hash_store.collection("docs").add(_documents(12), progress=update)

    lines = [line for frame in frames for line in frame]
    assert lines and max(cell_len(line) for line in lines) <= 80
    counts = [numbers for line in lines if (numbers := _numbers(line)) is not None]
    assert counts and all(done <= total for done, total in counts)
    final = frames[-1]
    steps = ["chunk", "summarize", "embed", "embed", "embed", "index"]
    assert [line.split()[0] for line in final] == steps
    assert _numbers(final[0]) == (12, 12) and f"{report.chunks} chunks" in final[0]
    assert _numbers(final[1]) == (12, 12) and "summarised afresh" in final[1]
    chunks, alone, texts = _numbers(final[2]), _numbers(final[3]), _numbers(final[4])
    assert chunks is not None and alone is not None and texts is not None
    # Each chunk's pass embeds its sentences, then those foreign to their chunk are embedded
    # alone, then the texts left: the summaries above them.
    assert chunks[0] == chunks[1] == report.chunks and "chunks" in final[2]
    assert alone[0] == alone[1] > 0 and "sentences" in final[3]
    assert texts[0] == texts[1] > 0 and "texts" in final[4]


@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_no_line_passes_the_width(width: int) -> None:
    clock = Clock()
    display, console = _display(width, clock)
    display.update(IngestProgress(stage="chunk", documents_total=120_000, completed=0))
    big = IngestProgress(
        stage="summarize",
        documents_total=120_000,
        documents=120_000,
        chunks=9_876_543,
        summaries=1_234_567,
        completed=98_765,
        total=120_000,
    )
    clock.now += 3
    display.update(big)
    clock.now += 2
    display.update(
        IngestProgress(
            stage="embed", documents_total=1, completed=8_765_432, total=9_876_543, unit="texts"
        )
    )
    lines = _frame(display, console)
    assert len(lines) == 3
    assert all(cell_len(line) <= width for line in lines)


def test_the_rate_holds_steady_between_batches_of_a_slow_model() -> None:
    """64 texts every 8 s (8 texts/s), shown every half second: the rate never falls to 0
    while the model works on a batch, as the old 5-second window let it."""
    clock = Clock()
    display, console = _display(80, clock)
    progress = IngestProgress(stage="embed", documents_total=1, unit="texts", total=640)
    display.update(progress)
    rates: list[float] = []
    for _ in range(10):
        for _ in range(16):
            clock.now += 0.5
            line = _frame(display, console)[0]
            shown = _RATE.search(line)
            if shown:
                rates.append(float(shown[1].replace(",", "")))
        progress.completed += 64
        display.update(progress)
    assert len(rates) >= 16 * 8  # a rate from the first batch on
    assert all(rate == pytest.approx(8, rel=0.05) for rate in rates)


def test_a_finished_step_keeps_its_count_and_the_next_starts_its_own() -> None:
    clock = Clock()
    display, console = _display(80, clock)
    progress = IngestProgress(stage="embed", documents_total=3, unit="texts", total=100)
    display.update(progress)
    clock.now += 4
    progress.completed = 100
    display.update(progress)
    progress.unit, progress.total, progress.completed = "sentences", None, 0
    display.update(progress)  # the sentences' total is not known yet
    clock.now += 1
    progress.total = 300
    display.update(progress)

    first, second = _frame(display, console)

    assert _numbers(first) == (100, 100) and "25 texts/s" in first
    assert _numbers(second) == (0, 300) and "sentences" in second


# --- where stderr is not a terminal: plain lines at a steady interval ----------------------


def _log(clock: Clock, interval_s: float = 10.0) -> tuple[ProgressLog, list[str]]:
    lines: list[str] = []
    return ProgressLog(lines.append, label="ingest", interval_s=interval_s, clock=clock), lines


def test_a_log_gets_a_line_per_step_then_one_per_interval_with_rate_and_eta() -> None:
    clock = Clock()
    log, lines = _log(clock)
    progress = IngestProgress(stage="embed", documents_total=1, unit="texts", total=1000)
    log.report(progress)
    for _ in range(60):  # 1 s per report of 10 texts: a line every 10 s
        clock.now += 1
        progress.completed += 10
        log.report(progress)
    progress.stage, progress.unit, progress.total, progress.completed = "index", "", None, 0
    log.report(progress)
    clock.now += 3
    log.close()

    assert lines[0] == "ingest: embed 0/1,000 texts (0.0%)"
    assert lines[1] == "ingest: embed 100/1,000 texts (10.0%), 10.0 texts/s, ETA 0:01:30"
    assert lines[6] == "ingest: embed 600/1,000 texts (60.0%), 10.0 texts/s, ETA 0:00:40"
    assert lines[7:] == ["ingest: index"]  # a new step at once; close adds nothing new
    assert not any("\r" in line or "\x1b" in line for line in lines)


def test_close_writes_the_last_state_no_line_has_shown() -> None:
    clock = Clock()
    log, lines = _log(clock)
    log.update("chunk", 0, 3, "documents")
    clock.now += 2
    log.update("chunk", 3, 3, "documents")  # within the interval: not written yet
    assert lines == ["ingest: chunk 0/3 documents (0.0%)"]
    log.close()
    assert lines[-1] == "ingest: chunk 3/3 documents (100.0%), 1.5 documents/s, ETA 0:00:00"


def test_the_interval_must_be_positive() -> None:
    with pytest.raises(wp.InvalidArgumentError, match="interval_s"):
        ProgressLog(print, label="x", interval_s=0)


def test_ingest_to_a_log_file_writes_plain_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`windowpack ingest` with stderr captured (as in a log file): one line per step, no bar."""
    folder = tmp_path / "pages"
    folder.mkdir()
    for document in _documents(3):
        (folder / str(document.id)).write_text(document.text, encoding="utf-8")
    code, _, err = run_main(
        monkeypatch, capsys, "ingest", str(folder), "--store", str(tmp_path / "s"),
        "--embedder", "hash",
    )  # fmt: skip

    assert code == 0, err
    lines = [line for line in err.splitlines() if line.startswith("ingest: ")]
    stages = [line.split()[1] for line in lines]
    assert stages[0] == "parse" and {"chunk", "summarize", "embed", "index"} <= set(stages)
    assert "ingest: chunk 3/3 documents (100.0%)" in "\n".join(lines)
    assert "\r" not in err and "\x1b" not in err
