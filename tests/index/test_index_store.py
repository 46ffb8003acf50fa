"""Tests for index files through a real store: versions on disk, rebuilds, staleness, the cache."""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.embed.embedder import Vectors, get_embedder
from windowpack.index import sentence_pieces
from windowpack.index.appendable_dense import AppendableFaissIndex
from windowpack.index.files import verified_record
from windowpack.storage import repository
from windowpack.storage.schema import TreeNodeRow

HASH_CONFIG = StoreConfig(embedder="hash", chunk_tokens=64)

PARAGRAPHS = [
    "Lighthouses guide ships along rocky coasts at night. The keeper trims the wick and "
    "polishes the great lens so that the beam reaches far out to sea.",
    "Beekeepers open their hives in spring to check the queen. Healthy colonies build comb "
    "quickly and store honey for the winter months ahead.",
    "Glaciers carve deep valleys as they slide downhill over thousands of years. Meltwater "
    "streams carry gravel and silt to the plains below.",
    "Volcanic islands rise from the ocean floor where magma breaks through the crust. Coral "
    "reefs later ring their shores in warm tropical waters.",
    "Astronomers point radio telescopes at distant galaxies. Faint signals reveal clouds of "
    "hydrogen drifting between the stars.",
    "Bakers knead sourdough before dawn and let it rise slowly. A crisp crust forms in the "
    "hot stone oven within forty minutes.",
]

DOCUMENTS = [
    wp.Document(text="\n\n".join(PARAGRAPHS[:3]), id="alpha", title="Alpha"),
    wp.Document(text="\n\n".join(PARAGRAPHS[3:]), id="beta", title="Beta"),
    wp.Document(
        text="Chess grandmasters study endgames for hours. Knights and bishops coordinate "
        "to trap the opposing king in the corner of the board.",
        id="gamma",
        title="Gamma",
    ),
]

QUERIES = ["keeper lens beam", "honey colonies", "magma coral reefs", "sourdough oven", "king"]


def _store_folder(tmp_path: Path) -> Path:
    return tmp_path / "store"  # where conftest's hash_store lives


def _collection_dir(tmp_path: Path) -> Path:
    folders = list((_store_folder(tmp_path) / "indexes").glob("collection-*"))
    assert len(folders) == 1, folders
    return folders[0]


def _index_files(tmp_path: Path) -> set[str]:
    return {path.name for path in _collection_dir(tmp_path).iterdir()}


def _version_files(version: int) -> set[str]:
    return {
        f"dense-v{version}",
        f"lexical-v{version}",
        f"sentences-v{version}",
        f"keys-v{version}.npy",
        f"keys-v{version}.json",
        f"manifest-v{version}.json",
    }


def _results(collection: wp.Collection) -> list[list[tuple[int, str, float]]]:
    return [
        [(hit.chunk_id, hit.document_id, hit.score) for hit in collection.search(query, k=5)]
        for query in QUERIES
    ]


def _all_chunk_texts(collection: wp.Collection) -> set[str]:
    return {hit.text for hit in collection.search("anything", k=1000)}


@pytest.fixture
def embed_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[str]]]:
    """Every list of texts the shared hash embedder is asked to embed (queries included)."""
    embedder = get_embedder("hash", batch_size=HASH_CONFIG.embed_batch_size)
    original = embedder.embed
    calls: list[list[str]] = []

    def counting(texts: Sequence[str]) -> Vectors:
        calls.append(list(texts))
        return original(texts)

    monkeypatch.setattr(embedder, "embed", counting)
    yield calls


def _summary_nodes(collection: wp.Collection) -> list[TreeNodeRow]:
    with collection._context.sessions() as session:
        return repository.tree_nodes(session, collection.collection_id)


# --- files on disk follow the version -------------------------------------------------------


def test_only_the_current_versions_files_are_on_disk(hash_store: wp.Store, tmp_path: Path) -> None:
    collection = hash_store.collection("docs")
    report = collection.add(DOCUMENTS[:2])
    assert report.index_version == 1
    assert collection.index_version == 1
    assert _index_files(tmp_path) == _version_files(1)
    assert (_collection_dir(tmp_path) / "lexical-v1").is_dir()

    report = collection.add(DOCUMENTS[2:])
    assert report.index_version == 2
    assert _index_files(tmp_path) == _version_files(2)

    collection.delete("alpha")
    assert collection.index_version == 3
    assert _index_files(tmp_path) == _version_files(3)
    assert all(hit.document_id != "alpha" for hit in collection.search("keeper lens", k=20))


def test_deleted_index_files_are_rebuilt_by_a_new_store_with_the_same_results(
    hash_store: wp.Store, tmp_path: Path
) -> None:
    collection = hash_store.collection("docs")
    collection.add(DOCUMENTS)
    collection.delete("gamma")
    before = _results(collection)
    assert before[0][0][1] == "alpha"
    shutil.rmtree(_collection_dir(tmp_path))

    with wp.open(_store_folder(tmp_path), config=HASH_CONFIG) as second:
        again = second.collection("docs")
        assert _results(again) == before
        assert _index_files(tmp_path) == _version_files(again.index_version)


def test_a_damaged_index_file_is_rebuilt_by_a_new_store(
    hash_store: wp.Store, tmp_path: Path
) -> None:
    collection = hash_store.collection("docs")
    collection.add(DOCUMENTS)
    before = _results(collection)
    for path in (_collection_dir(tmp_path) / "dense-v1").glob("*.faiss"):
        path.write_bytes(b"not a faiss index")

    with wp.open(_store_folder(tmp_path), config=HASH_CONFIG) as second:
        assert _results(second.collection("docs")) == before
    (rebuilt,) = (_collection_dir(tmp_path) / "dense-v1").glob("*.faiss")
    assert rebuilt.stat().st_size > 100


def _counts_files(tmp_path: Path) -> set[str]:
    return {p.name for p in _collection_dir(tmp_path).glob("token-counts-*")}


def test_saved_token_counts_outlive_versions_and_go_with_the_collection(
    hash_store: wp.Store, tmp_path: Path
) -> None:
    collection = hash_store.collection("docs")
    collection.add(DOCUMENTS[:2])
    collection.pack("keeper lens", budget=50)  # the packer saves its token counts
    counts = _counts_files(tmp_path)
    assert len(counts) == 2  # the counts and their manifest
    collection.add(DOCUMENTS[2:])  # version 2: version 1's index files go, the counts stay
    # and so do the document texts the states read (`pack.document_texts`)
    assert _index_files(tmp_path) == _version_files(2) | counts | {"texts"}
    hash_store.delete_collection("docs")
    assert not list((_store_folder(tmp_path) / "indexes").glob("collection-*"))


def test_a_damaged_token_counts_file_is_rebuilt_by_a_new_store(
    hash_store: wp.Store, tmp_path: Path
) -> None:
    collection = hash_store.collection("docs")
    collection.add(DOCUMENTS)
    window = collection.pack("keeper lens", budget=60)
    (counts,) = _collection_dir(tmp_path).glob("token-counts-*.npy")
    counts.write_bytes(b"\x93NUMPY garbage")
    with wp.open(_store_folder(tmp_path), config=HASH_CONFIG) as second:
        again = second.collection("docs").pack("keeper lens", budget=60)
    assert (again.text, again.tokens) == (window.text, window.tokens)
    manifest = counts.with_suffix(".json")
    assert verified_record(manifest, [counts]) is not None  # written whole again


def test_a_store_with_indexes_of_the_older_format_rebuilds_them_on_first_open(
    hash_store: wp.Store, tmp_path: Path
) -> None:
    """Before segments, a version was a `dense-vN.faiss` file and a bm25s folder."""
    collection = hash_store.collection("docs")
    collection.add(DOCUMENTS)
    before = _results(collection)
    folder = _collection_dir(tmp_path)
    shutil.rmtree(folder / "dense-v1")
    (folder / "dense-v1.faiss").write_bytes(b"an older FAISS file")
    shutil.rmtree(folder / "lexical-v1")
    (folder / "lexical-v1").mkdir()
    (folder / "lexical-v1" / "params.index.json").write_text("{}")  # what bm25s saved

    with wp.open(_store_folder(tmp_path), config=HASH_CONFIG) as second:
        assert _results(second.collection("docs")) == before
    assert (folder / "lexical-v1" / "manifest.json").is_file()
    assert (folder / "dense-v1" / "manifest.json").is_file()


def test_a_version_bumped_in_the_database_is_detected_and_rebuilt(
    hash_store: wp.Store, tmp_path: Path
) -> None:
    collection = hash_store.collection("docs")
    collection.add(DOCUMENTS)
    before = _results(collection)

    engine = sqlalchemy.create_engine(hash_store.url)
    with engine.begin() as connection:
        connection.execute(
            sqlalchemy.text(
                "UPDATE collections SET index_version = index_version + 1 WHERE name = 'docs'"
            )
        )
    engine.dispose()

    assert collection.index_version == 2
    assert _results(collection) == before
    assert _version_files(2) <= _index_files(tmp_path)
    # The next write publishes from the rebuilt version and sweeps every older file.
    collection.delete("gamma")
    assert _index_files(tmp_path) == _version_files(3)


def test_a_write_through_another_store_is_seen_by_the_first(
    hash_store: wp.Store, tmp_path: Path
) -> None:
    first = hash_store.collection("docs")
    first.add(DOCUMENTS[:2])
    assert all(hit.document_id != "gamma" for hit in first.search("chess", k=20))

    with wp.open(_store_folder(tmp_path), config=HASH_CONFIG) as other:
        second = other.collection("docs")
        second.search("warm the second store's indexes", k=1)
        report = second.add(DOCUMENTS[2:])
        assert report.index_version == 2

        hits = first.search("chess grandmasters knights bishops", k=3)
        assert hits[0].document_id == "gamma"
        assert _index_files(tmp_path) == _version_files(2)

        # And the other way round: a delete through the first store reaches the second.
        first.delete("beta")
        assert all(hit.document_id != "beta" for hit in second.search("magma coral", k=20))
        assert {hit.document_id for hit in second.search("magma coral", k=20)} == {
            "alpha",
            "gamma",
        }


def test_a_write_through_another_store_is_seen_on_any_database(
    any_database_store: wp.Store, tmp_path: Path
) -> None:
    store = any_database_store
    index_dir = (
        tmp_path / "store" / "indexes" if store.url.startswith("sqlite") else tmp_path / "indexes"
    )
    first = store.collection("docs")
    first.add(DOCUMENTS[:2])
    assert all(hit.document_id != "gamma" for hit in first.search("chess", k=20))
    with wp.open(store.url, index_dir=index_dir, config=HASH_CONFIG) as other:
        other.collection("docs").add(DOCUMENTS[2:])
    hits = first.search("chess grandmasters knights bishops", k=3)
    assert hits[0].document_id == "gamma"


# --- the ANN index inside a store ----------------------------------------------------------


def _topic_documents(count: int) -> list[wp.Document]:
    words = ["amber", "basil", "cobalt", "dune", "ember", "fjord", "garnet", "harbor"]
    return [
        wp.Document(
            text=f"Note {i} on {words[i % 8]} and {words[(i * 3 + 1) % 8]}: token{i}x marks it.",
            id=f"note-{i}",
        )
        for i in range(count)
    ]


def test_a_store_past_its_ann_threshold_switches_to_hnsw_and_keeps_working(
    tmp_path: Path,
) -> None:
    config = StoreConfig(embedder="hash", chunk_tokens=64, ann_threshold=40)
    folder = tmp_path / "store"
    with wp.open(folder, config=config) as store:
        collection = store.collection("docs")
        collection.add(_topic_documents(30))
        dense = _collection_dir(tmp_path) / "dense-v1"
        assert AppendableFaissIndex.load(dense).kind == "flat"
        collection.add(_topic_documents(50)[30:])  # crosses the threshold: rebuilt as HNSW
        assert AppendableFaissIndex.load(_collection_dir(tmp_path) / "dense-v2").kind == "hnsw"
        assert collection.search("token42x", k=1)[0].document_id == "note-42"
        collection.delete("note-42")
        assert all(hit.document_id != "note-42" for hit in collection.search("token42x", k=50))
        tree = collection.tree()
        indexed_units = tree.chunks + sum(level.nodes for level in tree.levels)
        assert tree.chunks == 49
        assert (
            AppendableFaissIndex.load(_collection_dir(tmp_path) / "dense-v3").size == indexed_units
        )
    with wp.open(folder, config=config) as again:
        assert again.collection("docs").search("token7x", k=1)[0].document_id == "note-7"


@pytest.mark.parametrize("threshold", [3])
def test_a_small_ann_threshold_does_not_break_a_small_collection(
    tmp_path: Path, threshold: int
) -> None:
    # StoreConfig accepts any positive ann_threshold; a collection that reaches it while it
    # still has fewer than 16 chunks must stay writable and searchable.
    config = StoreConfig(embedder="hash", chunk_tokens=64, ann_threshold=threshold)
    with wp.open(tmp_path / "store", config=config) as store:
        collection = store.collection("docs")
        for document in _topic_documents(4):
            collection.add([document])
        assert len(collection) == 4
        assert collection.search("token2x", k=1)[0].document_id == "note-2"


# --- the embedding cache ---------------------------------------------------------------------


def test_re_adding_the_same_documents_embeds_nothing_and_keeps_the_version(
    hash_store: wp.Store, tmp_path: Path, embed_calls: list[list[str]]
) -> None:
    collection = hash_store.collection("docs")
    first = collection.add(DOCUMENTS)
    assert first.embedded >= first.chunks > 0  # chunks and summary nodes
    assert sum(len(call) for call in embed_calls) == first.embedded
    embed_calls.clear()

    again = collection.add(DOCUMENTS)
    assert again.embedded == 0
    assert again.unchanged == len(DOCUMENTS)
    assert again.added == again.replaced == 0
    assert again.index_version == first.index_version
    assert collection.index_version == first.index_version
    assert embed_calls == []
    assert _index_files(tmp_path) == _version_files(first.index_version)


def test_a_changed_document_re_embeds_only_its_changed_chunks(
    hash_store: wp.Store, embed_calls: list[list[str]]
) -> None:
    collection = hash_store.collection("docs")
    six = wp.Document(text="\n\n".join(PARAGRAPHS), id="six", title="Six")
    first = collection.add([six])
    assert first.chunks >= 3
    before = _all_chunk_texts(collection)
    assert len(before) == first.chunks

    changed = list(PARAGRAPHS)
    changed[2] = (
        "Glaciers grind slowly down mountain valleys over many centuries. Their meltwater "
        "feeds rivers that flood the lowland farms each summer."
    )
    embed_calls.clear()
    report = collection.add([wp.Document(text="\n\n".join(changed), id="six", title="Six")])

    after = _all_chunk_texts(collection)
    fresh = after - before
    assert 1 <= len(fresh) < report.chunks
    assert report.replaced == 1
    assert report.index_version == first.index_version + 1
    embedded_texts = [text for call in embed_calls for text in call if text != "anything"]
    assert report.embedded == len(embedded_texts)
    # The changed chunks are embedded, and otherwise only summary nodes that changed with them
    # and the changed chunks' sentences (the sentence index).
    assert fresh <= set(embedded_texts)
    summaries = {node.text for node in _summary_nodes(collection)}
    sentences = {text[a:b] for text in fresh for a, b in sentence_pieces(text)}
    assert set(embedded_texts) - fresh <= summaries | sentences
    assert any("lowland farms" in text for text in fresh)


def test_the_same_text_under_a_new_id_is_not_embedded_again(
    hash_store: wp.Store, embed_calls: list[list[str]]
) -> None:
    collection = hash_store.collection("docs")
    collection.add(DOCUMENTS[:1])
    chunk_texts = _all_chunk_texts(collection)
    embed_calls.clear()
    copy = wp.Document(text=DOCUMENTS[0].text, id="alpha-copy")
    report = collection.add([copy])
    assert report.added == 1
    assert report.index_version == 2
    embedded = {text for call in embed_calls for text in call}
    assert not embedded & chunk_texts  # only the new collection-level summary is new text
    # The cache is keyed by model and content, so another collection reuses it too.
    other = hash_store.collection("other").add(DOCUMENTS[:1])
    assert other.embedded == 0


def test_rebuilding_deleted_index_files_embeds_nothing(
    hash_store: wp.Store, tmp_path: Path, embed_calls: list[list[str]]
) -> None:
    collection = hash_store.collection("docs")
    collection.add(DOCUMENTS)
    before = _results(collection)
    shutil.rmtree(_collection_dir(tmp_path))
    embed_calls.clear()

    with wp.open(_store_folder(tmp_path), config=HASH_CONFIG) as second:
        again = second.collection("docs")
        hits = again.search("keeper lens beam", k=5)
        assert hits
        assert embed_calls == [["keeper lens beam"]], "only the query is embedded"
        assert _index_files(tmp_path) == _version_files(1)
        assert _results(again) == before

        # The hook is live: new text does reach the embedder.
        embed_calls.clear()
        again.add([wp.Document(text="Entirely new words about origami cranes.", id="new")])
        assert embed_calls[0] == ["Entirely new words about origami cranes."]
        # ...and so do the summaries regrouping it with the other documents, nothing else.
        summaries = {node.text for node in _summary_nodes(again)}
        assert {text for call in embed_calls[1:] for text in call} <= summaries


def test_a_restarted_process_writes_from_the_saved_files_without_a_rebuild(
    tmp_path: Path,
) -> None:
    with wp.open(_store_folder(tmp_path), config=HASH_CONFIG) as first:
        first.collection("docs").add(DOCUMENTS[:2])
    # A new process (a CLI ingest, a restarted server) that never read the collection adds
    # one document: it starts from version 1's files instead of rebuilding from the database.
    with wp.open(_store_folder(tmp_path), config=HASH_CONFIG) as second:
        indexes = second.indexes
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(indexes, "_rebuild", _no_rebuild)
            second.collection("docs").add(DOCUMENTS[2:])
            written = _results(second.collection("docs"))
    shutil.rmtree(_store_folder(tmp_path) / "indexes")
    with wp.open(_store_folder(tmp_path), config=HASH_CONFIG) as rebuilt:
        assert _results(rebuilt.collection("docs")) == written


def _no_rebuild(collection_id: int, version: int) -> None:
    raise AssertionError(f"version {version} was rebuilt from the database")


def test_a_restarted_process_reads_a_versions_keys_from_its_files_not_the_database(
    tmp_path: Path,
) -> None:
    """The keys (index ids and text hashes) a replica catches up with are saved with the
    version: a restart reads them there, equal to the database's, without asking it."""
    with wp.open(_store_folder(tmp_path), config=HASH_CONFIG) as first:
        first.collection("docs").add(DOCUMENTS)
        collection_id = first.collection("docs").collection_id
        _, in_database = first.indexes._keys_now(collection_id)
    assert in_database is not None
    with (
        wp.open(_store_folder(tmp_path), config=HASH_CONFIG) as second,
        pytest.MonkeyPatch.context() as patch,
    ):
        patch.setattr(repository, "unit_hashes", _no_database_keys)
        loaded = second.indexes.current(collection_id)
    assert loaded.keys is not None
    np.testing.assert_array_equal(loaded.keys.ids, in_database.ids)
    np.testing.assert_array_equal(loaded.keys.hashes, in_database.hashes)


def test_a_damaged_keys_file_is_rebuilt_from_the_database(tmp_path: Path) -> None:
    with wp.open(_store_folder(tmp_path), config=HASH_CONFIG) as first:
        first.collection("docs").add(DOCUMENTS)
        expected = _results(first.collection("docs"))
    (keys_file,) = _collection_dir(tmp_path).glob("keys-v*.npy")
    keys_file.write_bytes(keys_file.read_bytes()[:-8] + b"\0" * 8)
    with wp.open(_store_folder(tmp_path), config=HASH_CONFIG) as second:
        assert _results(second.collection("docs")) == expected
        collection_id = second.collection("docs").collection_id
        loaded = second.indexes.current(collection_id)
        _, in_database = second.indexes._keys_now(collection_id)
    assert loaded.keys is not None and in_database is not None
    np.testing.assert_array_equal(loaded.keys.hashes, in_database.hashes)


def _no_database_keys(*args: object, **kwargs: object) -> None:
    raise AssertionError("the keys were read from the database")
