"""Loaders of the official benchmark formats: the shipped samples parse, hand-made rows
become cases whose graders follow the official rules."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from windowpack.errors import UnsupportedFileError
from windowpack.evals.loaders import (
    detect_format,
    load_cases,
    loaded_cell,
    loft_cases,
    openai_mrcr_row,
)
from windowpack.evals.readers import DeterministicReader, score_reply
from windowpack.text.tokens import TokenCounter

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
LOFT_PROMPT = SHARED / "loft" / "PROMPT_EXAMPLE.txt"
MRCR_SAMPLE = SHARED / "mrcr" / "openai_mrcr_sample_example_truncated.json"

_LOFT = """You will be given a list of documents.

ID: 0 | TITLE: Tapir | CONTENT: Tapirs are large, herbivorous mammals. | END ID: 0

ID: 3 | TITLE: Lisbon | CONTENT: Lisbon is the capital of Portugal. | END ID: 3

ID: 7 | TITLE: Osaka | CONTENT: Osaka is a city in Japan. | END ID: 7

====== Example 1 ======
query: what is a tapir
The following documents can help answer the query:

TITLE: Tapir | ID: 0

Final Answer: ['0']

====== Now let's start! ======
query: which cities are capitals or in japan
The following documents can help answer the query:

Final Answer: ['3', '7']
"""


def _shared(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared data not found at {path}")
    return path


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_the_shipped_loft_prompt_gives_a_case_per_answered_query(counter: TokenCounter) -> None:
    loaded = load_cases(_shared(LOFT_PROMPT), counter)
    assert loaded.format == "loft" and len(loaded.cases) == 5  # the final query has no gold
    first = loaded.cases[0]
    assert len(first.documents) == 875
    assert first.question == "where did the dewey decimal system come from"
    assert first.answers == ("199",)
    assert all(case.documents is first.documents for case in loaded.cases)  # one ingest
    assert first.needles[0].startswith("Melvil Dewey")


def test_loft_recall_is_the_share_of_gold_passages_in_the_window(counter: TokenCounter) -> None:
    tapir, cities = loft_cases(_LOFT, counter)
    assert (tapir.answers, cities.answers) == (("0",), ("3", "7"))
    assert [document.id for document in cities.documents] == ["loft-0", "loft-3", "loft-7"]
    window = (
        "Lisbon | Lisbon is the capital of Portugal.\n\n"
        "Tapir | Tapirs are large, herbivorous mammals."
    )
    assert cities.needle_recall(window) == 0.5
    assert score_reply(cities, DeterministicReader().answer(cities, window)) == 0.5
    assert tapir.needle_recall(window) == 1.0
    assert loaded_cell(tapir) == "loft"


def test_the_shipped_mrcr_rendering_parses_but_is_refused_as_a_case(
    counter: TokenCounter,
) -> None:
    path = _shared(MRCR_SAMPLE)
    row = openai_mrcr_row(json.loads(path.read_text(encoding="utf-8"))["sample_example"]["data"])
    assert row["random_string_to_prepend"] == "mWEa9DrPT3" and row["n_needles"] == 2
    assert row["answer"].startswith("mWEa9DrPT3")
    roles = [message["role"] for message in row["messages"]]
    assert roles[:5] == ["user", "user", "assistant", "user", "assistant"]
    assert row["messages"][1]["content"] == "write a email about horses"
    assert detect_format(path) == "openai-mrcr"
    with pytest.raises(UnsupportedFileError, match="truncated"):
        load_cases(path, counter)


def _openai_row(k: int) -> dict[str, object]:
    messages = [{"role": "user", "content": "Here are some examples ..."}]
    for index, (fmt, topic) in enumerate(
        [("poem", "tapirs"), ("poem", "cats"), ("poem", "tapirs")]
    ):
        messages += [
            {"role": "user", "content": f"write a {fmt} about {topic}"},
            {"role": "assistant", "content": f"Reply {index} on {topic}, in verse."},
        ]
    ordinal = {1: "1st", 2: "2nd"}[k]
    question = (
        f"Prepend Ab12Cd34Ef to the {ordinal} (1 indexed) poem about tapirs. "
        "Do not include any other text in your response."
    )
    messages.append({"role": "user", "content": question})
    reply = {1: "Reply 0 on tapirs, in verse.", 2: "Reply 2 on tapirs, in verse."}[k]
    return {
        "prompt": json.dumps(messages),
        "answer": "Ab12Cd34Ef" + reply,
        "random_string_to_prepend": "Ab12Cd34Ef",
        "n_needles": 2,
        "desired_msg_index": 6,
        "total_messages": 8,
        "n_chars": 500,
    }


def test_openai_mrcr_rows_are_graded_by_the_official_rule(
    tmp_path: Path, counter: TokenCounter
) -> None:
    path = _write_jsonl(tmp_path / "mrcr.jsonl", [_openai_row(1), _openai_row(2)])
    loaded = load_cases(path, counter)
    assert loaded.format == "openai-mrcr" and len(loaded.cases) == 2
    first, second = loaded.cases
    assert first.needles == ("Reply 0 on tapirs, in verse.", "Reply 2 on tapirs, in verse.")
    assert (first.params["k"], second.params["k"]) == (1, 2)
    assert loaded_cell(first) == "openai-mrcr-2"
    whole = first.documents[0].text
    reader = DeterministicReader()
    assert score_reply(second, reader.answer(second, whole)) == 1.0  # the 2nd copy, copied
    assert first.ordinal_complete(whole) and second.ordinal_complete(whole)
    assert score_reply(second, "Reply 2 on tapirs, in verse.") == 0.0  # no prefix: 0
    assert load_cases(path, counter, limit=1).cases == (first,)


def _gdm_row(tmp_path: Path) -> Path:
    transcript = (
        "User: Write a poem about tapirs in a quiet style.\n\nAssistant: First tapir poem.\n\n"
        "User: Write a memo about tapirs in a stern style.\n\nAssistant: A stern memo.\n\n"
        "User: Write a poem about tapirs in a quiet style.\n\nAssistant: Second tapir poem.\n\n"
        "User: Prepend Qw3rTy7uIo9P to the second poem about tapirs in a quiet style. "
        "Do not include any other text in your response.\n\nAssistant:"
    )
    path = tmp_path / "mrcr_v2.csv"
    with path.open("w", encoding="utf-8", newline="") as file:
        writer = csv.DictWriter(
            file, fieldnames=["queries", "answer", "view_ops", "num_relevant", "context_len"]
        )
        writer.writeheader()
        writer.writerow(
            {
                "queries": transcript,
                "answer": "Qw3rTy7uIo9P Second tapir poem.",
                "view_ops": "[]",
                "num_relevant": 2,
                "context_len": 128,
            }
        )
    return path


def test_gdm_mrcr_v2_rows_split_the_question_from_the_transcript(
    tmp_path: Path, counter: TokenCounter
) -> None:
    (case,) = load_cases(_gdm_row(tmp_path), counter).cases
    assert case.task == "gdm-mrcr" and case.params["k"] == 2 and case.length == 128
    assert case.question.startswith("Prepend Qw3rTy7uIo9P to the second poem")
    assert case.needles == ("First tapir poem.", "Second tapir poem.")
    text = case.documents[0].text
    assert "Prepend" not in text  # the question is not in the haystack
    assert score_reply(case, DeterministicReader().answer(case, text)) == 1.0
    assert score_reply(case, "First tapir poem.") == 0.0  # no hash: 0


def test_ruler_rows_ask_their_last_line_and_need_every_output(
    tmp_path: Path, counter: TokenCounter
) -> None:
    context = "Filler text. One of the special magic numbers for cat is: 123. More filler."
    row = {
        "index": 0,
        "input": f"Memorize the text.\n{context} And 456 here.\nWhat are the numbers for cat?",
        "outputs": ["123", "456"],
        "length": 4096,
    }
    path = _write_jsonl(tmp_path / "niah_multivalue.jsonl", [row])
    (case,) = load_cases(path, counter).cases
    assert case.question == "What are the numbers for cat?" and case.length == 4096
    assert case.needles == ("123", "456")
    assert "What are" not in case.documents[0].text
    assert case.needle_recall("only 123") == 0.5
    assert loaded_cell(case) == "ruler · 4K"


def test_bad_files_are_named(tmp_path: Path, counter: TokenCounter) -> None:
    unknown = tmp_path / "rows.jsonl"
    _write_jsonl(unknown, [{"text": "no known fields"}])
    with pytest.raises(UnsupportedFileError, match=r"rows\.jsonl.*--format"):
        load_cases(unknown, counter)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"input": "x 1\\nq?", "outputs": ["1"]}\n{not json\n', encoding="utf-8")
    with pytest.raises(UnsupportedFileError, match=r"broken\.jsonl: line 2"):
        load_cases(broken, counter)
    no_outputs = _write_jsonl(tmp_path / "r.jsonl", [{"input": "a\nb?", "outputs": []}])
    with pytest.raises(UnsupportedFileError, match=r"row 1: .*'outputs'"):
        load_cases(no_outputs, counter, format_="ruler")
    with pytest.raises(UnsupportedFileError, match="format 'nope'"):
        load_cases(no_outputs, counter, format_="nope")


def test_cli_eval_load_runs_a_file_through_the_systems(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from windowpack.cli import main

    prompt = tmp_path / "loft_prompt.txt"
    prompt.write_text(_LOFT, encoding="utf-8")
    out = tmp_path / "report"
    args = ["eval", "load", str(prompt), "--budgets", "1k", "--systems", "windowpack,bm25"]
    monkeypatch.setattr("sys.argv", ["windowpack", *args, "--embedder", "hash", "--out", str(out)])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code in (0, None)
    report = json.loads((out / "results.json").read_text(encoding="utf-8"))
    (result,) = report["results"]
    assert result["task"] == "loft" and result["settings"]["cases"] == 2
    # A 1K window holds this whole tiny corpus: every gold passage is in it.
    assert result["summary"]["windowpack"]["1024"]["needle_recall"] == 1.0
    assert "| loft (gold passage recall) | bm25 |" in (out / "results.md").read_text(
        encoding="utf-8"
    )
    capsys.readouterr()
