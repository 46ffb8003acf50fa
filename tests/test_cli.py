"""The command line, run in-process with typer's runner, and its documentation."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from windowpack.cli import app, main

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "seals.txt").write_text("Harbour seals rest on sandbanks at low tide.")
    (folder / "owls.md").write_text("# Owls\n\nBarn owls hunt voles in the meadow at night.")
    (folder / "junk.bin").write_bytes(b"\x00\x01")
    return folder


def _ingest(runner: CliRunner, store: Path, *paths: Path) -> str:
    args = ["ingest", *map(str, paths), "--store", str(store), "--embedder", "hash"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.output


def test_ingest_then_search_json(runner: CliRunner, tmp_path: Path, notes: Path) -> None:
    output = _ingest(runner, tmp_path / "store", notes)
    assert "added 2" in output and "junk.bin" in output
    result = runner.invoke(
        app,
        [
            "search",
            "barn owls voles",
            "-k",
            "1",
            "--json",
            "--store",
            str(tmp_path / "store"),
            "--embedder",
            "hash",
        ],
    )
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)
    assert len(hits) == 1 and hits[0]["document_id"].endswith("owls.md")
    assert "Barn owls" in hits[0]["text"]


def test_search_table_output(runner: CliRunner, tmp_path: Path, notes: Path) -> None:
    _ingest(runner, tmp_path / "store", notes)
    result = runner.invoke(
        app, ["search", "seals", "--store", str(tmp_path / "store"), "--embedder", "hash"]
    )
    assert result.exit_code == 0
    assert "sandbanks" in result.stdout


def test_demo_runs_with_the_hash_embedder(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", "--store", str(tmp_path / "demo"), "--embedder", "hash"])
    assert result.exit_code == 0, result.output
    assert "406.025" in result.stdout


def _run_main(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str]:
    monkeypatch.setattr("sys.argv", ["windowpack", *args])
    with pytest.raises(SystemExit) as exited:
        main()
    return int(exited.value.code or 0), capsys.readouterr().err


def test_unknown_collection_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, err = _run_main(
        monkeypatch,
        capsys,
        "search",
        "x",
        "--store",
        str(tmp_path / "s"),
        "-c",
        "missing",
        "--embedder",
        "hash",
    )
    assert code == 2 and "collection 'missing' does not exist" in err


def test_bad_k_is_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, notes: Path
) -> None:
    _ingest(CliRunner(), tmp_path / "s", notes)
    code, err = _run_main(
        monkeypatch,
        capsys,
        "search",
        "x",
        "-k",
        "0",
        "--store",
        str(tmp_path / "s"),
        "--embedder",
        "hash",
    )
    assert code == 2 and "'k'" in err


def test_missing_path_is_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, err = _run_main(
        monkeypatch,
        capsys,
        "ingest",
        str(tmp_path / "absent.txt"),
        "--store",
        str(tmp_path / "s"),
        "--embedder",
        "hash",
    )
    assert code == 2 and "absent.txt" in err


def test_every_command_is_documented_in_the_readme() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    commands = [command.name or command.callback.__name__ for command in app.registered_commands]
    assert commands
    for command in commands:
        assert re.search(rf"windowpack {command}\b", readme), f"`windowpack {command}` undocumented"


def test_tree_shows_levels_and_nodes(runner: CliRunner, tmp_path: Path) -> None:
    store = str(tmp_path / "demo")
    assert runner.invoke(app, ["demo", "--store", store, "--embedder", "hash"]).exit_code == 0
    base = ["--store", store, "-c", "demo", "--embedder", "hash"]
    shown = runner.invoke(app, ["tree", *base, "--json"])
    assert shown.exit_code == 0, shown.output
    overview = json.loads(shown.stdout)
    assert overview["documents"] == 8 and overview["levels"]
    root = runner.invoke(app, ["tree", *base, "--node", str(overview["root_id"]), "--json"])
    node = json.loads(root.stdout)
    assert node["id"] == overview["root_id"] and node["children"]
    table = runner.invoke(app, ["tree", *base])
    assert "collection" in table.stdout and "of the chunks" in table.stdout


def test_pack_prints_a_window_within_budget(runner: CliRunner, tmp_path: Path) -> None:
    store = str(tmp_path / "demo")
    assert runner.invoke(app, ["demo", "--store", store, "--embedder", "hash"]).exit_code == 0
    base = ["--store", store, "-c", "demo", "--embedder", "hash"]
    question = "Which frequency does the Cinder Bay emergency beacon use?"
    shown = runner.invoke(app, ["pack", question, "--budget", "400", *base, "--json", "--messages"])
    assert shown.exit_code == 0, shown.output
    window = json.loads(shown.stdout)
    assert window["tokens"] <= 400 and "406.025" in window["text"]
    assert "".join(m["content"][0]["text"] for m in window["messages"]) == window["text"]
    plain = runner.invoke(app, ["pack", question, "-b", "400", *base])
    assert plain.exit_code == 0 and "406.025" in plain.stdout


def test_pack_gives_every_instance_of_a_repeated_request_as_whole_turns(
    runner: CliRunner, tmp_path: Path
) -> None:
    """The issue's check: a chat added as a file, an ordinal question, whole turns back."""
    filler = "The harbour lights blinked while the crew mended the nets and sang. " * 12
    messages = []
    for turn in range(30):
        request = (
            "write a poem about tapirs" if turn in (4, 17, 25) else f"write a note about {turn}"
        )
        messages += [
            {"role": "user", "content": request},
            {"role": "assistant", "content": f"{filler}(reply {turn})"},
        ]
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(messages), encoding="utf-8")
    _ingest(runner, tmp_path / "store", chat)
    question = "Prepend x1 to the 2nd (1 indexed) poem about tapirs."
    args = ["pack", question, "--budget", "2000", "--store", str(tmp_path / "store")]
    result = runner.invoke(app, [*args, "--embedder", "hash"])
    assert result.exit_code == 0, result.output
    found = re.findall(r"\[turn (\d+) of 30 · instance (\d) of 3 · chars [^\]]+\]\n", result.stdout)
    assert found == [("5", "1"), ("18", "2"), ("26", "3")]
    for turn in (4, 17, 25):
        assert f"{filler}(reply {turn})" in result.stdout  # each reply whole
