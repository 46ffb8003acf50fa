"""Content hashing: the key of the embedding and summary caches and of document identity."""

from __future__ import annotations

import hashlib


def content_hash(text: str) -> str:
    """The SHA-256 hex digest of `text` in UTF-8: equal texts, equal hashes, in any process."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
