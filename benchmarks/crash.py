"""More `kill -9` rounds than CI runs: a process ingesting is killed at seeded random points.

    .venv/bin/python benchmarks/crash.py --rounds 50
    .venv/bin/python benchmarks/crash.py --rounds 50 --postgres postgresql+psycopg://postgres@127.0.0.1:5432/test

Each round (tests/reliability/crash_rounds.py) forks a child that adds batches of documents
in a loop, kills it with SIGKILL after a random delay (seeded, 0.05 s to `--max-delay`), and
checks the store: it opens, SQLite's integrity_check is ok, every batch is wholly present or
wholly absent, every batch the child reported committed is there, every document has all its
chunks and its tree, and search, pack and a new write work. A failed check stops the run with
its message. With `--postgres`, the URL's server gets a fresh database (dropped afterwards).
Prints the rounds, the batches reported and found, the kills that landed inside a batch.
`--smoke` runs one round on SQLite (and one on `--postgres` when given): a check.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench_common import REPO_ROOT, add_smoke_option, scratch_postgres, write_results

sys.path.insert(0, str(REPO_ROOT / "tests" / "reliability"))
from crash_rounds import StoreAt, run_round


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="wp-crash-") as folder:
        figures["sqlite"] = _run(StoreAt(folder=Path(folder) / "store"), args)
    if args.postgres:
        with (
            scratch_postgres(args.postgres, "windowpack_crash_") as url,
            tempfile.TemporaryDirectory() as folder,
        ):
            figures["postgresql"] = _run(StoreAt(folder=Path(folder), url=url), args)
    write_results("crash", {"rounds": args.rounds, "seed": args.seed, **figures})
    return 0


def _run(at: StoreAt, args: argparse.Namespace) -> dict[str, float]:
    started = time.perf_counter()
    present, empty_rounds, documents = 0, 0, 0
    for index in range(args.rounds):
        result = run_round(at, args.seed * 100_000 + index, max_delay_s=args.max_delay)
        empty_rounds += result.present == present  # killed before its first batch committed
        present, documents = result.present, result.documents
    seconds = time.perf_counter() - started
    kind = "sqlite" if at.url is None else "postgresql"
    print(
        f"{kind}: {args.rounds} rounds in {seconds:.1f} s, every check passed; {present} "
        f"batches ({documents} documents) in the store at the end; {empty_rounds} rounds were "
        "killed before their first batch committed",
        flush=True,
    )
    return {"seconds": round(seconds, 1), "batches": present, "empty_rounds": empty_rounds}


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--rounds", type=int, default=50, help="kill -9 rounds per database")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-delay", type=float, default=1.5, help="latest kill, seconds")
    parser.add_argument("--postgres", help="admin URL of a PostgreSQL server to test too")
    add_smoke_option(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        args.rounds, args.max_delay = 1, 0.5
    return args


if __name__ == "__main__":
    sys.exit(main())
