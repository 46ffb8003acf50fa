"""The cyclic collector runs in batches while packs run, and is left as it was after."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.pack import collector, packer
from windowpack.pack.collector import collections_batched

# A bound that only catches a hang: the threads meet at once, however loaded the machine.
HANG_S = 120.0


@pytest.fixture(autouse=True)
def default_thresholds() -> Iterator[None]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_the_first_threshold_is_raised_inside_and_restored_after() -> None:
    with collections_batched():
        assert gc.get_threshold() == (collector._BATCHED_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_the_thresholds_are_restored_after_an_error() -> None:
    with pytest.raises(RuntimeError), collections_batched():
        raise RuntimeError("a failed pack")
    assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_threshold_of_the_process_is_kept() -> None:
    gc.set_threshold(500_000, 5, 5)
    with collections_batched():
        assert gc.get_threshold() == (500_000, 5, 5)
    assert gc.get_threshold() == (500_000, 5, 5)


def test_overlapping_packs_restore_the_thresholds_when_the_last_one_ends() -> None:
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[tuple[int, ...]] = []

    def first() -> None:
        with collections_batched():
            first_in.set()
            assert second_in.wait(HANG_S)
        first_out.set()

    def second() -> None:
        assert first_in.wait(HANG_S)
        with collections_batched():
            second_in.set()
            assert first_out.wait(HANG_S)
            seen.append(gc.get_threshold())  # the first one has ended: still batched

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG_S)
        assert not thread.is_alive()
    assert seen == [(collector._BATCHED_THRESHOLD, 10, 10)]
    assert gc.get_threshold() == (700, 10, 10)


def test_a_pack_runs_with_the_collector_batched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[int, ...]] = []
    real = packer.pack_parts

    def recording(*args: object, **kwargs: object) -> object:
        seen.append(gc.get_threshold())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(packer, "pack_parts", recording)
    with wp.open(tmp_path / "store", config=StoreConfig(embedder="hash")) as store:
        col = store.collection("docs")
        col.add(
            [wp.Document(id=f"d{i}", text=f"Seals rest on sandbank {i}. " * 80) for i in range(6)]
        )
        window = col.pack("where do seals rest?", budget=600)
        assert window.tokens <= 600
    assert seen and all(t[0] == collector._BATCHED_THRESHOLD for t in seen)
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.isenabled()  # batched, never switched off
