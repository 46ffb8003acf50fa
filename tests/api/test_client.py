"""`windowpack.Client` and `AsyncClient` against a real uvicorn server over loopback.

The server shares the test's store, so every answer is checked against what the library
itself gives for the same store and request.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from api_helpers import FERRY, OWLS, SEALS, live_server

import windowpack as wp

DOCUMENTS = [
    wp.Document(id="seals", title="Seals", text=SEALS),
    wp.Document(id="owls", title="Owls", text=OWLS, metadata={"team": "birds"}),
    wp.Document(id="ferry", title="Ferry", text=FERRY),
]


@pytest.fixture
def server(hash_store: wp.Store, tmp_path: Path) -> Iterator[str]:
    with live_server(hash_store, tmp_path) as url:
        yield url


@pytest.fixture
def client(server: str) -> Iterator[wp.Client]:
    with wp.Client(server) as opened:
        yield opened


def test_a_first_add_creates_the_collection_as_the_library_does(
    client: wp.Client, hash_store: wp.Store
) -> None:
    docs = client.collection("docs", chunk_tokens=32)
    assert client.collections() == []

    report = docs.add(DOCUMENTS)

    assert isinstance(report, wp.IngestReport) and report.added == 3
    assert client.collections() == ["docs"] and len(docs) == 3
    assert docs.stats() == hash_store.collection("docs").stats()
    assert docs.stats().chunk_tokens == 32


def test_search_pack_and_tree_equal_the_library(client: wp.Client, hash_store: wp.Store) -> None:
    client.collection("docs").add(DOCUMENTS)
    local, remote = hash_store.collection("docs"), client.collection("docs")
    question = "when does the ferry leave?"

    assert remote.search(question, k=3) == local.search(question, k=3)
    window = remote.pack(question, budget=300, align=True)
    assert window == local.pack(question, budget=300, align=True)  # each item's `why` too
    assert all(item.why is not None for item in window.items)
    assert [window.text[i.offset : i.offset + len(i.text)] for i in window.items] == [
        i.text for i in window.items
    ]
    assert window.messages()[-1]["content"][0]["text"] == question
    assert remote.tree() == local.tree()
    root = local.tree().root_id
    assert root is not None and remote.node(root) == local.node(root)


def test_a_header_style_and_a_text_shown_once_come_back_as_the_library_gives_them(
    client: wp.Client, hash_store: wp.Store
) -> None:
    copy = wp.Document(id="seals-again", title="Seals", text=SEALS)
    client.collection("docs").add([*DOCUMENTS, copy])
    local, remote = hash_store.collection("docs"), client.collection("docs")
    question = "where do the seals haul out?"
    for headers in ("full", "compact", "none"):
        window = remote.pack(question, budget=250, headers=headers)  # type: ignore[arg-type]
        assert window == local.pack(question, budget=250, headers=headers)  # type: ignore[arg-type]
    shown = [item for item in remote.pack(question, budget=5000).items if item.kind == "chunk"]
    assert {item.document_id for item in shown} == {"seals", "owls", "ferry"}
    assert {item.duplicates for item in shown if item.document_id == "seals"} == {("seals-again",)}
    with pytest.raises(wp.InvalidInputError, match="headers"):
        remote.pack(question, budget=250, headers="short")  # type: ignore[arg-type]


def test_documents_get_delete_and_a_multi_collection_pack(client: wp.Client) -> None:
    docs = client.collection("docs")
    docs.add(DOCUMENTS)
    client.collection("more").add(["Lighthouse keepers log the weather at dawn."])

    assert [info.id for info in docs.documents()] == ["seals", "owls", "ferry"]
    assert [info.id for info in docs.documents(offset=1, limit=1)] == ["owls"]
    assert docs.get("owls").metadata == {"team": "birds"}
    docs.delete("owls")
    assert [info.id for info in docs.documents()] == ["seals", "ferry"]
    window = client.pack("lighthouse weather", collections=["docs", "more"], budget=400)
    assert {name for name, _ in window.index_versions} == {"docs", "more"}
    assert "Lighthouse" in window.text


def test_files_and_background_jobs(client: wp.Client, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "owls.md").write_text("# Owls\n\nBarn owls hunt voles at night.")
    (folder / "seals.txt").write_text("Harbour seals rest on sandbanks.")
    docs = client.collection("docs")

    job = docs.add_files([folder], background=True)
    report = job.wait(timeout=300)

    assert isinstance(job, wp.client.RemoteJob) and job.state.status == "succeeded"
    assert report.added == 2 and client.job(job.id).state.report == report
    assert {info.id: info.title for info in docs.documents()} == {
        "owls.md": "Owls",
        "seals.txt": "seals.txt",
    }


def test_a_failed_background_job_raises_its_error_from_the_tree(client: wp.Client) -> None:
    twice = [wp.Document(id="same", text="One."), wp.Document(id="same", text="Two.")]
    job = client.collection("docs").add(twice, background=True)
    with pytest.raises(wp.InvalidInputError, match="same"):
        job.wait(timeout=300)
    state = job.state
    assert state.status == "failed" and state.done and state.report is None
    assert state.error is not None and state.error.code == "invalid_input"
    assert state.finished_at is not None and state.created_at <= state.finished_at


def test_errors_are_the_library_exception_tree(client: wp.Client) -> None:
    client.collection("docs").add(DOCUMENTS)

    with pytest.raises(wp.CollectionNotFoundError, match=r"'nope' does not exist.*'docs'") as gone:
        client.collection("nope").search("x")
    assert type(gone.value) is wp.CollectionNotFoundError  # not its subclass
    with pytest.raises(wp.InvalidInputError, match=r"body\.budget") as raised:
        client.collection("docs").pack("x", budget=0)
    assert raised.value.code == "validation_error" and raised.value.http_status == 422
    with pytest.raises(wp.DocumentNotFoundError, match="'missing'"):
        client.collection("docs").get("missing")
    with pytest.raises(wp.JobNotFoundError):
        client.job("no-such-job")
    with pytest.raises(wp.ConflictError):
        client.create_collection("docs")


def test_a_collection_deleted_while_in_use_crosses_the_wire_as_itself() -> None:
    from windowpack.errors import from_wire

    message = str(wp.CollectionDeletedError("docs", collection_id=3))
    error = from_wire("collection_deleted", message, 404)
    assert isinstance(error, wp.CollectionDeletedError)
    assert isinstance(error, wp.CollectionNotFoundError), "callers catching not-found see it"
    assert error.http_status == 404 and "'docs' was deleted" in str(error)


def test_keys_are_sent_and_refusals_raise(hash_store: wp.Store, tmp_path: Path) -> None:
    reader = hash_store.api_keys.create("reader", collections=["docs"], can_write=False)
    hash_store.collection("docs").add(DOCUMENTS)
    with live_server(hash_store, tmp_path) as url:
        with wp.Client(url) as anonymous, pytest.raises(wp.AuthenticationError):
            anonymous.collections()
        with wp.Client(url, api_key=reader.secret) as keyed:
            assert keyed.collections() == ["docs"]
            assert keyed.collection("docs").search("ferry", k=1)[0].document_id == "ferry"
            with pytest.raises(wp.PermissionDeniedError):
                keyed.collection("docs").add(["more"])


def test_a_server_that_is_not_there_is_named() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with (
        wp.Client(f"http://127.0.0.1:{port}") as client,
        pytest.raises(wp.ServerUnavailableError, match=f"127.0.0.1:{port}"),
    ):
        client.collections()


def test_the_async_client_mirrors_the_sync_one(server: str, hash_store: wp.Store) -> None:
    async def run() -> tuple[wp.Window, list[wp.Hit], wp.IngestReport]:
        async with wp.AsyncClient(server) as client:
            docs = client.collection("docs")
            report = await (await docs.add(DOCUMENTS, background=True)).wait(timeout=300)
            hits = await docs.search("owls voles", k=2)
            window = await docs.pack("owls voles", budget=250)
            with pytest.raises(wp.CollectionNotFoundError):
                await client.collection("nope").tree()
            return window, hits, report

    window, hits, report = asyncio.run(run())

    local = hash_store.collection("docs")
    assert report.added == 3
    assert hits == local.search("owls voles", k=2)
    assert window == local.pack("owls voles", budget=250)


def test_a_hit_names_its_section_and_heading_path_through_rest(
    client: wp.Client, hash_store: wp.Store
) -> None:
    guide = "# Guide\n\nIntro.\n\n## Ferries\n\nThe harbour ferry leaves at seven sharp.\n"
    client.collection("docs").add([wp.Document(id="guide.md", text=guide, kind="markdown")])

    remote = client.collection("docs").search("harbour ferry seven", k=1)

    assert remote == hash_store.collection("docs").search("harbour ferry seven", k=1)
    assert (remote[0].unit_name, remote[0].heading_path) == ("section", ("Guide", "Ferries"))
