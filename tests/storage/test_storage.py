"""Storage on SQLite and PostgreSQL: migrations, atomic writes, upserts, deletes."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sqlalchemy import Engine, inspect, select

import windowpack as wp
from windowpack.ingest import pipeline as ingest_module
from windowpack.storage import repository
from windowpack.storage.database import (
    MIGRATIONS_DIR,
    create_database_engine,
    current_revision,
    head_revision,
    migrate,
)
from windowpack.storage.schema import ChunkRow, DocumentRow


def _documents() -> list[wp.Document]:
    return [
        wp.Document(text="Alpha paragraph about glaciers.\n\nMore on ice.", id="a", title="A"),
        wp.Document(text="Beta notes on volcanoes and basalt.", id="b", metadata={"n": 1}),
    ]


def _snapshot(store: wp.Store, name: str) -> list[tuple[str, str, int]]:
    """(id, text, chunk count) of every document, in order: what a reader can see."""
    col = store.collection(name)
    return [(info.id, col.get(info.id).text, info.chunks) for info in col.documents()]


def test_migration_creates_the_schema_at_head(any_database_store: wp.Store) -> None:
    engine = any_database_store._context.engine
    tables = set(inspect(engine).get_table_names())
    expected = {"collections", "documents", "chunks", "embeddings", "api_keys", "alembic_version"}
    assert expected <= tables
    assert current_revision(engine) == "0006"


def test_migrating_twice_is_a_no_op(tmp_path: Path) -> None:
    engine = create_database_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    migrate(engine)
    migrate(engine)
    assert current_revision(engine) == "0006"


def test_the_head_read_from_the_revision_files_is_alembics() -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    assert head_revision() == ScriptDirectory.from_config(config).get_current_head()


def test_migrating_a_database_at_head_leaves_alembic_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from alembic import command

    engine = create_database_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    migrate(engine)
    upgrades: list[str] = []
    real = command.upgrade
    monkeypatch.setattr(command, "upgrade", lambda *a, **k: upgrades.append("x") or real(*a, **k))
    migrate(engine)  # at head: one query, no upgrade
    assert upgrades == []
    with engine.begin() as connection:  # as a database left one revision behind
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = '0005'")
        connection.exec_driver_sql("DROP TABLE store_secrets")
    migrate(engine)
    assert upgrades == ["x"] and current_revision(engine) == head_revision()
    assert "store_secrets" in inspect(engine).get_table_names()


def test_a_database_never_migrated_has_no_revision(tmp_path: Path) -> None:
    engine = create_database_engine(f"sqlite:///{tmp_path / 'db.sqlite'}")
    assert current_revision(engine) is None
    with engine.begin() as connection:  # alembic's table made, no revision stamped yet
        connection.exec_driver_sql("CREATE TABLE alembic_version (version_num VARCHAR(32))")
    assert current_revision(engine) is None


def test_replicas_migrating_a_new_postgresql_database_at_once_all_succeed(
    postgres_url: str,
) -> None:
    """Two servers started together on an empty database: both used to create the schema
    and one failed on a duplicate table; now one migrates and the other waits for it."""
    engines = [create_database_engine(postgres_url) for _ in range(4)]
    start, errors = threading.Barrier(len(engines)), []

    def run(engine: Engine) -> None:
        start.wait()
        try:
            migrate(engine)
        except Exception as error:  # collected: an assertion in a thread would be lost
            errors.append(error)

    threads = [threading.Thread(target=run, args=(engine,)) for engine in engines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert {current_revision(engine) for engine in engines} == {"0006"}
    for engine in engines:
        engine.dispose()


def test_sqlite_runs_in_wal_mode(hash_store: wp.Store) -> None:
    with hash_store._context.engine.connect() as connection:
        mode = connection.exec_driver_sql("PRAGMA journal_mode").scalar()
    assert mode == "wal"


def test_add_then_read_back_on_both_databases(any_database_store: wp.Store) -> None:
    col = any_database_store.collection("docs")
    report = col.add(_documents())
    assert (report.added, report.replaced, report.unchanged) == (2, 0, 0)
    assert report.index_version == 1
    assert [info.id for info in col.documents()] == ["a", "b"]
    assert col.get("b").metadata == {"n": 1}
    assert col.search("volcanoes basalt", k=1)[0].document_id == "b"


def test_chunk_offsets_point_into_the_stored_text(any_database_store: wp.Store) -> None:
    col = any_database_store.collection("docs")
    col.add(_documents())
    with any_database_store.sessions() as session:
        rows = session.execute(
            select(ChunkRow.text, ChunkRow.char_start, ChunkRow.char_end, DocumentRow.text).join(
                DocumentRow, ChunkRow.document_id == DocumentRow.id
            )
        ).all()
    assert rows
    for chunk_text, start, end, document_text in rows:
        assert document_text[start:end] == chunk_text


def test_a_failure_inside_the_transaction_leaves_the_store_unchanged(
    any_database_store: wp.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    col = any_database_store.collection("docs")
    col.add(_documents())
    before = _snapshot(any_database_store, "docs")
    version = col.index_version

    def crash(*_args: object) -> int:
        raise RuntimeError("simulated crash before commit")

    monkeypatch.setattr(ingest_module.repository, "bump_index_version", crash)
    replacement = wp.Document(text="Alpha rewritten entirely.", id="a")
    with pytest.raises(RuntimeError, match="simulated crash"):
        col.add([replacement, wp.Document(text="Gamma is new.", id="c")])
    monkeypatch.undo()

    assert _snapshot(any_database_store, "docs") == before
    assert col.index_version == version
    assert col.search("glaciers", k=1)[0].document_id == "a"


def test_a_bad_document_in_a_batch_stores_nothing(any_database_store: wp.Store) -> None:
    col = any_database_store.collection("docs")
    col.add(_documents())
    before = _snapshot(any_database_store, "docs")
    with pytest.raises(wp.EmptyDocumentError, match="empty-one"):
        col.add([wp.Document(text="fine text", id="c"), wp.Document(text="  \n", id="empty-one")])
    assert _snapshot(any_database_store, "docs") == before


def test_upsert_replaces_changed_text_and_keeps_position(any_database_store: wp.Store) -> None:
    col = any_database_store.collection("docs")
    col.add(_documents())
    report = col.add([wp.Document(text="Alpha now talks about fjords.", id="a", title="A")])
    assert (report.added, report.replaced) == (0, 1)
    assert [info.id for info in col.documents()] == ["a", "b"]
    assert col.get("a").text == "Alpha now talks about fjords."
    assert col.search("fjords", k=1)[0].document_id == "a"
    assert all("glaciers" not in hit.text for hit in col.search("glaciers", k=5))


def test_unchanged_documents_do_no_work(any_database_store: wp.Store) -> None:
    col = any_database_store.collection("docs")
    first = col.add(_documents())
    again = col.add(_documents())
    assert again.unchanged == 2
    assert (again.added, again.replaced, again.embedded) == (0, 0, 0)
    assert again.index_version == first.index_version


def test_delete_removes_document_chunks_and_hits(any_database_store: wp.Store) -> None:
    col = any_database_store.collection("docs")
    col.add(_documents())
    col.delete("b")
    assert [info.id for info in col.documents()] == ["a"]
    assert all(hit.document_id != "b" for hit in col.search("volcanoes", k=5))
    with any_database_store.sessions() as session:
        assert session.scalars(select(ChunkRow.id)).all()  # a's chunks remain
        assert repository.count_documents(session, col.collection_id) == 1
    with pytest.raises(wp.DocumentNotFoundError, match="'b'"):
        col.delete("b")


def test_deleting_a_collection_removes_everything(any_database_store: wp.Store) -> None:
    col = any_database_store.collection("docs")
    col.add(_documents())
    any_database_store.delete_collection("docs")
    assert any_database_store.collections() == []
    with any_database_store.sessions() as session:
        assert session.scalars(select(DocumentRow.id)).all() == []
        assert session.scalars(select(ChunkRow.id)).all() == []
    with pytest.raises(wp.CollectionNotFoundError, match="'docs'"):
        any_database_store.collection("docs", create=False)


def _raises_deleted(call: object, name: str, what: str = "") -> None:
    assert callable(call)
    with pytest.raises(wp.CollectionDeletedError, match=repr(name)) as raised:
        call()
        pytest.fail(f"{what or 'the call'} did not raise")
    assert isinstance(raised.value, wp.CollectionNotFoundError)  # a 404 to clients


def test_a_handle_outliving_its_collection_says_so_and_writes_nothing(
    any_database_store: wp.Store,
) -> None:
    """A deleted collection's handle neither reads as an empty collection nor writes into
    what the database holds now: not into a new collection under its name, nor (SQLite hands
    the deleted id to the next collection) into one of another name."""
    stale = any_database_store.collection("docs")
    stale.add(_documents())
    assert "glaciers" in stale.pack("glaciers", budget=400).text
    any_database_store.delete_collection("docs")
    other = any_database_store.collection("other")
    other.add([wp.Document(text="Gamma: notes on tides and harbours.", id="g")])
    calls = {
        "pack": lambda: stale.pack("glaciers", budget=400),
        "search": lambda: stale.search("glaciers", k=3),
        "add": lambda: stale.add([wp.Document(text="Delta lines on deserts.", id="d")]),
        "delete": lambda: stale.delete("a"),
        "delete other's": lambda: stale.delete("g"),  # under the reused id on SQLite
        "stats": lambda: stale.stats(),
        "index_version": lambda: stale.index_version,
        "documents": lambda: stale.documents(),
        "get": lambda: stale.get("g"),
        "len": lambda: len(stale),
        "tree": lambda: stale.tree(),
        "chunk_vectors": lambda: stale.chunk_vectors(),
    }
    for what, call in calls.items():
        _raises_deleted(call, "docs", what)
    assert [info.id for info in other.documents()] == ["g"], "nothing went to another one"
    assert other.index_version == 1
    again = any_database_store.collection("docs")
    again.add([wp.Document(text="Epsilon: a page on forests.", id="e")])
    _raises_deleted(lambda: stale.add([wp.Document(text="Zeta.", id="z")]), "docs")
    assert [info.id for info in again.documents()] == ["e"]
    assert "forests" in again.pack("forests", budget=400).text


def test_a_replica_handle_of_a_collection_deleted_elsewhere_says_so(
    postgres_url: str, tmp_path: Path
) -> None:
    """Two stores on one PostgreSQL database (two replicas): a collection one deletes is a
    clear error through the other's handle, not an empty window; a new handle sees what the
    name holds now."""
    config = wp.StoreConfig(embedder="hash")
    with (
        wp.open(postgres_url, index_dir=tmp_path / "a", config=config) as a,
        wp.open(postgres_url, index_dir=tmp_path / "b", config=config) as b,
    ):
        a.collection("docs").add(_documents())
        seen = b.collection("docs")
        assert "volcanoes" in seen.pack("volcanoes", budget=400).text
        a.delete_collection("docs")
        _raises_deleted(lambda: seen.pack("volcanoes", budget=400), "docs")
        _raises_deleted(lambda: seen.search("volcanoes", k=3), "docs")
        a.collection("docs").add([wp.Document(text="Notes on coral reefs.", id="c")])
        _raises_deleted(lambda: seen.pack("coral reefs", budget=400), "docs")
        window = b.collection("docs").pack("coral reefs", budget=400)
        assert [item.document_id for item in window.items if item.kind == "chunk"] == ["c"]


def test_collections_are_isolated(any_database_store: wp.Store) -> None:
    first = any_database_store.collection("first")
    second = any_database_store.collection("second")
    first.add([wp.Document(text="Only in the first collection: walruses.", id="x")])
    second.add([wp.Document(text="Only in the second collection: penguins.", id="x")])
    assert first.get("x").text.endswith("walruses.")
    assert [hit.document_id for hit in second.search("walruses", k=5)] == ["x"]
    assert "penguins" in second.search("walruses", k=5)[0].text


def test_an_existing_database_is_upgraded_in_place(tmp_path: Path) -> None:
    """A store written by the first schema gains the tree and key tables and keeps its data."""
    from alembic import command
    from alembic.config import Config

    from windowpack.storage.database import MIGRATIONS_DIR

    engine = create_database_engine(f"sqlite:///{tmp_path / 'old.sqlite'}")
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
        connection.exec_driver_sql(
            "INSERT INTO collections (name, tokenizer, embedder, chunk_tokens, index_version, "
            "next_position, created_at) VALUES ('old', 'o200k_base', 'hash-384', 64, 0, 0, "
            "'2026-01-01 00:00:00')"
        )
    assert "tree_nodes" not in inspect(engine).get_table_names()
    migrate(engine)
    assert current_revision(engine) == "0006"
    assert {"tree_nodes", "summaries", "api_keys"} <= set(inspect(engine).get_table_names())
    with engine.connect() as connection:
        names = connection.exec_driver_sql("SELECT name FROM collections").scalars().all()
    assert names == ["old"]
