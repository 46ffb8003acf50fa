"""Content hashes: the cache key of embeddings and summaries."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from windowpack.text.hashing import content_hash


@given(st.text(), st.text())
def test_equal_texts_hash_equal_and_different_texts_differ(first: str, second: str) -> None:
    assert (content_hash(first) == content_hash(second)) == (first == second)


def test_the_hash_is_sha256_of_utf8_so_stored_keys_stay_valid() -> None:
    # Stored embedding and summary caches are keyed by this value: it must never change.
    assert content_hash("über") == hashlib.sha256("über".encode()).hexdigest()
    assert len(content_hash("")) == 64
