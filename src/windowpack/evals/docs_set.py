"""The docs eval's inputs: a corpus of real documents and questions with answer strings.

    docs = load_docs_set(Path("/usr/share/doc/postgresql-doc-15/html"),
                         Path("examples/pgdocs/questions.jsonl"),
                         pages=Path("examples/pgdocs/pages.txt"), max_bytes=...)

The corpus is a folder, or the pages of a pages list in it (one path a line, relative to
the folder; blank lines and `#` comments skipped), parsed by `documents.parse_paths` exactly
as `Collection.add_files` parses them, ids relative to the folder. So the eval measures
whatever the parsers make of the files, and nothing is copied out of the folder.

`questions.jsonl` holds one object a line: `question`, `answer` (a string that must appear
in the window) and optionally `page` (the id of the document the answer is in). Anything
else is an error naming the file and the line.

An answer is found in a text when it appears in it after both are normalised
(`normalise_answer_text`): case folded, whitespace runs made one space, Markdown markup
removed (emphasis `*` and `_`, code backticks, backslash escapes, a link's target, keeping
its text) and typographic quotes made plain. HTML is converted to Markdown, so "4 gigabytes
(`4GB`)" in a page is "4 gigabytes (4GB)" to whoever asks.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from windowpack.documents import parse_paths
from windowpack.errors import InputPathNotFoundError, UnsupportedFileError
from windowpack.evals.cases import Case
from windowpack.text import TokenCounter
from windowpack.types import Document

QUESTION_FIELDS = ("question", "answer", "page")

_LINK = re.compile(r"\[((?:[^\]\\]|\\.)*)\]\((?:[^()\\]|\\.)*\)")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~])")
_MARKUP = re.compile(r"[*_`]")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True, kw_only=True)
class Question:
    """One line of a questions file: the question, the answer string, the page it is on
    (a document id; None: any document) and the line number."""

    question: str
    answer: str
    page: str | None
    line: int


@dataclass(frozen=True, kw_only=True)
class DocsSet:
    """A corpus and its questions, as `load_docs_set` read them."""

    corpus: str
    pages: str | None
    questions_file: str
    documents: tuple[Document, ...]
    questions: tuple[Question, ...]

    def unanswerable(self) -> list[Question]:
        """The questions whose answer is not in the parsed text of their page (of any
        document, for a question without one): no window can hold it. A wrong answer
        string, or a parser that changed what the page says."""
        texts = {document.id: normalise_answer_text(document.text) for document in self.documents}
        missing = []
        for question in self.questions:
            answer = normalise_answer_text(question.answer)
            where = [texts[question.page]] if question.page is not None else texts.values()
            if not any(answer in text for text in where):
                missing.append(question)
        return missing

    def cases(self, counter: TokenCounter) -> list[Case]:
        """A case per question over the whole corpus (cases `docs-q{line}`)."""
        tokens = sum(counter.count_many([document.text for document in self.documents]))
        return [
            Case(
                task="docs",
                name=f"docs-q{question.line}",
                length=tokens,
                tokens=tokens,
                depth=None,
                documents=self.documents,
                question=question.question,
                needles=(question.answer,),
                answers=(question.answer,),
                grading="facts",
                params={
                    "facts": [{"answer": question.answer, "needles": [question.answer]}],
                    "page": question.page,
                    "line": question.line,
                },
            )
            for question in self.questions
        ]


def load_docs_set(
    corpus: Path, questions: Path, *, pages: Path | None = None, max_bytes: int
) -> DocsSet:
    """The documents of `corpus` (the pages `pages` lists, or the whole folder) and the
    questions of `questions`, each page a question names checked to be in the corpus.
    Files larger than `max_bytes` are refused, as `add_files` refuses them."""
    asked = load_questions(questions)
    documents = load_corpus(corpus, pages=pages, max_bytes=max_bytes)
    ids = {document.id for document in documents}
    for question in asked:
        if question.page is not None and question.page not in ids:
            raise UnsupportedFileError(
                str(questions),
                f"line {question.line}: page {question.page!r} is not in the corpus "
                f"({corpus}{f', pages of {pages}' if pages else ''})",
            )
    return DocsSet(
        corpus=str(corpus),
        pages=str(pages) if pages is not None else None,
        questions_file=str(questions),
        documents=documents,
        questions=asked,
    )


def load_corpus(folder: Path, *, pages: Path | None = None, max_bytes: int) -> tuple[Document, ...]:
    """The documents of `folder`, or of the pages `pages` lists in it, parsed as
    `add_files` parses them, their ids relative to `folder`."""
    if not folder.is_dir():
        raise InputPathNotFoundError(str(folder))
    paths = [folder] if pages is None else _listed_pages(folder, pages)
    parsed = parse_paths(paths, max_bytes=max_bytes, root=folder)
    if not parsed.documents:
        raise UnsupportedFileError(str(pages or folder), "no document to parse")
    return tuple(parsed.documents)


def _listed_pages(folder: Path, pages: Path) -> list[Path]:
    """The paths `pages` lists, each checked to exist (named with its line when not)."""
    if not pages.is_file():
        raise InputPathNotFoundError(str(pages))
    listed = []
    for number, line in enumerate(pages.read_text(encoding="utf-8").splitlines(), start=1):
        name = line.strip()
        if not name or name.startswith("#"):
            continue
        path = folder / name
        if not path.exists():
            raise InputPathNotFoundError(f"{path} (line {number} of {pages})")
        listed.append(path)
    return listed


def load_questions(path: Path) -> tuple[Question, ...]:
    """The questions of a JSONL file; a bad line is an `UnsupportedFileError` naming the
    file and the line."""
    if not path.is_file():
        raise InputPathNotFoundError(str(path))
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                questions.append(_question(json.loads(line), number))
            except json.JSONDecodeError as error:
                raise UnsupportedFileError(str(path), f"line {number}: {error.msg}") from None
            except ValueError as error:
                raise UnsupportedFileError(str(path), f"line {number}: {error}") from None
    if not questions:
        raise UnsupportedFileError(str(path), "no question in the file")
    return tuple(questions)


def _question(row: Any, line: int) -> Question:
    if not isinstance(row, dict):
        raise ValueError("not an object")
    unknown = [key for key in row if key not in QUESTION_FIELDS]
    if unknown:
        named = ", ".join(repr(key) for key in unknown)
        raise ValueError(f"unknown field(s) {named}; a question has {', '.join(QUESTION_FIELDS)}")
    for name in ("question", "answer"):
        if name not in row or (isinstance(row[name], str) and not row[name].strip()):
            raise ValueError(f"no {name!r}")
    for name in QUESTION_FIELDS:
        if name in row and not isinstance(row[name], str):
            raise ValueError(f"{name!r} must be a string")
    page = row.get("page")
    return Question(
        question=row["question"],
        answer=row["answer"],
        page=page.removeprefix("./") if page else None,
        line=line,
    )


def normalise_answer_text(text: str) -> str:
    """`text` as answers are compared: case folded, one space for each whitespace run,
    Markdown's emphasis, code, escapes and link targets removed, quotes made plain."""
    text = _LINK.sub(r"\1", text)
    text = _ESCAPE.sub(r"\1", text)
    text = _MARKUP.sub("", text.translate(_QUOTES))
    return _WHITESPACE.sub(" ", text).strip().casefold()


def answer_found(answer: str, text: str) -> bool:
    """Whether `answer` appears in `text`, both normalised (`normalise_answer_text`). An
    empty answer is found nowhere."""
    wanted = normalise_answer_text(answer)
    return bool(wanted) and wanted in normalise_answer_text(text)
