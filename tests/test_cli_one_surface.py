"""The command line says and takes what the library and REST do: the same shapes, options,
budget rule and fixes, and help that reads whole at any width."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

import windowpack as wp
from cli_main import run_main
from windowpack.api.schemas import PackIn, PackOut
from windowpack.cli import app
from windowpack.config import StoreConfig
from windowpack.types import BUDGET_RULE

QUESTION = "Which frequency does the Cinder Bay emergency beacon use?"


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    store = str(tmp_path_factory.mktemp("cli") / "wp-store")
    result = CliRunner().invoke(app, ["demo", "--store", store, "--embedder", "hash"])
    assert result.exit_code == 0, result.output
    return store


def _json(demo_store: str, *args: str) -> Any:
    result = CliRunner().invoke(app, [*args, "--store", demo_store, "--embedder", "hash", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_pack_json_has_the_rest_answers_shapes(demo_store: str) -> None:
    shown = _json(demo_store, "pack", QUESTION, "-b", "600")
    with wp.open(demo_store, config=StoreConfig(embedder="hash")) as store:
        window = store.collection("default").pack(QUESTION, budget=600)
    over_http = json.loads(PackOut.of(window, PackIn(query=QUESTION, budget=600)).model_dump_json())
    assert shown["index_versions"] == over_http["index_versions"] == {"default": 1}
    shared = set(shown) & set(over_http)
    assert {"text", "tokens", "index_versions", "prefix_cache", "session_tiers"} <= shared
    assert {key: shown[key] for key in shared - {"items"}} == {
        key: over_http[key] for key in shared - {"items"}
    }


def test_pack_takes_overview_tokens_as_the_library_does(demo_store: str) -> None:
    shown = _json(demo_store, "pack", QUESTION, "-b", "600", "--overview-tokens", "150")
    with wp.open(demo_store, config=StoreConfig(embedder="hash")) as store:
        col = store.collection("default")
        capped, default = (
            col.pack(QUESTION, budget=600, overview_tokens=150),
            col.pack(QUESTION, budget=600),
        )
    assert shown["text"] == capped.text != default.text
    assert shown["cacheable_prefix_tokens"] == capped.cacheable_prefix_tokens


def test_search_takes_include_summaries_as_the_library_does(demo_store: str) -> None:
    hits = _json(demo_store, "search", "Cinder Bay", "-k", "100", "--include-summaries")
    with wp.open(demo_store, config=StoreConfig(embedder="hash")) as store:
        local = store.collection("default").search("Cinder Bay", k=100, include_summaries=True)
    assert hits == json.loads(json.dumps([asdict(hit) for hit in local]))
    assert "summary" in {hit["kind"] for hit in hits}


def test_rebuild_tree_rebuilds_as_the_library_does(demo_store: str, tmp_path: Path) -> None:
    before = _json(demo_store, "tree")
    report = _json(demo_store, "rebuild-tree")
    assert report["index_version"] == 2 and report["added"] == 0
    assert _json(demo_store, "tree")["levels"] == before["levels"]


def test_a_collection_built_with_another_embedder_says_to_pass_embedder(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with wp.open(tmp_path / "store", config=StoreConfig(embedder="hash-128")) as store:
        store.collection("default").add(["Harbour seals rest on sandbanks."])
    args = ["search", "seals", "--store", str(tmp_path / "store"), "--embedder", "hash"]
    code, _, err = run_main(monkeypatch, capsys, *args)
    assert code == 2 and "built with embedder 'hash-128'; pass --embedder hash-128" in err
    assert "StoreConfig" not in err


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = [(path, command)]
    for name, sub in getattr(command, "commands", {}).items():
        found.extend(_commands(sub, (*path, name)))
    return found


def _squeezed(text: str) -> str:
    return "".join(text.split())


@pytest.mark.parametrize("columns", ["60", "200"])
def test_help_shows_every_text_whole_and_no_typer_placeholders(columns: str) -> None:
    runner = CliRunner()
    for path, command in _commands(typer.main.get_command(app)):
        result = runner.invoke(app, [*path, "-h"], env={"COLUMNS": columns})
        assert result.exit_code == 0, (path, result.output)
        shown = result.stdout
        for placeholder in ("<bool>", "<str>", "<int>", "…"):
            assert placeholder not in shown, (path, placeholder)
        assert "{" not in shown.splitlines()[0], path  # typer's `{query}` in the usage line
        for param in command.params:
            if param.help:  # wrapped at any width, never cut; `[env: ...]` kept
                assert _squeezed(param.help) in _squeezed(shown), (path, param.name)
        for sub in getattr(command, "commands", {}).values():
            first = (sub.help or "").split(".")[0]
            assert _squeezed(first) in _squeezed(shown), (path, sub.name)
    usage = runner.invoke(app, ["ingest", "-h"]).stdout
    assert "ingest [OPTIONS] PATHS..." in usage.splitlines()[0]


def test_the_budget_rule_is_said_in_the_help() -> None:
    shown = CliRunner().invoke(app, ["pack", "-h"]).stdout
    assert _squeezed(f"Token budget: {BUDGET_RULE}.") in _squeezed(shown)
