"""Loaders for the official benchmark formats: each file becomes eval `Case`s that run
through the same systems, graders and report as the generated tasks.

- `loft`: a LOFT corpus-in-context retrieval prompt (`PROMPT_EXAMPLE.txt`: lines
  `ID: n | TITLE: t | CONTENT: c | END ID: n`, then examples `query: ...` with
  `Final Answer: ['id', ...]`). Each passage is a document; each query with gold ids is a
  case (the final query too, where the file gives its answer); recall is the share of the
  gold passages whole in the window.
- `openai-mrcr`: OpenAI MRCR rows (`prompt`, a JSON string of chat messages; `answer`;
  `random_string_to_prepend`; `n_needles`; ...) from JSONL, or parquet where pyarrow is
  installed; graded by OpenAI's rule (`grade_mrcr`).
- `gdm-mrcr`: GDM MRCR v2 CSV rows (`queries`, one transcript ending with the question;
  `answer`; `num_relevant`; `context_len`; ...); graded by MRCR v2's rule (`grade_mrcr_gdm`).
- `ruler`: RULER JSONL rows (`input`, `outputs`, `length`); the input's last line is the
  question, the rest the context; recall is the share of the outputs in the window.

An MRCR case's needles are the replies of the asked request found in the conversation, so
the deterministic reader and `ordinal_complete` work on loaded rows as on generated ones.
"""

from __future__ import annotations

import ast
import csv
import importlib
import itertools
import json
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from windowpack.documents import conversation_document, transcript_document
from windowpack.errors import InputPathNotFoundError, InvalidInputError, UnsupportedFileError
from windowpack.evals.cases import Case
from windowpack.evals.haystack import split_passage
from windowpack.evals.mrcr import request
from windowpack.evals.mrcr_gdm import INDEX_NAMES
from windowpack.evals.options import size_label
from windowpack.text import TokenCounter
from windowpack.types import Document

LOAD_FORMATS = ("loft", "openai-mrcr", "gdm-mrcr", "ruler")

_LOFT_PASSAGE = re.compile(r"^ID: (\d+) \| TITLE: (.*?) \| CONTENT: (.*) \| END ID: \1\s*$", re.M)
_LOFT_QUERY = re.compile(r"^query: (.*)$", re.M)
_LOFT_ANSWER = re.compile(r"^Final Answer: \[(.*)\]\s*$", re.M)
_OPENAI_QUESTION = re.compile(
    r"Prepend (\S+) to the (\d+)(?:st|nd|rd|th) \(1 indexed\) (.+?) about (.+?)\. "
)
_GDM_QUESTION = re.compile(r"Prepend (\S+) to the (\w+) (.+?) about (.+?) in an? (.+?) style\.")
_LAST_USER_TURN = re.compile(r"(?:^|\n)User: (?!.*\nUser: )", re.S)


@dataclass(frozen=True, kw_only=True)
class LoadedSet:
    """The cases of one benchmark file, its format and where it came from."""

    source: str
    format: str
    cases: tuple[Case, ...]


def load_cases(
    path: Path, counter: TokenCounter, *, format_: str | None = None, limit: int | None = None
) -> LoadedSet:
    """The cases of the benchmark file at `path`, in `format_` (one of `LOAD_FORMATS`;
    detected when None, see `detect_format`); at most `limit` rows of a row format."""
    if not path.is_file():
        raise InputPathNotFoundError(str(path))
    chosen = format_ or detect_format(path)
    if chosen not in LOAD_FORMATS:
        raise UnsupportedFileError(
            str(path), f"format {chosen!r}: choose {', '.join(LOAD_FORMATS)}"
        )
    if chosen == "loft":
        cases = loft_cases(path.read_text(encoding="utf-8"), counter, source=path.name)
    else:
        builders = {"openai-mrcr": openai_mrcr_case, "gdm-mrcr": gdm_mrcr_row_case}
        build = builders.get(chosen, ruler_row_case)
        rows = _limited(_rows(path, chosen), limit)
        cases = [_row_case(path, number, row, build, counter) for number, row in rows]
    if not cases:
        raise UnsupportedFileError(str(path), f"no {chosen} case in the file")
    return LoadedSet(source=str(path), format=chosen, cases=tuple(cases))


def detect_format(path: Path) -> str:
    """The format of `path` from its suffix and first row (or, for .txt, its passages)."""
    suffix = path.suffix.lower()
    if suffix == ".txt":
        with path.open(encoding="utf-8") as file:
            head = file.read(200_000)
        if _LOFT_PASSAGE.search(head):
            return "loft"
    if suffix == ".csv":
        return "gdm-mrcr"
    if suffix == ".parquet":
        return "openai-mrcr"
    if suffix in (".jsonl", ".json"):
        first = next(iter(_json_rows(path)), None)
        keys = set(first[1]) if first else set()
        evalscope = {"input", "target", "metadata"} <= keys  # its rendering of an MRCR row
        if {"prompt", "answer"} <= keys or "random_string_to_prepend" in keys or evalscope:
            return "openai-mrcr"
        if {"input", "outputs"} <= keys:
            return "ruler"
    raise UnsupportedFileError(
        str(path), f"cannot tell its format; give --format ({', '.join(LOAD_FORMATS)})"
    )


# LOFT ---------------------------------------------------------------------------------------


def loft_cases(text: str, counter: TokenCounter, *, source: str = "loft") -> list[Case]:
    """A case per query of a LOFT retrieval prompt whose gold ids the prompt gives."""
    passages = {m.group(1): (m.group(2), m.group(3).strip()) for m in _LOFT_PASSAGE.finditer(text)}
    if not passages:
        raise UnsupportedFileError(source, "no 'ID: n | TITLE: ... | CONTENT: ...' passage")
    documents = tuple(
        Document(text=f"{title} | {content}", id=f"loft-{pid}", title=title)
        for pid, (title, content) in passages.items()
    )
    tokens = sum(counter.count_many([document.text for document in documents]))
    cases = []
    for number, (query, gold) in enumerate(_loft_queries(text[text.find("\n======") :]), 1):
        missing = [pid for pid in gold if pid not in passages]
        if missing:
            raise UnsupportedFileError(source, f"query {number}: gold id(s) {missing} not passages")
        facts = [{"needles": [passages[pid][1]], "answer": pid} for pid in gold]
        cases.append(
            Case(
                task="loft",
                name=f"loft-q{number}",
                length=tokens,
                tokens=tokens,
                depth=None,
                documents=documents,
                question=query,
                needles=tuple(passages[pid][1] for pid in gold),
                answers=tuple(gold),
                grading="facts",
                params={"facts": facts, "gold": list(gold)},
            )
        )
    return cases


def _loft_queries(examples: str) -> Iterator[tuple[str, list[str]]]:
    """(query, gold ids) of each example block that gives its final answer."""
    for block in re.split(r"\n====== .*? ======\n", examples):
        query, answer = _LOFT_QUERY.search(block), _LOFT_ANSWER.search(block)
        if query and answer:
            gold = [part.strip().strip("'\"") for part in answer.group(1).split(",")]
            yield query.group(1).strip(), [pid for pid in gold if pid]


# Rows: OpenAI MRCR, GDM MRCR v2, RULER -------------------------------------------------------


def openai_mrcr_case(row: Mapping[str, Any], counter: TokenCounter, name: str) -> Case:
    """An OpenAI MRCR row: the messages before the last are the conversation, the last the
    question (`Prepend X to the k-th (1 indexed) {format} about {topic}. ...`)."""
    row = openai_mrcr_row(row)
    messages = row["messages"]
    question = str(messages[-1]["content"])
    parsed = _OPENAI_QUESTION.search(question)
    if any("[TRUNCATED" in str(message["content"]) for message in messages):
        raise InvalidInputError("the row is truncated (a rendering, not a test item)")
    if parsed is None:
        raise InvalidInputError("the last message is not an MRCR question")
    prefix, k, format_, topic = parsed.groups()
    prefix = str(row.get("random_string_to_prepend", prefix))
    asked = request(format_, topic)
    replies = [
        str(reply["content"])
        for message, reply in itertools.pairwise(messages)
        if message.get("role") == "user" and message.get("content") == asked
    ]
    document = conversation_document(messages[:-1], id="conversation", title="conversation")
    answer = str(_field(row, "answer"))
    tokens = counter.count(document.text)
    n = int(row.get("n_needles", len(replies)))
    return Case(
        task="openai-mrcr",
        name=name,
        length=tokens,
        tokens=tokens,
        depth=None,
        documents=(document,),
        question=question,
        needles=tuple(replies) or (answer.removeprefix(prefix),),
        answers=(answer,),
        conversation=tuple(messages[:-1]),
        grading="mrcr-openai",
        params={"format": format_, "topic": topic, "k": int(k), "prefix": prefix, "n": n},
    )


def gdm_mrcr_row_case(row: Mapping[str, Any], counter: TokenCounter, name: str) -> Case:
    """A GDM MRCR v2 row: `queries` is the transcript, its last `User:` turn the question
    (`Prepend X to the {first..eighth} {format} about {topic} in a {style} style. ...`)."""
    queries = str(_field(row, "queries"))
    last = list(_LAST_USER_TURN.finditer(queries))
    parsed = _GDM_QUESTION.search(queries, last[-1].end()) if last else None
    if not last or parsed is None or parsed.group(2).lower() not in INDEX_NAMES:
        raise InvalidInputError("'queries' does not end with an MRCR v2 question")
    code, index, format_, topic, style = parsed.groups()
    transcript = queries[: last[-1].start()].rstrip()
    question = queries[last[-1].end() :].split("\n\nAssistant:")[0].strip()
    # The request as the transcript words it ("in quiet style" or "in a quiet style").
    opening = re.compile(
        rf"User: (Write an? {re.escape(format_)} about {re.escape(topic)} in "
        rf"(?:an? )?{re.escape(style)} style\.)\n\nAssistant: "
    )
    matches = list(opening.finditer(transcript))
    asked = matches[0].group(1) if matches else f"Write a {format_} about {topic} in {style} style."
    replies = [
        re.split(r"\n\nUser: ", transcript[match.end() :], maxsplit=1)[0].strip()
        for match in matches
    ]
    document = transcript_document(transcript, id="conversation", title="conversation")
    answer = str(_field(row, "answer"))
    tokens = counter.count(transcript)
    n = int(row.get("num_relevant") or len(replies) or 1)
    return Case(
        task="gdm-mrcr",
        name=name,
        length=int(row.get("context_len") or tokens),
        tokens=tokens,
        depth=None,
        documents=(document,),
        question=question,
        needles=tuple(replies) or (answer.strip()[12:].strip(),),
        answers=(answer,),
        grading="mrcr-gdm",
        params={
            "format": format_,
            "topic": topic,
            "style": style,
            "k": INDEX_NAMES.index(index.lower()) + 1,
            "prefix": code,
            "n": n,
            "request": asked,
        },
    )


def ruler_row_case(row: Mapping[str, Any], counter: TokenCounter, name: str) -> Case:
    """A RULER row: the input's last non-empty line is the question, the rest the context
    (cut into passages as a haystack is); every output must reach the window."""
    text = str(_field(row, "input")).rstrip()
    outputs = _field(row, "outputs")
    if not isinstance(outputs, list) or not outputs:
        raise InvalidInputError("'outputs' must be a non-empty list")
    context, _, question = text.rpartition("\n")
    passages = [part for part in split_passage(context) if part.strip()]
    if not passages:
        raise InvalidInputError("'input' has no context before its question line")
    documents = tuple(
        Document(text=passage, id=f"passage-{index:05d}") for index, passage in enumerate(passages)
    )
    values = [str(value) for value in outputs]
    tokens = sum(counter.count_many(passages))
    return Case(
        task="ruler",
        name=name,
        length=int(row.get("length") or tokens),
        tokens=tokens,
        depth=None,
        documents=documents,
        question=question.strip(),
        needles=tuple(values),
        answers=tuple(values),
        grading="facts",
        params={"facts": [{"needles": [value], "answer": value} for value in values]},
    )


def loaded_cell(case: Case) -> str:
    """The report cell of a loaded case: its format, and MRCR's needle count or the length."""
    if case.is_mrcr:
        return f"{case.task}-{case.params['n']}"
    if case.task == "ruler":
        return f"ruler · {size_label(case.length)}"
    return case.task


def _row_case(path: Path, number: int, row: Any, build: Any, counter: TokenCounter) -> Case:
    name = f"{path.stem}-r{number}"
    if not isinstance(row, Mapping):
        raise UnsupportedFileError(str(path), f"row {number}: not an object")
    try:
        case: Case = build(row, counter, name)
    except InvalidInputError as error:
        raise UnsupportedFileError(str(path), f"row {number}: {error.message}") from None
    return case


def _rows(path: Path, format_: str) -> Iterator[tuple[int, Any]]:
    if path.suffix.lower() == ".parquet":
        return _parquet_rows(path)
    if format_ == "gdm-mrcr":
        return _csv_rows(path)
    return _json_rows(path)


def _json_rows(path: Path) -> Iterator[tuple[int, Any]]:
    """Rows of a JSONL file, or of a JSON list (or one object, such as evalscope's
    rendering of an MRCR row under `sample_example.data`)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json":
        data = json.loads(text)
        data = data.get("sample_example", {}).get("data", data) if isinstance(data, dict) else data
        yield from enumerate(data if isinstance(data, list) else [data], start=1)
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as error:
                raise UnsupportedFileError(str(path), f"line {number}: {error.msg}") from None


def _csv_rows(path: Path) -> Iterator[tuple[int, Any]]:
    csv.field_size_limit(sys.maxsize)  # an MRCR v2 transcript is one field of megabytes
    with path.open(encoding="utf-8", newline="") as file:
        yield from enumerate(csv.DictReader(file), start=1)


def _parquet_rows(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        # By name: pyarrow is optional (not in the evals extra) and has no stubs here.
        parquet: Any = importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise UnsupportedFileError(
            str(path), "reading parquet needs pyarrow; or convert the rows to JSONL first"
        ) from None
    table = parquet.read_table(path)  # pragma: no cover - pyarrow is not installed here
    yield from enumerate(table.to_pylist(), start=1)  # pragma: no cover


def _limited(rows: Iterator[tuple[int, Any]], limit: int | None) -> Iterator[tuple[int, Any]]:
    for count, row in enumerate(rows):
        if limit is not None and count >= limit:
            return
        yield row


def _field(row: Mapping[str, Any], name: str) -> Any:
    if row.get(name) in (None, ""):
        raise InvalidInputError(f"no {name!r} field")
    return row[name]


def openai_mrcr_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI MRCR row with its `messages` parsed; evalscope's rendering (`input`,
    `target`, `metadata` as a Python literal) is mapped onto the dataset's field names."""
    fields = dict(row)
    if "target" in fields and "answer" not in fields:
        metadata = fields.get("metadata") or {}
        metadata = ast.literal_eval(metadata) if isinstance(metadata, str) else metadata
        fields = {**fields, **dict(metadata), "answer": fields["target"]}
    fields["messages"] = _messages(fields)
    return fields


def _messages(row: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    """The chat messages of an OpenAI MRCR row: `prompt`, a JSON string (the dataset), or
    evalscope's `input`, a Python literal of `{id, content}` messages in turn order: the
    few-shot message, then request and reply in turn, as in the dataset's `prompt`."""
    if "prompt" in row:
        messages = row["prompt"]
        messages = json.loads(messages) if isinstance(messages, str) else messages
    else:
        listed = ast.literal_eval(str(row.get("input", "[]")))
        messages = [
            {"role": "assistant" if index and index % 2 == 0 else "user", "content": m["content"]}
            for index, m in enumerate(item for item in listed if isinstance(item, dict))
        ]
    if not isinstance(messages, list) or len(messages) < 2:
        raise InvalidInputError("'prompt' must hold the conversation and the question")
    return messages
