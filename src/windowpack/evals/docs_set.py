"""The docs eval's inputs: a corpus of real documents and questions with answer strings.

    docs = load_docs_set(Path("/usr/share/doc/postgresql-doc-15/html"),
                         Path("examples/pgdocs/questions.jsonl"),
                         pages=Path("examples/pgdocs/pages.txt"), max_bytes=...)

The corpus is a folder, or the pages of a pages list in it (one path a line, relative to
the folder; blank lines and `#` comments skipped), parsed by `documents.parse_paths` exactly
as `Collection.add_files` parses them, ids relative to the folder. So the eval measures
whatever the parsers make of the files, and nothing is copied out of the folder.

`questions.jsonl` holds one object a line: `question`; `answer` (a string that must appear
in the window) or `answers` (several, each of which must: a two-page chain's two facts, a set
question's members; a window scores the share of them it holds); optionally `page` or `pages`
(the ids of the documents the answers are in) and `kind` (one of `QUESTION_KINDS`, "lookup"
when absent), by which the report splits its tables. Anything else is an error naming the
file and the line.

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

QUESTION_FIELDS = ("question", "answer", "answers", "page", "pages", "kind")
QUESTION_KINDS = ("lookup", "paraphrase", "chain", "set", "associative")
"""What a question asks of a window: a fact in the question's own words (lookup), the same
in other words (paraphrase), a fact reached through another on a second page (chain), every
member of a set (set), something named only by what is said about it (associative)."""

_LINK = re.compile(r"\[((?:[^\]\\]|\\.)*)\]\((?:[^()\\]|\\.)*\)")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~])")
_MARKUP = re.compile(r"[*_`]")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True, kw_only=True)
class Question:
    """One line of a questions file: the question, its answer strings, the pages they are on
    (document ids; empty: any document), its kind and the line number."""

    question: str
    answers: tuple[str, ...]
    pages: tuple[str, ...]
    kind: str
    line: int

    @property
    def answer(self) -> str:
        """The first answer string."""
        return self.answers[0]

    @property
    def page(self) -> str | None:
        """The first page, or None for any document."""
        return self.pages[0] if self.pages else None


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
            where = [texts[page] for page in question.pages] or list(texts.values())
            for answer in map(normalise_answer_text, question.answers):
                if not any(answer in text for text in where):
                    missing.append(question)
                    break
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
                needles=question.answers,
                answers=question.answers,
                grading="facts",
                params={
                    "facts": [
                        {"answer": answer, "needles": [answer]} for answer in question.answers
                    ],
                    "page": question.page,
                    "pages": list(question.pages),
                    "kind": question.kind,
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
        for page in question.pages:
            if page not in ids:
                raise UnsupportedFileError(
                    str(questions),
                    f"line {question.line}: page {page!r} is not in the corpus "
                    f"({corpus}{f', pages of {pages}' if pages else ''})",
                )
    return DocsSet(
        corpus=str(corpus),
        pages=str(pages) if pages is not None else None,
        questions_file=str(questions),
        documents=documents,
        questions=asked,
    )


MANUAL_FILE = "manual.json"


def load_manual(folder: Path, *, max_bytes: int) -> DocsSet:
    """The docs set a manual folder describes: `manual.json` (`corpus`: the folder its pages
    are read from, e.g. where a Debian package installs them), `pages.txt` and
    `questions.jsonl` beside it (see `load_docs_set`)."""
    described = folder / MANUAL_FILE
    if not described.is_file():
        raise InputPathNotFoundError(str(described))
    try:
        corpus = json.loads(described.read_text(encoding="utf-8"))["corpus"]
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise UnsupportedFileError(
            str(described), f'needs {{"corpus": "FOLDER"}}: {error}'
        ) from None
    pages = folder / "pages.txt"
    return load_docs_set(
        Path(corpus),
        folder / "questions.jsonl",
        pages=pages if pages.is_file() else None,
        max_bytes=max_bytes,
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
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ValueError("no 'question' (a non-empty string)")
    kind = row.get("kind", "lookup")
    if kind not in QUESTION_KINDS:
        raise ValueError(f"'kind' must be one of {', '.join(QUESTION_KINDS)}, got {kind!r}")
    answers = _strings(row, "answer", "answers", required=True)
    pages = _strings(row, "page", "pages", required=False)
    return Question(
        question=question,
        answers=answers,
        pages=tuple(page.removeprefix("./") for page in pages),
        kind=kind,
        line=line,
    )


def _strings(row: dict[str, Any], one: str, many: str, *, required: bool) -> tuple[str, ...]:
    """The non-empty strings of field `one` (a string) or `many` (a list of them), never both."""
    if one in row and many in row:
        raise ValueError(f"both {one!r} and {many!r}: give one of them")
    if one in row:
        values = [row[one]]
        named = one
        if not isinstance(row[one], str):
            raise ValueError(f"{one!r} must be a string")
    elif many in row:
        values, named = row[many], many
        if not isinstance(values, list) or not values:
            raise ValueError(f"{many!r} must be a non-empty list of strings")
    elif required:
        raise ValueError(f"no {one!r} (or {many!r})")
    else:
        return ()
    for value in values:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{named!r} must hold non-empty strings, got {value!r}")
    return tuple(values)


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
