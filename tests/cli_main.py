"""Running `windowpack` in the test's process, as the console script does."""

from __future__ import annotations

import pytest

from windowpack.cli import main


def run_main(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    """The exit code, stdout and stderr of `windowpack ARGS`."""
    monkeypatch.setattr("sys.argv", ["windowpack", *args])
    monkeypatch.setenv("COLUMNS", "200")  # rich would wrap option names otherwise
    try:
        main()
        code = 0
    except SystemExit as exited:
        code = int(exited.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err
