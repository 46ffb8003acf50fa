"""`kill -9` during ingest at seeded random points, on SQLite and PostgreSQL (issue 14): the
store opens, integrity_check is ok, nothing is half-added and nothing reported is lost.
`benchmarks/crash.py` runs the same rounds, as many as asked."""

from __future__ import annotations

from pathlib import Path

import pytest
from crash_rounds import StoreAt, run_round

ROUNDS = 10


def _rounds(at: StoreAt, seed: int) -> None:
    results = [run_round(at, seed * 1000 + i) for i in range(ROUNDS)]
    # The kills landed while batches were being written, not only before the first one.
    assert sum(result.reported for result in results) >= 1
    assert results[-1].present >= 1


def test_kill_9_during_ingest_on_sqlite(tmp_path: Path) -> None:
    _rounds(StoreAt(folder=tmp_path / "store"), seed=1)


@pytest.mark.postgres
def test_kill_9_during_ingest_on_postgresql(postgres_url: str, tmp_path: Path) -> None:
    _rounds(StoreAt(folder=tmp_path, url=postgres_url), seed=2)
