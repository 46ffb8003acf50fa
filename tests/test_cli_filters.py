"""`--where` on `search` and `pack`, and `windowpack delete`: ids, a filter, confirmation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import windowpack as wp
from cli_main import run_main
from windowpack.cli import collection_commands

WHERE_OPS = json.dumps({"team": "ops"})


@pytest.fixture
def team_store(tmp_path: Path) -> str:
    """A store whose collection "default" holds six notes of three teams."""
    folder = tmp_path / "store"
    with wp.open(folder, config=wp.StoreConfig(embedder="hash")) as store:
        store.collection("default").add(
            wp.Document(
                text=f"Note {i}: the otters of team {team} guard the lantern by the glacier.",
                id=f"n{i}",
                metadata={"team": team, "year": 2020 + i},
            )
            for i, team in enumerate(["ops", "infra", "data", "ops", "infra", "data"])
        )
    return str(folder)


def _run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    return run_main(monkeypatch, capsys, *args, "--embedder", "hash")


def test_search_and_pack_keep_the_documents_the_filter_matches(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], team_store: str
) -> None:
    code, out, _ = _run(
        monkeypatch, capsys, "search", "otters lantern", "--store", team_store,
        "--where", WHERE_OPS, "--json",
    )  # fmt: skip
    assert code == 0 and {hit["document_id"] for hit in json.loads(out)} == {"n0", "n3"}
    code, out, _ = _run(
        monkeypatch, capsys, "pack", "otters lantern", "-b", "2000", "--store", team_store,
        "--where", '{"year": {"$gte": 2024}}', "--json",
    )  # fmt: skip
    window = json.loads(out)
    assert code == 0 and {item["document_id"] for item in window["items"]} == {"n4", "n5"}


def test_a_bad_where_names_the_option_and_the_path_inside_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], team_store: str
) -> None:
    code, _, err = _run(
        monkeypatch, capsys, "search", "otters", "--store", team_store, "--where", "{team: ops}"
    )
    assert code == 2 and "--where" in err and "not valid JSON" in err
    code, _, err = _run(
        monkeypatch, capsys, "pack", "otters", "-b", "500", "--store", team_store,
        "--where", '{"year": {"$gt": "soon"}}',
    )  # fmt: skip
    assert code == 2 and "--where.year.$gt" in err


def test_delete_without_yes_refuses_when_no_one_can_answer_and_deletes_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], team_store: str
) -> None:
    monkeypatch.setattr(collection_commands, "_interactive", lambda: False)
    code, _, err = _run(monkeypatch, capsys, "delete", "--where", WHERE_OPS, "--store", team_store)
    assert code == 2 and "--yes" in err and "2 document(s) would be deleted" in err
    with wp.open(team_store, config=wp.StoreConfig(embedder="hash")) as store:
        assert len(store.collection("default")) == 6


def test_delete_asks_and_stops_when_the_answer_is_no(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], team_store: str
) -> None:
    monkeypatch.setattr(collection_commands, "_interactive", lambda: True)
    asked: list[str] = []

    def answer(question: str) -> bool:
        asked.append(question)
        return False

    monkeypatch.setattr(collection_commands.typer, "confirm", answer)
    code, _, err = _run(
        monkeypatch, capsys, "delete", "n0", "n1", "--where", WHERE_OPS, "--store", team_store
    )
    assert asked == ["delete 1 document(s) from collection 'default'?"]
    assert code == 2 and "not confirmed" in err


def test_delete_by_ids_and_filter_with_yes_reports_what_went(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], team_store: str
) -> None:
    code, out, _ = _run(
        monkeypatch, capsys, "delete", "n0", "n1", "gone", "--where", WHERE_OPS,
        "--store", team_store, "--yes", "--json",
    )  # fmt: skip
    report = json.loads(out)
    assert code == 0
    assert (report["deleted"], report["missing"]) == (["n0"], ["gone"])
    code, _, err = _run(
        monkeypatch, capsys, "delete", "--where", '{"team": "data"}', "--store", team_store,
        "--yes",
    )  # fmt: skip
    assert code == 0 and "deleted 2 document(s) from 'default'" in err
    code, _, err = _run(monkeypatch, capsys, "delete", "--store", team_store, "--yes")
    assert code == 2 and "IDS" in err


def test_a_where_keeping_every_document_needs_all(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], team_store: str
) -> None:
    everything = '{"year": {"$gte": 2000}}'
    code, _, err = _run(
        monkeypatch, capsys, "delete", "--where", everything, "--store", team_store, "--yes"
    )
    assert code == 2 and "--all" in err and "all 6 documents" in err
    code, _, err = _run(
        monkeypatch, capsys, "delete", "--where", everything, "--store", team_store, "--yes",
        "--all",
    )  # fmt: skip
    assert code == 0 and "deleted 6 document(s)" in err


def test_a_where_nested_past_what_json_parses_is_one_error_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], team_store: str
) -> None:
    deep = '{"$not": ' * 1000 + '{"team": "ops"}' + "}" * 1000
    for where in (deep, "[" * 100_000, '{"team": "\\ud800"}'):
        code, out, err = _run(
            monkeypatch, capsys, "search", "otters", "--store", team_store, "--where", where
        )
        assert code == 2 and out == "", err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert "--where" in err
