"""A command run beside CPU-bound hog processes: does it pass on a loaded machine, and how long
does it take there?

The test suite must not depend on the machine's speed (no tight timeouts, sleeps that race,
start-up budgets): the proof is that it passes, several times in a row, while other processes
take the cores. This starts `--hogs` processes that spin on one core each, runs the command
`--runs` times (stopping at the first failure), prints each run's wall time and exit status,
then stops the hogs it started, whatever happened.

    .venv/bin/python benchmarks/under_load.py --hogs 2 --runs 3 -- make test

(`make test-under-load` runs exactly that.) `--smoke` runs a tiny Python command once beside
two hogs: a check that the script works, not a measurement.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from bench_common import add_smoke_option

# Pure Python arithmetic in a loop: one core busy, no memory, no IO, until terminated.
_HOG_CODE = "x = 0\nwhile True:\n    x = (x * 31 + 7) % 1_000_003\n"


@contextmanager
def hogs(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`count` CPU-bound processes for the duration of the block; each stopped by its id."""
    started = [subprocess.Popen([sys.executable, "-c", _HOG_CODE]) for _ in range(count)]
    try:
        yield started
    finally:
        for process in started:
            process.terminate()
        for process in started:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def run_beside_hogs(
    command: Sequence[str], *, hog_count: int, runs: int
) -> list[tuple[float, int]]:
    """(wall seconds, exit status) of each run of `command`, stopping after a failed one."""
    results: list[tuple[float, int]] = []
    with hogs(hog_count) as started:
        pids = " ".join(str(process.pid) for process in started)
        print(f"{hog_count} CPU hogs running (pids {pids}); load {_load()}", flush=True)
        for run in range(1, runs + 1):
            began = time.monotonic()
            status = subprocess.run(list(command), check=False).returncode
            wall = time.monotonic() - began
            results.append((wall, status))
            print(f"run {run}/{runs}: exit {status}, {wall:.0f} s wall, load {_load()}", flush=True)
            if status != 0:
                break
    return results


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hogs", type=int, default=2, help="CPU-bound processes beside it")
    parser.add_argument("--runs", type=int, default=3, help="runs of the command in a row")
    parser.add_argument("command", nargs="*", help="the command, after --")
    add_smoke_option(parser)
    args = parser.parse_args(argv)
    if args.hogs < 0:
        parser.error(f"--hogs must be 0 or more, got {args.hogs}")
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, got {args.runs}")
    command = [sys.executable, "-c", "print('ran beside the hogs')"] if args.smoke else args.command
    if not command:
        parser.error("give the command to run after --, e.g. -- make test")
    runs = 1 if args.smoke else args.runs
    results = run_beside_hogs(command, hog_count=args.hogs, runs=runs)
    passed = sum(1 for _, status in results if status == 0)
    walls = ", ".join(f"{wall:.0f} s" for wall, _ in results)
    print(f"results: {passed} of {runs} runs passed beside {args.hogs} hogs ({walls})")
    return 0 if passed == runs else 1


if __name__ == "__main__":
    raise SystemExit(main())
