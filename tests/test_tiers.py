"""The suite's own machinery: the tiers read from what a test uses, and the migrated template
that test stores are copied from."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

import windowpack as wp
from template_store import MigratedTemplate
from tiers import POSTGRES_FIXTURE, _signals_in
from windowpack.cli import main
from windowpack.evals import NiahEval, generated_haystack
from windowpack.storage import create_database_engine, migrate, sqlite_url


def _starts_a_child() -> None:
    subprocess.run(["true"], check=True)


def _through_a_helper() -> None:
    _starts_a_child()


def _names_ray_only_in_a_string() -> object:
    return wp.StoreConfig(executor="ray")


def _fetches_postgres(request: pytest.FixtureRequest) -> object:
    return request.getfixturevalue("postgres_url")


def _runs_an_eval_grid(store: wp.Store) -> object:
    return NiahEval(haystack=generated_haystack(seed=1), budgets=(1024,))(store)


def _runs_the_eval_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.argv", ["windowpack", "eval", "niah", "--embedder", "hash"])
    main()


# Reached through a mapping, which the scan does not follow: this test itself is not slow.
SAMPLES = {
    "helper": _through_a_helper,
    "comprehension": lambda: [_starts_a_child() for _ in range(2)],
    "string": _names_ray_only_in_a_string,
    "postgres": _fetches_postgres,
    "grid": _runs_an_eval_grid,
    "command": _runs_the_eval_command,
}


def test_what_a_function_uses_is_found_through_the_helpers_it_calls() -> None:
    assert _signals_in(SAMPLES["helper"]) == {"subprocess"}
    assert _signals_in(SAMPLES["comprehension"]) == {"subprocess"}
    assert _signals_in(SAMPLES["string"]) == set()
    assert _signals_in(SAMPLES["postgres"]) == {POSTGRES_FIXTURE}
    assert _signals_in(SAMPLES["grid"]) == {"GridEval"}  # NiahEval, by its base class
    assert _signals_in(SAMPLES["command"]) == {"GridEval"}


def test_a_test_is_marked_by_what_it_uses_not_by_what_its_module_imports(
    request: pytest.FixtureRequest,
) -> None:
    """This module imports subprocess, and its helpers use it; its tests do not."""
    assert request.node.get_closest_marker("slow") is None
    for item in request.session.items:
        if item.path == request.path and "migrate_leaves" in item.name:
            assert item.get_closest_marker("real_migrations") is not None


def test_every_test_that_reaches_postgresql_is_marked_postgres_and_slow(
    request: pytest.FixtureRequest,
) -> None:
    for item in request.session.items:
        params = getattr(item, "callspec", None)
        reaches = POSTGRES_FIXTURE in getattr(item, "fixturenames", ()) or (
            params is not None and "postgres" in params.params.values()
        )
        if reaches:
            assert item.get_closest_marker("postgres") is not None, item.nodeid
            assert item.get_closest_marker("slow") is not None, item.nodeid
        if item.get_closest_marker("model") is not None:
            assert item.get_closest_marker("slow") is not None, item.nodeid


def _schema(path: Path) -> tuple[object, ...]:
    """Everything of a database file but its rows of data: schema, revision, settings."""
    with sqlite3.connect(path) as connection:
        master = connection.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
        ).fetchall()
        revision = connection.execute("SELECT version_num FROM alembic_version").fetchall()
        pragmas = [
            connection.execute(f"PRAGMA {name}").fetchall()
            for name in ("journal_mode", "user_version", "application_id", "page_size")
        ]
    connection.close()
    return master, revision, pragmas


def test_a_copy_of_the_template_is_the_database_migrate_leaves(tmp_path: Path) -> None:
    template = MigratedTemplate(migrate, tmp_path / "template.db")
    copied, migrated = tmp_path / "copied.db", tmp_path / "migrated.db"
    for path, run in ((copied, template.copy_or_migrate), (migrated, migrate)):
        engine = create_database_engine(sqlite_url(path))
        run(engine)
        engine.dispose()

    assert template.copies == 1
    assert _schema(copied) == _schema(migrated)
    assert _schema(copied)[1] != []


def test_an_existing_database_is_migrated_in_place_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "existing.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE kept (x INTEGER)")
    connection.close()
    template = MigratedTemplate(migrate, tmp_path / "template.db")
    engine = create_database_engine(sqlite_url(path))
    template.copy_or_migrate(engine)
    engine.dispose()

    assert template.copies == 0
    with sqlite3.connect(path) as connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    connection.close()
    assert {"kept", "collections", "alembic_version"} <= tables


def test_a_test_store_starts_as_a_copy_of_the_sessions_template(
    migrated_template: MigratedTemplate, tmp_path: Path
) -> None:
    before = migrated_template.copies
    with wp.open(tmp_path / "store", config=wp.StoreConfig(embedder="hash")) as store:
        store.collection("docs").add([wp.Document(id="a", text="Seals haul out on ice.")])
        assert [hit.document_id for hit in store.collection("docs").search("seals")] == ["a"]
    assert migrated_template.copies == before + 1
    assert migrated_template.path is not None
    assert _schema(tmp_path / "store" / "windowpack.db")[0] == _schema(migrated_template.path)[0]
