"""`windowpack pack --questions FILE`: many questions packed in one process, JSON lines out.

A process pays its start once (imports, the store, the indexes, the packing state, the
query model: most of a one-question `pack`), so a batch of questions costs about one start
plus a pack each. FILE (`-`: standard input) holds one question a line, in either form:

- the question as plain text (the whole line, trimmed), or
- a JSON object, `{"question": "...", "id": "q7", "budget": 4000}`, whose fields other than
  `question` override the command's options for that question (`QUESTION_FIELDS`).

Blank lines are skipped. The whole file is read and checked before anything is packed: a
bad line is an error naming its line number, and nothing is printed. Then each question
gives one JSON object on its own line of stdout, in input order: what `pack --json` prints
for it, led by its `line` (and `id`, when given). A question whose pack fails gives an
object with `error` instead (`code`, `message`), the others are still packed, and the
command exits with status 2 once all are done.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from windowpack.cli.output import errors, window_json
from windowpack.errors import InvalidArgumentError, WindowpackError
from windowpack.filters import parse_filter

if TYPE_CHECKING:
    from windowpack.service import Collection

QUESTIONS_ARGUMENT = "--questions"
QuestionsOption = Annotated[
    str | None,
    typer.Option(
        "--questions",
        metavar="FILE",
        help="Pack every question of FILE ('-': stdin) instead of QUERY, one a line: its text, "
        'or a JSON object ({"question": ..., "id": ..., "budget": ...}); prints one JSON object '
        "a line, in order.",
    ),
]
QUESTION_FIELDS: Mapping[str, tuple[type, ...]] = {
    "id": (str, int),
    "budget": (int,),
    "tokenizer": (str,),
    "headers": (str,),
    "overview_tokens": (int,),
    "where": (dict,),
}
"""The fields a JSON line may give beside `question`, with the JSON types each takes: `id`
is echoed back; the others are the `pack` options of the same name (`where`, a filter in
Chroma's shape, checked when the file is read)."""


@dataclass(frozen=True)
class Question:
    """One line of the file: the question, where it was, what it overrides."""

    line: int
    text: str
    id: str | int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    """`pack` options given on this line (`budget`, `tokenizer`, `headers`)."""


def read_questions(source: str, *, budget_given: bool) -> list[Question]:
    """Every question of the file named `source` (`-`: standard input), checked; without
    `budget_given` (`--budget`), each line must give its own."""
    try:
        content = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InvalidArgumentError(QUESTIONS_ARGUMENT, f"cannot read {source}: {error}") from error
    # Lines end at "\n" alone (text mode has made "\r\n" one): `splitlines` would also cut
    # at form feeds and Unicode separators, and the line numbers an editor shows would drift.
    questions = [
        question
        for number, line in enumerate(content.split("\n"), start=1)
        if (question := _parsed(line, number)) is not None
    ]
    if not questions:
        raise InvalidArgumentError(QUESTIONS_ARGUMENT, f"{source} holds no question")
    unbudgeted = next((q for q in questions if "budget" not in q.options), None)
    if not budget_given and unbudgeted is not None:
        raise _bad(unbudgeted.line, 'no budget: give --budget, or "budget" on each line')
    return questions


def _parsed(line: str, number: int) -> Question | None:
    """The question on line `number`; None for a blank line."""
    text = line.strip()
    if not text:
        return None
    if not text.startswith("{"):
        return Question(line=number, text=text)
    try:
        fields = json.loads(text)
    except json.JSONDecodeError as error:
        raise _bad(number, f"not a JSON object ({error.msg} at column {error.colno})") from None
    if not isinstance(fields, dict):
        raise _bad(number, "not a JSON object")
    question = fields.pop("question", None)
    if not isinstance(question, str):
        raise _bad(number, 'needs "question", a string')
    for name, value in fields.items():
        kinds = QUESTION_FIELDS.get(name)
        if kinds is None:
            known = ", ".join(["question", *QUESTION_FIELDS])
            raise _bad(number, f"unknown field {name!r} (the fields: {known})")
        if isinstance(value, bool) or not isinstance(value, kinds):
            wanted = " or ".join(_KIND_NAMES[kind] for kind in kinds)
            raise _bad(number, f"{name!r} must be {wanted}, got {json.dumps(value)}")
    if "where" in fields:
        fields["where"] = parse_filter(
            fields["where"], argument=f"--questions line {number}: where"
        )
    line_id = fields.pop("id", None)
    return Question(line=number, text=question, id=line_id, options=fields)


_KIND_NAMES = {str: "a string", int: "an integer", dict: "a JSON object"}


def _bad(number: int, problem: str) -> InvalidArgumentError:
    return InvalidArgumentError(QUESTIONS_ARGUMENT, f"line {number}: {problem}")


def pack_questions(
    collection: Collection,
    questions: list[Question],
    options: Mapping[str, Any],
    shown_as: Mapping[str, bool],
) -> None:
    """Pack each question with `options` (`Collection.pack`'s keywords), the line's own
    over them, and print its object (`window_json` of the window, `shown_as`) on
    a line of its own as soon as it is packed; a failed pack prints its error and the rest
    go on. Raises, once all are printed, when any failed."""
    failed = []
    for question in questions:
        shown: dict[str, Any] = {"line": question.line}
        if question.id is not None:
            shown["id"] = question.id
        try:
            window = collection.pack(question.text, **{**options, **question.options})
            shown |= window_json(window, **shown_as)
        except WindowpackError as error:
            failed.append(question.line)
            shown |= {"question": question.text}
            shown["error"] = {"code": error.code, "message": error.message}
        print(json.dumps(shown, ensure_ascii=False), flush=True)
    errors.print(f"packed {len(questions) - len(failed):,} of {len(questions):,} questions")
    if failed:
        lines = ", ".join(map(str, failed[:10])) + (", ..." if len(failed) > 10 else "")
        raise WindowpackError(
            f"{len(failed):,} questions failed (lines {lines}): see their objects"
        )
