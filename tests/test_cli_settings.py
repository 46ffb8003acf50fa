"""Where CLI commands take their store and settings from (issue 14, D10 and D11): a database
URL wherever the library takes one, and flags over the environment over the defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import windowpack as wp
from windowpack.api.settings import ApiSettings
from windowpack.cli import app
from windowpack.config import StoreConfig

_HASH = StoreConfig(embedder="hash")

_SERVER_VARIABLES = ("STORE", "HOST", "PORT", "INDEX_DIR", "EMBEDDER", "LOG_LEVEL", "ACCESS_LOG")


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[ApiSettings]:
    """The settings `windowpack serve` would run with (the server itself is not started)."""
    for name in _SERVER_VARIABLES:
        monkeypatch.delenv(f"WINDOWPACK_{name}", raising=False)
    seen: list[ApiSettings] = []
    monkeypatch.setattr("windowpack.api.serve", seen.append)
    return seen


def test_serve_takes_the_environment_when_no_flag_is_given(
    served: list[ApiSettings], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WINDOWPACK_HOST", "127.0.0.2")
    monkeypatch.setenv("WINDOWPACK_PORT", "9123")
    monkeypatch.setenv("WINDOWPACK_INDEX_DIR", "/srv/ix")
    monkeypatch.setenv("WINDOWPACK_EMBEDDER", "hash")
    monkeypatch.setenv("WINDOWPACK_STORE", "postgresql+psycopg://db/wp")
    monkeypatch.setenv("WINDOWPACK_ACCESS_LOG", "false")
    result = CliRunner().invoke(app, ["serve"])
    assert result.exit_code == 0, result.output
    (settings,) = served
    assert (settings.host, settings.port, settings.index_dir) == ("127.0.0.2", 9123, "/srv/ix")
    assert (settings.embedder, settings.store) == ("hash", "postgresql+psycopg://db/wp")
    assert settings.access_log is False


def test_serve_flags_win_over_the_environment(
    served: list[ApiSettings], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WINDOWPACK_HOST", "127.0.0.2")
    monkeypatch.setenv("WINDOWPACK_PORT", "9123")
    monkeypatch.setenv("WINDOWPACK_EMBEDDER", "hash")
    args = ["serve", "--host", "127.0.0.3", "--port", "9000", "--embedder", "other-model"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    (settings,) = served
    assert (settings.host, settings.port, settings.embedder) == ("127.0.0.3", 9000, "other-model")


def test_serve_defaults_when_neither_is_given(served: list[ApiSettings]) -> None:
    result = CliRunner().invoke(app, ["serve"])
    assert result.exit_code == 0, result.output
    (settings,) = served
    assert (settings.host, settings.port, settings.store) == ("127.0.0.1", 8000, "wp-store")
    assert settings.index_dir is None and settings.embedder is None


def test_a_bad_environment_value_names_its_variable(
    served: list[ApiSettings], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from windowpack.cli import main

    monkeypatch.setenv("WINDOWPACK_PORT", "eighty")
    monkeypatch.setattr("sys.argv", ["windowpack", "serve"])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 2 and not served
    assert "WINDOWPACK_PORT" in capsys.readouterr().err


def test_a_url_store_without_an_index_folder_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WINDOWPACK_INDEX_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    url = "postgresql+psycopg://postgres@127.0.0.1:5432/none"
    result = CliRunner().invoke(app, ["keys", "list", "--store", url])
    assert result.exit_code != 0 and "--index-dir" in str(result.exception)
    assert list(tmp_path.iterdir()) == []  # no folder named after the URL


@pytest.mark.postgres
def test_keys_and_ingest_write_to_the_postgresql_url(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    at = ["--store", postgres_url, "--index-dir", str(tmp_path / "ix")]
    created = runner.invoke(app, ["keys", "create", "ci", "-c", "docs", *at])
    assert created.exit_code == 0, created.output
    (tmp_path / "a.txt").write_text("Harbour seals rest on sandbanks at low tide.")
    added = runner.invoke(
        app, ["ingest", str(tmp_path / "a.txt"), "-c", "docs", "--embedder", "hash", *at]
    )
    assert added.exit_code == 0, added.output
    listed = runner.invoke(app, ["keys", "list", *at])
    assert listed.exit_code == 0 and "ci" in listed.output
    with wp.open(postgres_url, index_dir=tmp_path / "ix", create=False, config=_HASH) as store:
        assert [key.name for key in store.api_keys.list()] == ["ci"]
        assert store.collection("docs", create=False).stats().documents == 1
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.txt", "ix"]
