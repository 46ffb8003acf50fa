"""The library facade: ingest from files, conversations, search, and bad input."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.documents.conversation import render_conversation


def _write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _state(col: wp.Collection) -> list[tuple[str, str]]:
    return [(info.id, col.get(info.id).text) for info in col.documents()]


@pytest.fixture
def corpus_folder(tmp_path: Path) -> Path:
    """A folder of good files plus one of each kind of bad file."""
    folder = tmp_path / "corpus"
    _write(folder / "notes.txt", "Glaciers retreat in warm summers.\n\nIce cores hold old air.")
    _write(folder / "guide.md", "# Guide\n\nPack wool socks.\n\n## Food\n\nBring oats.")
    _write(folder / "page.html", "<html><title>Page</title><body><p>Otters hold hands.</p>")
    _write(folder / "sub" / "empty.txt", "")
    _write(folder / "sub" / "binary.txt", b"\x00\x01\x02binary")
    _write(folder / "sub" / "latin1.txt", "caf\xe9".encode("latin-1"))
    _write(folder / "sub" / "image.png", b"\x89PNG")
    return folder


def test_add_files_ingests_good_files_and_reports_skipped_ones(
    empty_collection: wp.Collection, corpus_folder: Path
) -> None:
    report = empty_collection.add_files([corpus_folder])
    ids = [info.id for info in empty_collection.documents()]
    assert len(ids) == 3 and report.added == 3
    assert {Path(doc_id).name for doc_id in ids} == {"notes.txt", "guide.md", "page.html"}
    # Named relative to the folder that holds the store (the root of file ids).
    assert set(report.skipped) == {
        f"corpus/sub/{name}" for name in ("empty.txt", "binary.txt", "latin1.txt", "image.png")
    }
    reasons = " | ".join(report.skipped.values())
    assert "no text" in reasons and "binary" in reasons and "UTF-8" in reasons
    assert empty_collection.search("otters", k=1)[0].title == "Page"


def test_re_adding_an_unchanged_folder_does_no_work(
    empty_collection: wp.Collection, corpus_folder: Path
) -> None:
    empty_collection.add_files([corpus_folder])
    again = empty_collection.add_files([corpus_folder])
    assert (again.added, again.replaced, again.unchanged, again.embedded) == (0, 0, 3, 0)


@pytest.mark.parametrize(
    ("name", "content", "error", "fragment"),
    [
        ("empty.txt", "", wp.EmptyDocumentError, "has no text"),
        ("blob.bin", b"\x00\xff\x00\xfe", wp.UnsupportedFileError, "blob.bin"),
        ("bad.txt", b"ok \xff\xfe bytes", wp.UnsupportedFileError, "UTF-8"),
        ("bad.json", "{not json", wp.UnsupportedFileError, "invalid JSON"),
    ],
)
def test_a_bad_named_file_raises_naming_it_and_changes_nothing(
    empty_collection: wp.Collection,
    tmp_path: Path,
    name: str,
    content: str | bytes,
    error: type[wp.WindowpackError],
    fragment: str,
) -> None:
    good = _write(tmp_path / "good.txt", "Some good text about seals.")
    empty_collection.add_files([good])
    before = _state(empty_collection)
    bad = _write(tmp_path / name, content)
    with pytest.raises(error) as raised:
        empty_collection.add_files([bad, good])
    assert str(raised.value).startswith(f"{name}: ") and fragment in str(raised.value)
    assert _state(empty_collection) == before


def test_a_missing_path_is_named(empty_collection: wp.Collection, tmp_path: Path) -> None:
    with pytest.raises(wp.InputPathNotFoundError, match=r"nowhere\.txt"):
        empty_collection.add_files([tmp_path / "nowhere.txt"])


def test_a_pdf_without_text_is_refused(empty_collection: wp.Collection, tmp_path: Path) -> None:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    path = tmp_path / "scan.pdf"
    with path.open("wb") as handle:
        writer.write(handle)
    with pytest.raises(wp.EmptyDocumentError, match=r"scan\.pdf"):
        empty_collection.add_files([path])


def test_a_file_over_the_size_limit_is_refused_without_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "huge.txt"
    with big.open("wb") as handle:  # sparse: 200 MB on paper, nothing on disk
        handle.truncate(200 * 1024 * 1024)
    config = StoreConfig(embedder="hash")
    with wp.open(tmp_path / "store", config=config) as store:
        with pytest.raises(wp.FileTooLargeError, match=r"huge\.txt"):
            store.collection("docs").add_files([big])
        assert store.collections() == []  # a failed first write creates nothing


def test_add_conversation_keeps_request_and_reply_in_one_turn(
    empty_collection: wp.Collection,
) -> None:
    messages = [
        {"role": "system", "content": "You are a poet."},
        {"role": "user", "content": "Write a poem about tapirs."},
        {"role": "assistant", "content": "Tapirs wander, snouts held low."},
        {"role": "user", "content": "Write a riddle about owls."},
        {"role": "assistant", "content": "Who hoots at night but is not a ghost?"},
    ]
    empty_collection.add_conversation(messages, id="chat-1", title="Chat")
    # Each message is a chunk of its own (a request is never merged into its reply's first
    # chunk), and the request and its reply share the turn's unit, which windows keep whole.
    hit = empty_collection.search("poem about tapirs", k=1)[0]
    assert hit.text == "user: Write a poem about tapirs." and hit.unit == 1
    reply = empty_collection.search("snouts held low", k=1)[0]
    assert reply.text == "assistant: Tapirs wander, snouts held low." and reply.unit == 1
    text, _ = render_conversation(messages)
    assert empty_collection.get("chat-1").text == text


def test_a_malformed_conversation_names_the_message(empty_collection: wp.Collection) -> None:
    with pytest.raises(wp.InvalidInputError, match=r"messages\[1\].*content"):
        empty_collection.add_conversation([{"role": "user", "content": "hi"}, {"role": "x"}])
    assert len(empty_collection) == 0


@pytest.mark.parametrize("k", [0, -3])
def test_search_rejects_non_positive_k(empty_collection: wp.Collection, k: int) -> None:
    empty_collection.add(["text"])
    with pytest.raises(wp.InvalidArgumentError, match="'k'"):
        empty_collection.search("text", k=k)


def test_search_on_an_empty_collection_returns_nothing(empty_collection: wp.Collection) -> None:
    assert empty_collection.search("anything", k=5) == []


def test_unknown_collection_is_an_error_when_not_creating(hash_store: wp.Store) -> None:
    with pytest.raises(wp.CollectionNotFoundError, match="'nope'"):
        hash_store.collection("nope", create=False)
    assert hash_store.collections() == []


@pytest.mark.parametrize("name", ["", "has space", "../escape", "x" * 65])
def test_invalid_collection_names_are_refused(hash_store: wp.Store, name: str) -> None:
    with pytest.raises(wp.InvalidArgumentError, match="'collection'"):
        hash_store.collection(name)


def test_unknown_tokenizer_is_named(hash_store: wp.Store) -> None:
    with pytest.raises(wp.InvalidArgumentError, match="'tokenizer'"):
        hash_store.collection("docs", tokenizer="no-such-tokenizer")
    assert hash_store.collections() == []


def test_reopening_with_another_embedder_is_a_conflict(tmp_path: Path) -> None:
    with wp.open(tmp_path / "s", config=StoreConfig(embedder="hash")) as store:
        store.collection("docs").add(["text"])
    with (
        wp.open(tmp_path / "s", config=StoreConfig(embedder="hash-128")) as store,
        pytest.raises(wp.ConflictError, match="hash-384"),
    ):
        store.collection("docs")


def test_duplicate_ids_in_one_add_are_refused(empty_collection: wp.Collection) -> None:
    with pytest.raises(wp.InvalidInputError, match="'same'"):
        empty_collection.add([wp.Document(text="a", id="same"), wp.Document(text="b", id="same")])
    assert len(empty_collection) == 0


def test_a_failed_first_write_leaves_no_empty_collection_behind(hash_store: wp.Store) -> None:
    handle = hash_store.collection("new", chunk_tokens=32)
    twice = [wp.Document(text="a", id="same"), wp.Document(text="b", id="same")]
    with pytest.raises(wp.InvalidInputError, match="'same'"):
        handle.add(twice)
    with pytest.raises(wp.InvalidInputError):
        handle.add_conversation([])
    assert hash_store.collections() == []
    with pytest.raises(wp.CollectionNotFoundError):
        handle.stats()
    assert handle.add(["Harbour seals rest on sandbanks."]).added == 1  # the handle still works
    assert hash_store.collections() == ["new"] and handle.stats().chunk_tokens == 32


def test_a_failed_write_keeps_a_collection_that_existed(empty_collection: wp.Collection) -> None:
    twice = [wp.Document(text="a", id="same"), wp.Document(text="b", id="same")]
    with pytest.raises(wp.InvalidInputError):
        empty_collection.add(twice)
    assert empty_collection.stats().documents == 0  # created before: kept, empty as it was


def test_a_url_without_index_dir_is_refused() -> None:
    with pytest.raises(wp.InvalidArgumentError, match="'index_dir'"):
        wp.open("postgresql+psycopg://localhost/test")


def test_open_refuses_a_file_as_store_folder(tmp_path: Path) -> None:
    path = _write(tmp_path / "file", "x")
    with pytest.raises(wp.InvalidArgumentError, match="not a folder"):
        wp.open(path)
    assert os.path.isfile(path)


def test_re_adding_unchanged_documents_never_touches_the_embedder(
    hash_store: wp.Store, empty_collection: wp.Collection, monkeypatch: pytest.MonkeyPatch
) -> None:
    documents = [wp.Document(text="Seals sleep on ice floes.", id="s")]
    empty_collection.add(documents)
    embedder = hash_store.embedder

    def refuse(*_args: object) -> None:
        raise AssertionError("the embedder was used for unchanged documents")

    monkeypatch.setattr(type(embedder), "dimension", property(refuse))
    monkeypatch.setattr(embedder, "embed", refuse)
    assert empty_collection.add(documents).unchanged == 1


def test_progress_reports_each_stage_in_order(empty_collection: wp.Collection) -> None:
    events: list[tuple[str, int, int]] = []
    empty_collection.add(
        ["Walruses haul out on beaches.", "Narwhals have long tusks."],
        progress=lambda p: events.append((p.stage, p.documents, p.embedded)),
    )
    stages = [stage for stage, _, _ in events]
    assert [s for i, s in enumerate(stages) if i == 0 or stages[i - 1] != s] == [
        "chunk",
        "summarize",
        "embed",
        "index",
        "done",
    ]
    assert events[-1][1:] == (2, 2)


def test_chunk_vectors_are_the_indexed_chunks_in_document_order(
    empty_collection: wp.Collection, hash_store: wp.Store
) -> None:
    empty_collection.add(
        [
            wp.Document(id="b", text="Bravo paragraph one.\n\nBravo paragraph two."),
            wp.Document(id="a", text="Alpha paragraph one."),
        ]
    )
    texts, vectors = empty_collection.chunk_vectors()
    hits = empty_collection.search("Alpha paragraph one.", k=len(texts))
    assert sorted(texts) == sorted(hit.text for hit in hits)
    # Document order is insertion order ("b" first), and each vector is the text's own.
    assert texts[0].startswith("Bravo") and texts[-1].startswith("Alpha")
    expected = hash_store.embedder.embed(texts)
    assert vectors.shape == expected.shape
    assert (abs(vectors - expected) < 1e-6).all()


def test_reading_a_collection_no_write_created_names_those_that_exist(
    hash_store: wp.Store,
) -> None:
    hash_store.collection("notes").add(["The ferry leaves at seven."])
    typo = hash_store.collection("nodes")  # a handle: nothing is created until a write

    for read in (
        lambda: typo.search("ferry"),
        lambda: typo.pack("ferry", budget=500),
        lambda: typo.tree(),
        lambda: typo.stats(),
        lambda: len(typo),
        lambda: hash_store.collection("nodes", create=False),
        lambda: hash_store.delete_collection("nodes"),
        lambda: hash_store.pack("ferry", collections=["nodes"], budget=500),
    ):
        with pytest.raises(wp.CollectionNotFoundError, match=r"'nodes' does not exist.*'notes'"):
            read()
    assert hash_store.collections() == ["notes"]


def test_the_first_write_creates_the_collection_with_its_settings(hash_store: wp.Store) -> None:
    collection = hash_store.collection("fresh", tokenizer="cl100k_base", chunk_tokens=32)
    assert hash_store.collections() == []

    collection.add(["The generator is serviced every May."])

    assert hash_store.collections() == ["fresh"]
    stats = hash_store.collection("fresh").stats()
    assert (stats.tokenizer, stats.chunk_tokens, stats.documents) == ("cl100k_base", 32, 1)


def test_an_existing_empty_collection_packs_with_a_reason(empty_collection: wp.Collection) -> None:
    window = empty_collection.pack("anything", budget=1000)
    assert window.text == "" and window.reason is not None and "no documents" in window.reason


def test_opening_a_missing_store_for_reading_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(wp.StoreNotFoundError, match=r"does-not-exist.*no such folder"):
        wp.open(tmp_path / "does-not-exist", create=False)
    (tmp_path / "plain").mkdir()
    with pytest.raises(wp.StoreNotFoundError, match=r"no windowpack\.db"):
        wp.open(tmp_path / "plain", create=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain"]
    assert list((tmp_path / "plain").iterdir()) == []
    with wp.open(tmp_path / "made", config=StoreConfig(embedder="hash")):
        pass
    with wp.open(tmp_path / "made", create=False, config=StoreConfig(embedder="hash")) as store:
        assert store.collections() == []


@pytest.mark.postgres
def test_a_database_without_a_store_is_not_created_for_reading(
    postgres_url: str, tmp_path: Path
) -> None:
    with pytest.raises(wp.StoreNotFoundError, match="holds no windowpack store"):
        wp.open(postgres_url, create=False, index_dir=tmp_path / "ix")
    import sqlalchemy

    engine = sqlalchemy.create_engine(postgres_url)
    assert sqlalchemy.inspect(engine).get_table_names() == []
    engine.dispose()
