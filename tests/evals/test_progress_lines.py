"""`windowpack eval`'s progress where stderr is not a terminal: plain lines, not a bar."""

from __future__ import annotations

from io import StringIO

from rich.console import Console

from windowpack.evals.cli_run import _LogProgress


def test_an_eval_in_a_log_writes_its_progress_as_lines() -> None:
    stream = StringIO()
    console = Console(file=stream, width=60, color_system=None)
    assert not console.is_terminal

    with _LogProgress(console, "niah") as progress:
        progress.start(3)
        for description in ("8k, depth 0", "8k, depth 50", "8k, depth 100"):
            progress.advance(description)

    lines = stream.getvalue().splitlines()
    assert lines[0] == "eval: niah 0/3 cases (0.0%)"
    assert lines[-1].startswith("eval: niah 3/3 cases (100.0%), ")
    assert "cases/s, ETA 0:00:00" in lines[-1]
    assert len(lines) == 2  # within the interval: the start and the end, nothing between
    assert "\r" not in stream.getvalue() and "\x1b" not in stream.getvalue()
