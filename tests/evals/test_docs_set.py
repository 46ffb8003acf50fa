"""The docs eval's inputs: a corpus folder (or a pages list in it) parsed as `add_files`
parses it, a questions file read line by line, and answers matched in a window's text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from docs_corpus import QUESTIONS, write_corpus

from windowpack.config import StoreConfig
from windowpack.errors import InputPathNotFoundError, UnsupportedFileError
from windowpack.evals import answer_found, load_docs_set, load_questions

MAX_BYTES = StoreConfig().max_file_bytes


def test_a_pages_list_takes_its_pages_from_the_folder_named_by_their_paths(
    tmp_path: Path,
) -> None:
    corpus, pages, questions = write_corpus(tmp_path)
    docs = load_docs_set(corpus, questions, pages=pages, max_bytes=MAX_BYTES)
    assert [document.id for document in docs.documents] == [
        "guide/config.md",
        "ref/drop.html",
        "tutorial.txt",
    ]
    # HTML and Markdown are parsed as add_files parses them: no tags left in the text.
    drop = docs.documents[1]
    assert "<dd>" not in drop.text and "Attempt to terminate" in drop.text
    assert [question.answer for question in docs.questions] == [q["answer"] for q in QUESTIONS]
    assert [question.line for question in docs.questions] == [1, 2, 3, 4]


def test_without_a_pages_list_the_whole_folder_is_the_corpus(tmp_path: Path) -> None:
    corpus, _, questions = write_corpus(tmp_path)
    docs = load_docs_set(corpus, questions, max_bytes=MAX_BYTES)
    assert "unlisted.md" in [document.id for document in docs.documents]
    assert len(docs.documents) == 4


def test_questions_whose_answer_is_not_in_the_parsed_page_are_named(tmp_path: Path) -> None:
    corpus, pages, questions = write_corpus(tmp_path)
    docs = load_docs_set(corpus, questions, pages=pages, max_bytes=MAX_BYTES)
    # The third has no page: any document holding its answer will do.
    assert [question.line for question in docs.unanswerable()] == [4]


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        ("4 gigabytes (4GB)", "The default is **4 gigabytes** (`4GB`)."),
        ("the DEFAULT is 4 Gigabytes", "The default is 4 gigabytes"),
        ("4 gigabytes", "The default is 4\n\n   gigabytes"),
        ("two hundred milliseconds", "The default is _two hundred milliseconds_."),
        ("see DROP TABLE for", 'see [DROP TABLE](sql-droptable.html "DROP \\(x\\)") for'),
        ("the server's address space", "the server\u2019s address space"),
        ("cache_size", r"`cache\_size`"),
    ],
)
def test_answers_match_ignoring_case_whitespace_and_markdown_markup(answer: str, text: str) -> None:
    assert answer_found(answer, text)


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        ("5 gigabytes", "The default is 4 gigabytes"),
        ("4 gigabytes (4GB)", "The default is 4 gigabytes"),  # the unit is part of it
        ("gigabytes", "giga bytes"),
        ("", "anything"),
    ],
)
def test_answers_do_not_match_other_text(answer: str, text: str) -> None:
    assert not answer_found(answer, text)


@pytest.mark.parametrize(
    ("lines", "problem"),
    [
        (['{"question": "q", "answer": "a"}', "{not json"], "line 2"),
        (['{"question": "q", "answer": "a"}', '["q", "a"]'], "line 2: not an object"),
        (['{"question": "q"}'], "line 1: no 'answer' (or 'answers')"),
        (['{"question": "q", "answer": "  "}'], "line 1: 'answer' must hold non-empty strings"),
        (['{"question": 3, "answer": "a"}'], "line 1: no 'question' (a non-empty string)"),
        (['{"question": "q", "answers": []}'], "line 1: 'answers' must be a non-empty list"),
        (['{"question": "q", "answer": "a", "kind": "riddle"}'], "line 1: 'kind' must be one of"),
        (['{"question": "q", "answer": "a", "answers": ["b"]}'], "line 1: both 'answer' and"),
        (['{"question": "q", "answer": "a", "page": 7}'], "line 1: 'page' must be a string"),
        (['{"question": "q", "answer": "a", "pgae": "x"}'], "line 1: unknown field(s) 'pgae'"),
        ([""], "no question"),
    ],
)
def test_a_bad_questions_file_is_an_error_naming_the_file_and_line(
    tmp_path: Path, lines: list[str], problem: str
) -> None:
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(UnsupportedFileError) as raised:
        load_questions(path)
    assert str(path) in str(raised.value) and problem in str(raised.value)


def test_a_question_on_a_page_outside_the_corpus_names_the_page_and_line(tmp_path: Path) -> None:
    corpus, pages, questions = write_corpus(tmp_path)
    with questions.open("a", encoding="utf-8") as file:
        file.write(json.dumps({"question": "q", "answer": "a", "page": "unlisted.md"}) + "\n")
    with pytest.raises(UnsupportedFileError) as raised:
        load_docs_set(corpus, questions, pages=pages, max_bytes=MAX_BYTES)
    message = str(raised.value)
    assert str(questions) in message and "line 5" in message and "'unlisted.md'" in message


def test_a_page_of_the_list_that_is_missing_is_named(tmp_path: Path) -> None:
    corpus, pages, questions = write_corpus(tmp_path)
    with pages.open("a", encoding="utf-8") as file:
        file.write("ref/gone.html\n")
    with pytest.raises(InputPathNotFoundError) as raised:
        load_docs_set(corpus, questions, pages=pages, max_bytes=MAX_BYTES)
    assert "gone.html" in str(raised.value) and str(pages) in str(raised.value)


@pytest.mark.parametrize("missing", ["corpus", "questions", "pages"])
def test_missing_inputs_are_named(tmp_path: Path, missing: str) -> None:
    corpus, pages, questions = write_corpus(tmp_path)
    given = {"corpus": corpus, "questions": questions, "pages": pages}
    given[missing] = tmp_path / f"no-{missing}"
    with pytest.raises(InputPathNotFoundError) as raised:
        load_docs_set(
            given["corpus"], given["questions"], pages=given["pages"], max_bytes=MAX_BYTES
        )
    assert f"no-{missing}" in str(raised.value)
