"""A pack racing a write: built from one version, retried when a write lands mid-load."""

from __future__ import annotations

from typing import Any

import pytest

import windowpack as wp
from windowpack.pack import packer as packing
from windowpack.types import Document

TEXT = "Harbour seals rest on sandbanks at low tide. " * 8


def test_a_write_during_the_state_load_makes_the_pack_retry(
    empty_collection: wp.Collection, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty_collection.add([Document(id="seals", text=TEXT)])
    real_load = packing.load_state
    calls: list[int] = []

    def torn_load(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[3])  # the version being loaded
        if len(calls) == 1:
            # A write commits between two of the loader's reads: rows that do not fit.
            empty_collection.add([Document(id="owls", text="Barn owls hunt voles. " * 8)])
            raise KeyError(181)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(packing, "load_state", torn_load)
    window = empty_collection.pack("seals and owls", budget=100_000)
    assert calls == [1, 2] and window.index_version == 2
    assert "Barn owls" in window.text  # the retry packed the version that was published


def test_a_load_error_without_a_write_is_raised(
    empty_collection: wp.Collection, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty_collection.add([Document(id="seals", text=TEXT)])

    def broken_load(*_args: Any, **_kwargs: Any) -> Any:
        raise KeyError("a real bug")

    monkeypatch.setattr(packing, "load_state", broken_load)
    with pytest.raises(KeyError, match="a real bug"):
        empty_collection.pack("seals", budget=1000)


def test_a_state_loaded_while_a_write_lands_is_not_kept(
    empty_collection: wp.Collection, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty_collection.add([Document(id="seals", text=TEXT)])
    real_load = packing.load_state
    writes = iter([lambda: empty_collection.add([Document(id="owls", text="Owls. " * 30)])])

    def load_then_write(*args: Any, **kwargs: Any) -> Any:
        state = real_load(*args, **kwargs)  # reads version 1's rows...
        next(writes, lambda: None)()  # ...and version 2 is committed before the check
        return state

    monkeypatch.setattr(packing, "load_state", load_then_write)
    window = empty_collection.pack("owls", budget=100_000)
    assert window.index_version == 2 and "Owls." in window.text


def test_a_stream_of_writes_cannot_starve_a_pack(
    empty_collection: wp.Collection, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty_collection.add([Document(id="seals", text=TEXT)])
    real_load = packing.load_state
    versions: list[int] = []

    def load_during_writes(*args: Any, **kwargs: Any) -> Any:
        versions.append(args[3])
        state = real_load(*args, **kwargs)
        if len(versions) <= packing._MAX_ATTEMPTS:  # a write lands during every attempt
            empty_collection.add([Document(id=f"w{len(versions)}", text=f"Write {len(versions)}.")])
        return state

    monkeypatch.setattr(packing, "load_state", load_during_writes)
    window = empty_collection.pack("seals", budget=100_000)
    # The last attempt held writes off, so it loaded the version it started on.
    assert versions == [1, 2, 3, 4, 5, 6] and window.index_version == 6


def test_a_collection_created_after_a_delete_never_gets_the_deleted_ones_window(
    hash_store: wp.Store,
) -> None:
    """SQLite gives the next collection the deleted one's id, and versions restart at 1."""
    old = hash_store.collection("a")
    old.add([Document(text="The ferry leaves at seven every morning.", id="x")])
    assert "ferry" in old.pack("ferry", budget=500).text
    hash_store.delete_collection("a")
    new = hash_store.collection("b")
    new.add([Document(text="The generator is serviced every May.", id="y")])
    assert new.collection_id == old.collection_id  # the reuse this guards against
    window = new.pack("ferry", budget=500)
    assert "generator" in window.text and "ferry" not in window.text
