"""The command line, run in-process with typer's runner, and its documentation."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import windowpack as wp
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
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, notes: Path
) -> None:
    _ingest(CliRunner(), tmp_path / "s", notes)
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
    base = ["--store", store, "--embedder", "hash"]  # the demo's collection is the default
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
    base = ["--store", store, "--embedder", "hash"]  # the demo's collection is the default
    question = "Which frequency does the Cinder Bay emergency beacon use?"
    shown = runner.invoke(app, ["pack", question, "--budget", "400", *base, "--json", "--messages"])
    assert shown.exit_code == 0, shown.output
    window = json.loads(shown.stdout)
    assert window["tokens"] <= 400 and "406.025" in window["text"]
    *material, last = window["messages"]
    assert "".join(m["content"][0]["text"] for m in material) == window["text"]
    assert last == {"role": "user", "content": [{"type": "text", "text": question}]}
    plain = runner.invoke(app, ["pack", question, "-b", "400", *base])
    assert plain.exit_code == 0 and "406.025" in plain.stdout


def _run(runner: CliRunner, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def demo_store(runner: CliRunner, tmp_path: Path) -> str:
    store = str(tmp_path / "wp-store")
    assert runner.invoke(app, ["demo", "--store", store, "--embedder", "hash"]).exit_code == 0
    return store


def test_version_and_short_help(runner: CliRunner) -> None:
    import windowpack

    code, out, _ = _run(runner, "--version")
    assert code == 0 and out.strip() == f"windowpack {windowpack.__version__}"
    for args in (["-h"], ["pack", "-h"], ["collections", "-h"]):
        code, out, _ = _run(runner, *args)
        assert code == 0 and "Usage:" in out, args


def test_the_demo_fills_the_default_collection_the_other_commands_read(
    runner: CliRunner, demo_store: str
) -> None:
    code, out, _ = _run(runner, "search", "Cinder Bay beacon frequency", "--store", demo_store,
                        "--embedder", "hash")  # fmt: skip
    assert code == 0 and "406.025" in out
    code, out, _ = _run(runner, "collections", "list", "--store", demo_store, "--json")
    assert code == 0 and [c["name"] for c in json.loads(out)] == ["default"]


def test_read_commands_create_no_store_and_name_what_exists(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "does-not-exist"
    for command in (["search", "x"], ["pack", "x", "-b", "100"], ["tree"], ["collections", "list"]):
        code, err = _run_main(monkeypatch, capsys, *command, "--store", str(missing))
        assert code == 2 and "no windowpack store at" in err and "does-not-exist" in err, command
    assert not missing.exists()


def test_a_misspelt_collection_is_named_with_those_that_exist(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], demo_store: str
) -> None:
    code, err = _run_main(
        monkeypatch, capsys, "search", "x", "--store", demo_store, "-c", "defualt",
        "--embedder", "hash",
    )  # fmt: skip
    assert code == 2 and "'defualt' does not exist; collections here: 'default'" in err


def test_collections_stats_and_delete(runner: CliRunner, demo_store: str) -> None:
    code, out, _ = _run(runner, "collections", "stats", "--store", demo_store, "--json")
    stats = json.loads(out)
    assert code == 0 and stats["name"] == "default" and stats["documents"] == 8
    code, out, _ = _run(runner, "collections", "stats", "default", "--store", demo_store)
    assert code == 0 and "documents: 8" in out
    refused = runner.invoke(app, ["collections", "delete", "default", "--store", demo_store],
                            input="n\n")  # fmt: skip
    assert refused.exit_code != 0
    code, out, _ = _run(runner, "collections", "list", "--store", demo_store)
    assert "default  8 documents" in out
    code, _, err = _run(runner, "collections", "delete", "default", "--store", demo_store, "--yes")
    assert code == 0 and "deleted (8 documents)" in err
    code, out, err = _run(runner, "collections", "list", "--store", demo_store)
    assert code == 0 and out == "" and "no collections" in err


def test_pack_messages_without_json_and_the_cache_note(runner: CliRunner, demo_store: str) -> None:
    question = "Which frequency does the Cinder Bay emergency beacon use?"
    base = ["--store", demo_store, "--embedder", "hash", "-b", "600", "--overview-tokens", "75"]
    code, out, err = _run(runner, "pack", question, *base, "--messages", "--cache-control")
    messages = json.loads(out)
    assert code == 0 and messages[-1]["content"][0]["text"] == question
    assert messages[0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert "below the prompt-cache minimum of openai" in err and "--align-to 1024" in err
    code, out, _ = _run(runner, "pack", question, *base, "--messages", "--no-include-question")
    assert question not in [m["content"][0]["text"] for m in json.loads(out)]
    code, out, _ = _run(runner, "pack", question, *base, "--json")
    assert json.loads(out)["prefix_cache"] == dict.fromkeys(wp.PROMPT_CACHE_MINIMUMS, False)


def test_pack_options_that_need_messages_say_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], demo_store: str
) -> None:
    code, err = _run_main(monkeypatch, capsys, "pack", "x", "-b", "500", "--store", demo_store,
                          "--embedder", "hash", "--cache-control")  # fmt: skip
    assert code == 2 and "'--cache-control'" in err and "needs --messages" in err


def test_file_ids_do_not_depend_on_the_working_directory(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    (project / "nodedocs").mkdir(parents=True)
    (project / "nodedocs" / "path.md").write_text("# Path\n\nJoining paths.")
    (project / "nodedocs" / "fs.md").write_text("# File system\n\nReading files.")
    monkeypatch.chdir(project)
    assert "added 2" in _ingest(runner, Path("wp-store"), Path("nodedocs"))

    monkeypatch.chdir(project / "nodedocs")
    again = _ingest(runner, Path("../wp-store"), Path("path.md"))

    assert "added 0, replaced 0, unchanged 1" in again
    code, out, _ = _run(runner, "search", "joining paths", "--store", "../wp-store",
                        "--embedder", "hash", "--json")  # fmt: skip
    hits = json.loads(out)
    assert code == 0 and {h["document_id"] for h in hits} == {"nodedocs/path.md", "nodedocs/fs.md"}
    assert {h["title"] for h in hits} == {"Path", "File system"}  # titled by their H1


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
    found = re.findall(r"\[turn (\d+) of 30 · instance (\d) of 3\]\n", result.stdout)
    assert found == [("5", "1"), ("18", "2"), ("26", "3")]
    for turn in (4, 17, 25):
        assert f"{filler}(reply {turn})" in result.stdout  # each reply whole
    # --headers full: each turn's characters too.
    full = runner.invoke(app, [*args, "--embedder", "hash", "--headers", "full"])
    assert full.exit_code == 0, full.output
    found = re.findall(r"\[turn (\d+) of 30 · instance (\d) of 3 · chars [^\]]+\]\n", full.stdout)
    assert found == [("5", "1"), ("18", "2"), ("26", "3")]


def test_a_worker_on_a_store_that_is_not_there_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = str(tmp_path / "typo")
    code, err = _run_main(monkeypatch, capsys, "worker", "--store", missing, "--embedder", "hash")
    assert code == 2 and "no windowpack store" in err and "typo" in err
    assert not (tmp_path / "typo").exists()  # a misspelt store is not created


def test_a_worker_runs_the_queued_jobs_until_stopped(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from windowpack.jobs import DocumentsInput, JobQueue, Worker

    store_path = tmp_path / "store"
    with wp.open(store_path, config=wp.StoreConfig(embedder="hash")) as store:
        collection = store.collection("docs")
        collection.add(["A first note about the harbour."])
        job, _ = JobQueue(store).enqueue(collection, DocumentsInput([wp.Document(text="Owls.")]))

    def run_once(self: Worker, stop: object = None) -> None:
        self.start()
        self.queue.wait(job.id, timeout=300)
        self.close()

    monkeypatch.setattr(Worker, "run", run_once)  # no signal to send from inside the test
    result = runner.invoke(app, ["worker", "--store", str(store_path), "--embedder", "hash"])
    assert result.exit_code == 0, result.output
    assert "running jobs of" in result.output and "stopped" in result.output
    with wp.open(store_path, config=wp.StoreConfig(embedder="hash")) as store:
        assert JobQueue(store).get(job.id).status == "succeeded"
        assert len(store.collection("docs")) == 2


def test_search_names_sections_turns_and_records_as_such(runner: CliRunner, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "guide.md").write_text(
        "# Saffron guide\n\nSaffron is a spice.\n\n## Installing the grinder\n\n"
        "Unpack the grinder.\n\n### On Linux\n\nRun apt-get install saffron-grinder as root.\n"
    )
    (folder / "orders.jsonl").write_text('{"item": "copper kettle"}\n{"item": "walnut crate"}\n')
    store = str(tmp_path / "wp-store")
    _ingest(runner, Path(store), folder)

    def shown(query: str) -> str:
        code, out, _ = _run(runner, "search", query, "-k", "1", "--store", store,
                            "--embedder", "hash")  # fmt: skip
        assert code == 0, out
        return " ".join(out.split())  # as one line, however the console wrapped it

    section = shown("apt-get install saffron-grinder")
    assert "section 3: Saffron guide › Installing the grinder › On Linux, chunk" in section
    assert "record 2, chunk" in shown("walnut crate")
    assert "turn/record" not in section


def test_the_report_says_what_it_counts(runner: CliRunner, tmp_path: Path, notes: Path) -> None:
    output = " ".join(_ingest(runner, tmp_path / "store", notes).split())

    assert re.search(r"\d+ summarised afresh, [\d,]+ texts embedded afresh", output)
    assert "summaries" not in output


def test_the_same_files_under_other_ids_are_reported_with_a_hint_at_root(
    runner: CliRunner, tmp_path: Path, notes: Path
) -> None:
    store = str(tmp_path / "work" / "wp-store")
    first = ["ingest", str(notes), "--store", store, "--embedder", "hash"]
    assert runner.invoke(app, [*first, "--root", str(tmp_path)]).exit_code == 0  # notes/...

    # Again without --root: the folder is outside the store's parent, so ids are absolute.
    code, out, err = _run(runner, *first, "--json")

    report = json.loads(out)
    assert code == 0 and report["added"] == 2  # added all the same, under their own ids
    assert report["duplicates"] == {
        str(notes.resolve() / "owls.md"): "notes/owls.md",
        str(notes.resolve() / "seals.txt"): "notes/seals.txt",
    }
    warning = " ".join(err.split())
    assert "2 documents were added with the same text as another already there" in warning
    assert f"{notes.resolve() / 'owls.md'} has the text of notes/owls.md" in warning
    assert f"pass --root {tmp_path.resolve()}." in warning  # where the earlier ids came from


def test_the_duplicates_warning_with_a_root_given_asks_about_it(
    runner: CliRunner, tmp_path: Path, notes: Path
) -> None:
    store = str(tmp_path / "wp-store")
    first = ["ingest", str(notes), "--store", store, "--embedder", "hash", "--root"]
    assert runner.invoke(app, [*first, str(tmp_path)]).exit_code == 0  # notes/...

    code, _, err = _run(runner, *first, str(notes))  # ids: owls.md, seals.txt

    warning = " ".join(err.split())
    assert code == 0 and "owls.md has the text of notes/owls.md" in warning
    assert "relative to --root: should it be the folder they were ingested from?" in warning


def test_most_files_sharing_a_title_is_a_warning_on_stderr(
    runner: CliRunner, tmp_path: Path
) -> None:
    folder = tmp_path / "site"
    folder.mkdir()
    for name in ("a", "b", "c"):  # each titled by the same <title>, <h1> and file name...
        (folder / name).mkdir()
        page = f"<title>Index</title><h1>Index</h1><p>Page {name} of the site.</p>"
        (folder / name / "index.html").write_text(page)
    code, out, err = _run(
        runner,
        "ingest",
        str(folder),
        "--store",
        str(tmp_path / "s"),
        "--embedder",
        "hash",
        "--json",
    )
    assert code == 0 and json.loads(out)["warnings"] == [
        "3 of 3 documents share the title 'index.html': give each its own (Document.title, "
        "or a <title> / first heading per file)"
    ]
    assert "warning 3 of 3 documents share the title 'index.html'" in " ".join(err.split())
