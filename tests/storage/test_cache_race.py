"""The embedding and summary caches under a race: a row another writer committed after this
one looked (issue 14, D3) is skipped, never an `IntegrityError` failing a committed write."""

from __future__ import annotations

import pytest
from sqlalchemy import select

import windowpack as wp
from windowpack.storage import repository
from windowpack.storage.schema import EmbeddingRow, SummaryRow


def _sessions(store: wp.Store):  # type: ignore[no-untyped-def]
    return store.sessions  # test-only: the store's own session factory


@pytest.fixture
def looked_too_early(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every cache check finds nothing: as if another writer committed right after it."""
    monkeypatch.setattr(repository, "cached_embeddings", lambda *_: {})
    monkeypatch.setattr(repository, "cached_summaries", lambda *_: {})


def test_an_embedding_committed_meanwhile_is_skipped(
    any_database_store: wp.Store, looked_too_early: None
) -> None:
    sessions = _sessions(any_database_store)
    with sessions.begin() as session:
        repository.store_embeddings(session, "m", 2, {"h1": b"first!!!"})
    with sessions.begin() as session:  # the second writer, whose check missed h1
        repository.store_embeddings(session, "m", 2, {"h1": b"second!!", "h2": b"new-one!"})
    with sessions() as session:
        rows = dict(session.execute(select(EmbeddingRow.text_hash, EmbeddingRow.vector)).all())
    assert rows == {"h1": b"first!!!", "h2": b"new-one!"}  # the first write stands


def test_a_summary_committed_meanwhile_is_skipped(
    any_database_store: wp.Store, looked_too_early: None
) -> None:
    sessions = _sessions(any_database_store)
    with sessions.begin() as session:
        repository.store_summaries(session, {"c1": "one"})
    with sessions.begin() as session:
        repository.store_summaries(session, {"c1": "other", "c2": "two"})
    with sessions() as session:
        rows = dict(session.execute(select(SummaryRow.children_hash, SummaryRow.text)).all())
    assert rows == {"c1": "one", "c2": "two"}
