"""API keys in the store's database, on SQLite and PostgreSQL (the same code on both)."""

from __future__ import annotations

import pytest

import windowpack as wp
from windowpack.errors import InvalidArgumentError, NotFoundError


def test_create_verify_revoke(any_database_store: wp.Store) -> None:
    keys = any_database_store.api_keys
    assert not keys.any_active()
    reader = keys.create("reader", collections=["a", "b", "a"], can_write=False)
    writer = keys.create("ops", collections=["*"], can_write=True)
    assert reader.secret != writer.secret and keys.any_active()
    found = keys.verify(reader.secret)
    assert found is not None and found.collections == ("a", "b") and not found.can_write
    assert found.can_see("a") and not found.can_see("c")
    everything = keys.verify(writer.secret)
    assert everything is not None and everything.can_see("anything") and everything.can_write
    keys.revoke(reader.key.key_id)
    assert keys.verify(reader.secret) is None
    assert [key.revoked for key in keys.list()] == [True, False]
    keys.revoke(writer.key.key_id)
    assert not keys.any_active()


def test_forged_and_malformed_keys_are_refused(any_database_store: wp.Store) -> None:
    keys = any_database_store.api_keys
    real = keys.create("x", collections=["a"], can_write=False)
    prefix, key_id, secret = real.secret.split("_", 2)
    forged = f"{prefix}_{key_id}_{'A' * len(secret)}"  # right id, wrong secret
    for attempt in (forged, "", "wpk_", real.secret + "x", real.secret.upper()):
        assert keys.verify(attempt) is None, attempt


def test_bad_arguments_are_named(hash_store: wp.Store) -> None:
    with pytest.raises(InvalidArgumentError, match="'collections'"):
        hash_store.api_keys.create("x", collections=[], can_write=False)
    with pytest.raises(InvalidArgumentError, match="'name'"):
        hash_store.api_keys.create(" ", collections=["a"], can_write=False)
    with pytest.raises(NotFoundError, match="nope"):
        hash_store.api_keys.revoke("nope")
