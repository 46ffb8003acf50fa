"""`where=` and `delete(ids, where=)` through `Client` and `AsyncClient`, against a real server
sharing the test's store: each answer is what the library gives for the same request."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from api_helpers import live_server

import windowpack as wp
from windowpack.filters import parse_filter

TEAMS = ["ops", "infra", "data", "ops", "infra", "data"]
NOTES = [
    wp.Document(
        id=f"n{i}",
        text=f"Note {i}: the otters of {team} guard the lantern by the glacier.",
        metadata={"team": team, "year": 2020 + i},
    )
    for i, team in enumerate(TEAMS)
]
QUESTION = "Which otters guard the lantern?"


@pytest.fixture
def server(hash_store: wp.Store, tmp_path: Path) -> Iterator[str]:
    hash_store.collection("t").add(NOTES)
    with live_server(hash_store, tmp_path) as url:
        yield url


def test_filtered_search_pack_and_session_are_the_librarys(
    server: str, hash_store: wp.Store
) -> None:
    local = hash_store.collection("t")
    where = {"year": {"$gte": 2023}}
    with wp.Client(server) as client:
        remote = client.collection("t")
        assert remote.search(QUESTION, k=3, where=where) == local.search(QUESTION, 3, where=where)
        window = remote.pack(QUESTION, budget=3000, where=parse_filter(where))
        assert window == local.pack(QUESTION, budget=3000, where=where)
        assert {item.document_id for item in window.items} == {"n3", "n4", "n5"}
        many = client.pack(QUESTION, collections=["t"], budget=3000, where=where)
        assert {item.document_id for item in many.items} == {"n3", "n4", "n5"}
        session = remote.session(budget=3000, where={"team": "ops"})
        assert {item.document_id for item in session.pack(QUESTION).items} == {"n0", "n3"}
        with pytest.raises(wp.InvalidArgumentError) as raised:
            remote.search(QUESTION, where={"year": {"$between": [1, 2]}})
        assert raised.value.argument == "where.year.$between"


def test_delete_returns_the_librarys_report_and_one_missing_id_is_not_found(
    server: str, hash_store: wp.Store
) -> None:
    with wp.Client(server) as client:
        remote = client.collection("t")
        version = remote.stats().index_version
        report = remote.delete(["n0", "n1", "gone"], where={"team": "ops"})
        assert report == wp.DeleteReport(
            deleted=("n0",), missing=("gone",), index_version=version + 1
        )
        assert remote.delete("n1") == wp.DeleteReport(deleted=("n1",), index_version=version + 2)
        with pytest.raises(wp.DocumentNotFoundError):
            remote.delete("gone")
        with pytest.raises(wp.InvalidArgumentError):
            remote.delete()
    assert [info.id for info in hash_store.collection("t").documents()] == ["n2", "n3", "n4", "n5"]


def test_the_async_client_filters_and_deletes_alike(server: str, hash_store: wp.Store) -> None:
    local = hash_store.collection("t")

    async def scenario() -> tuple[list[wp.Hit], wp.DeleteReport]:
        async with wp.AsyncClient(server) as client:
            remote = client.collection("t")
            hits = await remote.search(QUESTION, k=4, where={"team": "infra"})
            window = await remote.pack(QUESTION, budget=2000, where={"team": "infra"})
            assert {item.document_id for item in window.items} == {"n1", "n4"}
            session = remote.session(budget=2000, where={"team": "infra"})
            assert {item.document_id for item in (await session.pack(QUESTION)).items} == {
                "n1",
                "n4",
            }
            return hits, await remote.delete(where={"team": "infra"})

    hits, report = asyncio.run(scenario())
    assert {hit.document_id for hit in hits} == {"n1", "n4"}
    assert report.deleted == ("n1", "n4") and report.index_version == local.index_version
