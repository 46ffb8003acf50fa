"""`windowpack pack --questions FILE`: many questions in one process, one JSON object a line
in input order, each what `pack --json` prints; a bad line named by its number."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from cli_main import run_main
from windowpack.cli import app
from windowpack.cli.questions import read_questions

Pack = Callable[..., tuple[int, str, str]]
"""Runs `windowpack pack ARGS` (stdin: `stdin=`): its exit code, stdout and stderr."""
BEACON = "Which frequency does the Cinder Bay emergency beacon use?"


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    store = str(tmp_path_factory.mktemp("questions") / "wp-store")
    result = CliRunner().invoke(app, ["demo", "--store", store, "--embedder", "hash"])
    assert result.exit_code == 0, result.output
    return store


@pytest.fixture
def pack(
    demo_store: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Pack:
    """`windowpack pack ARGS` over the demo store, as the console script runs it: the exit
    code, stdout and stderr."""

    def run(*args: str, stdin: str = "") -> tuple[int, str, str]:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        return run_main(monkeypatch, capsys, "pack", *args, "--store", demo_store,
                        "--embedder", "hash")  # fmt: skip

    return run


def _objects(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines()]


def test_each_question_is_one_line_in_order_with_what_pack_json_prints(
    pack: Pack, tmp_path: Path
) -> None:
    file = tmp_path / "questions.txt"
    lines = [
        BEACON,
        "",
        json.dumps({"question": "Who services the generator?", "id": "g1", "budget": 300}),
        json.dumps({"question": BEACON, "id": 7, "headers": "full"}),
    ]
    file.write_text("\n".join(lines) + "\n")
    code, out, err = pack("--questions", str(file), "-b", "500")
    assert code == 0, err
    found = _objects(out)
    assert [(o["line"], o.get("id")) for o in found] == [(1, None), (3, "g1"), (4, 7)]
    assert [o["budget"] for o in found] == [500, 300, 500]
    assert all(int(str(o["tokens"])) <= int(str(o["budget"])) for o in found)
    assert "packed 3 of 3 questions" in err
    for shown, extra in ((found[0], []), (found[2], ["--headers", "full"])):
        code, single, _ = pack(BEACON, "-b", "500", "--json", *extra)
        alone = json.loads(single)
        assert {k: v for k, v in shown.items() if k not in ("line", "id")} == alone
        assert "406.025" in str(alone["text"])


def test_questions_from_stdin_with_their_messages(
    pack: Pack,
) -> None:
    stdin = f"{BEACON}\nWho services the generator?\n"
    code, out, _ = pack("--questions", "-", "-b", "400", "--messages", stdin=stdin)
    found = _objects(out)
    assert code == 0 and [o["line"] for o in found] == [1, 2]
    last = found[0]["messages"][-1]
    assert last == {"role": "user", "content": [{"type": "text", "text": BEACON}]}


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"question": "x", "budget": 100', "line 2: not a JSON object"),
        ('{"question": ["x"]}', 'line 2: needs "question", a string'),
        ('{"budget": 100}', 'line 2: needs "question", a string'),
        ('{"question": "x", "bugdet": 100}', "line 2: unknown field 'bugdet'"),
        ('{"question": "x", "budget": true}', "line 2: 'budget' must be an integer, got true"),
        ('{"question": "x", "budget": "9"}', "line 2: 'budget' must be an integer"),
        ('{"question": "x", "id": [1]}', "line 2: 'id' must be a string or an integer"),
    ],
)
def test_a_bad_line_is_named_and_nothing_is_packed(
    pack: Pack, tmp_path: Path, line: str, problem: str
) -> None:
    file = tmp_path / "questions.jsonl"
    file.write_text(f"{BEACON}\n{line}\n{BEACON}\n")
    code, out, err = pack("--questions", str(file), "-b", "400")
    assert code == 2 and out == ""
    assert "'--questions'" in err and problem in err


def test_a_line_may_filter_and_cap_its_overview_as_the_options_do(pack: Pack) -> None:
    where = {"station": "Cinder Bay"}
    line = {"question": BEACON, "where": where, "overview_tokens": 0}
    code, out, err = pack("--questions", "-", "-b", "500", stdin=json.dumps(line))
    assert code == 0, err
    (found,) = _objects(out)
    options = ["--where", json.dumps(where), "--overview-tokens", "0", "--json"]
    code, single, _ = pack(BEACON, "-b", "500", *options)
    assert {k: v for k, v in found.items() if k != "line"} == json.loads(single)


def test_a_bad_filter_on_a_line_is_named_with_its_line(pack: Pack) -> None:
    stdin = BEACON + "\n" + json.dumps({"question": BEACON, "where": {"year": {"$gt": "x"}}})
    code, out, err = pack("--questions", "-", "-b", "500", stdin=stdin)
    assert code == 2 and out == "" and "--questions line 2: where" in err


def test_a_line_without_a_budget_needs_budget_given(
    pack: Pack,
) -> None:
    stdin = json.dumps({"question": BEACON, "budget": 300}) + "\n" + BEACON + "\n"
    code, out, err = pack("--questions", "-", stdin=stdin)
    assert code == 2 and out == "" and 'line 2: no budget: give --budget, or "budget"' in err
    code, out, _ = pack("--questions", "-", stdin=stdin.splitlines()[0])
    assert code == 0 and len(_objects(out)) == 1


def test_query_and_questions_are_one_or_the_other(
    pack: Pack,
) -> None:
    code, _, err = pack(BEACON, "--questions", "-", "-b", "400", stdin=BEACON)
    assert code == 2 and "'--questions'" in err and "instead of QUERY" in err
    code, _, err = pack("-b", "400")
    assert code == 2 and "'QUERY': is required (or --questions FILE" in err
    code, _, err = pack(BEACON)
    assert code == 2 and "'--budget': is required" in err


def test_an_empty_file_or_a_missing_one_is_named(pack: Pack, tmp_path: Path) -> None:
    code, _, err = pack("--questions", "-", "-b", "400", stdin="\n  \n")
    assert code == 2 and "holds no question" in err
    code, _, err = pack("--questions", str(tmp_path / "absent.txt"), "-b", "400")
    assert code == 2 and "cannot read" in err and "absent.txt" in err


def test_a_question_that_fails_gives_its_error_and_the_others_are_packed(
    pack: Pack,
) -> None:
    stdin = "\n".join(
        [BEACON, json.dumps({"question": BEACON, "tokenizer": "no-such-tokenizer"}), BEACON]
    )
    code, out, err = pack("--questions", "-", "-b", "400", stdin=stdin)
    found = _objects(out)
    assert code == 2 and [o["line"] for o in found] == [1, 2, 3]
    assert "text" in found[0] and "text" in found[2]
    assert found[1]["question"] == BEACON
    assert found[1]["error"]["code"] == "invalid_argument"
    assert "1 questions failed (lines 2)" in err and "packed 2 of 3 questions" in err


plain_question = st.text(min_size=1, max_size=40).filter(
    lambda text: "\n" not in text and "\r" not in text and text.strip()[:1] not in ("", "{")
)


@settings(max_examples=60, deadline=None)
@given(
    spec=st.lists(
        st.one_of(
            st.none(),  # a blank line
            plain_question.map(lambda q: ("plain", q, None)),
            st.tuples(st.just("json"), st.text(max_size=40), st.integers(1, 10**6)),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_the_file_reads_back_as_written(spec: list[tuple[str, str, int | None] | None]) -> None:
    lines = []
    for item in spec:
        if item is None:
            lines.append("   ")
        elif item[0] == "plain":
            lines.append(item[1])
        else:
            lines.append(json.dumps({"question": item[1], "budget": item[2]}))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdin", io.StringIO("\n".join(lines)))
        if all(item is None for item in spec):
            return
        questions = read_questions("-", budget_given=True)
    expected = [
        (number, item[1].strip() if item[0] == "plain" else item[1], item[2])
        for number, item in enumerate(spec, start=1)
        if item is not None
    ]
    assert [(q.line, q.text, q.options.get("budget")) for q in questions] == expected
