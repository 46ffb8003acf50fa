"""The client's methods the library has and the client lacked, against a real server: each
answer checked against the library's own for the same store and call."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from api_helpers import OWLS, SEALS, live_server

import windowpack as wp
from windowpack.config import StoreConfig

CHAT = [
    {"role": "user", "content": "Write a haiku about saffron."},
    {"role": "assistant", "content": "Threads of red gold glow."},
    {"role": "user", "content": "And one about kestrels?"},
    {"role": "assistant", "content": "Hovering, then gone."},
]


@dataclass
class LlamaDocument:
    """What a llama-index `Document` is to windowpack: read by its attributes."""

    id_: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


@pytest.fixture
def server(hash_store: wp.Store, tmp_path: Path) -> Iterator[str]:
    with live_server(hash_store, tmp_path) as url:
        yield url


@pytest.fixture
def client(server: str) -> Iterator[wp.Client]:
    with wp.Client(server) as opened:
        yield opened


@pytest.fixture
def library(tmp_path: Path) -> Iterator[wp.Store]:
    """A second store, the library's, to do the same calls in."""
    with wp.open(
        tmp_path / "library", config=StoreConfig(embedder="hash", chunk_tokens=64)
    ) as store:
        yield store


def _same_documents(remote: Any, local: wp.Collection) -> None:
    assert remote.documents() == local.documents()
    for info in local.documents():
        assert remote.get(info.id) == local.get(info.id)


def test_add_conversation_stores_what_the_library_stores(
    client: wp.Client, library: wp.Store
) -> None:
    remote, local = client.collection("chats"), library.collection("chats")
    transcript = "User: Where is the ferry?\n\nAssistant: At the quay, leaving at seven."
    for messages, chat_id in ((CHAT, "haiku"), (transcript, "ferry")):
        got = remote.add_conversation(messages, id=chat_id, title="Chat", metadata={"n": 1})
        expected = local.add_conversation(messages, id=chat_id, title="Chat", metadata={"n": 1})
        assert (got.added, got.chunks, got.tokens) == (
            expected.added,
            expected.chunks,
            expected.tokens,
        )
    _same_documents(remote, local)
    job = remote.add_conversation(CHAT, id="again", background=True)
    assert job.wait(timeout=300).added == 1


def test_add_llama_documents_names_them_as_the_library_does(
    client: wp.Client, library: wp.Store, tmp_path: Path
) -> None:
    root = tmp_path / "project"
    page = root / "docs" / "owls.html"
    page.parent.mkdir(parents=True)
    page.write_text(f"<html><body><h1>Owls</h1><p>{OWLS}</p></body></html>")
    documents = [
        LlamaDocument(
            id_=str(root / "docs" / ".." / "docs" / "owls.html"),
            text=page.read_text(),
            metadata={"file_path": str(page), "file_name": "owls.html", "file_type": "text/html"},
        ),
        LlamaDocument(id_="seals-note", text=SEALS, metadata={"team": "marine"}),
    ]
    got = client.collection("llama").add_llama_documents(documents, root=root)
    expected = library.collection("llama").add_llama_documents(documents, root=root)
    assert got.added == expected.added == 2
    remote = client.collection("llama")
    assert [info.id for info in remote.documents()] == ["docs/owls.html", "seals-note"]
    _same_documents(remote, library.collection("llama"))


def test_rebuild_tree_answers_the_report_and_takes_no_summarizer(
    client: wp.Client, hash_store: wp.Store
) -> None:
    docs = client.collection("docs")
    docs.add([SEALS, OWLS])
    report = docs.rebuild_tree()
    assert isinstance(report, wp.IngestReport) and report.index_version == 2
    assert docs.tree() == hash_store.collection("docs").tree()
    assert docs.rebuild_tree(background=True).wait(timeout=300).index_version == 3
    with pytest.raises(wp.InvalidArgumentError, match="'summarizer'"):
        docs.rebuild_tree(object())  # type: ignore[arg-type]
    with pytest.raises(wp.CollectionNotFoundError):
        client.collection("nope").rebuild_tree()


def test_add_files_names_files_by_their_path_as_the_library_does(
    client: wp.Client, library: wp.Store, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    for part, title in (("guide", "Guide"), ("api", "API")):
        (site / part).mkdir(parents=True)
        (site / part / "index.md").write_text(f"# {title}\n\nThe {title} starts here.")
    remote = client.collection("site")
    assert remote.add_files([site]).added == 2
    assert {info.id for info in remote.documents()} == {"guide/index.md", "api/index.md"}
    rooted = client.collection("rooted")
    rooted.add_files([site], root=tmp_path)
    library.collection("rooted").add_files([site], root=tmp_path)
    _same_documents(rooted, library.collection("rooted"))
    with pytest.raises(wp.InvalidArgumentError, match="'root'"):
        rooted.add_files([site], root=site / "api")


def test_a_failed_first_add_leaves_no_collection_behind(client: wp.Client, tmp_path: Path) -> None:
    (tmp_path / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (tmp_path / "notes.txt").write_text("Kestrels hover over the verge.")
    with pytest.raises(wp.UnsupportedFileError, match=r"photo\.png"):
        client.collection("docs").add_files([tmp_path / "notes.txt", tmp_path / "photo.png"])
    twice = [wp.Document(id="same", text=SEALS), wp.Document(id="same", text=OWLS)]
    with pytest.raises(wp.InvalidInputError, match="'same'"):
        client.collection("docs").add(twice)
    assert client.collections() == []


def test_new_collection_settings_are_the_librarys(client: wp.Client) -> None:
    client.collection("docs", chunk_tokens=32).add([SEALS])
    assert client.collection("docs").stats().chunk_tokens == 32
    with pytest.raises(wp.ConflictError, match="chunk_tokens=32"):
        client.collection("docs", chunk_tokens=64).add([OWLS])


def test_a_handle_to_a_deleted_collection_says_so_as_a_library_handle_does(
    client: wp.Client, hash_store: wp.Store
) -> None:
    remote = client.collection("docs")
    remote.add([SEALS])
    local = hash_store.collection("docs")
    client.delete_collection("docs")
    with pytest.raises(wp.CollectionDeletedError) as over_http:
        remote.search("seals")
    with pytest.raises(wp.CollectionDeletedError) as in_library:
        local.search("seals")
    assert over_http.value.code == in_library.value.code == "collection_deleted"
    with pytest.raises(wp.CollectionDeletedError):
        remote.add([OWLS])  # refused, not a new collection under the name
    assert client.collections() == []
    with pytest.raises(wp.CollectionNotFoundError) as never:
        client.collection("never").stats()
    assert type(never.value) is wp.CollectionNotFoundError


def test_the_async_client_has_the_same_methods(server: str, hash_store: wp.Store) -> None:
    async def run() -> tuple[wp.IngestReport, wp.IngestReport, type[BaseException]]:
        async with wp.AsyncClient(server) as client:
            chats = client.collection("chats")
            added = await chats.add_conversation(CHAT, id="haiku")
            rebuilt = await (await chats.rebuild_tree(background=True)).wait(timeout=300)
            await client.delete_collection("chats")
            try:
                await chats.tree()
            except wp.CollectionNotFoundError as error:
                return added, rebuilt, type(error)
            raise AssertionError("a deleted collection was found")

    added, rebuilt, raised = asyncio.run(run())
    assert added.added == 1 and rebuilt.index_version == 2
    assert raised is wp.CollectionDeletedError
    sync_methods = {name for name in dir(wp.client.RemoteCollection) if not name.startswith("_")}
    async_methods = {
        name for name in dir(wp.client.AsyncRemoteCollection) if not name.startswith("_")
    }
    assert sync_methods == async_methods
