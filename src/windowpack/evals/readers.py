"""Readers turn a window and a question into a reply, and scoring turns a reply into a number.

`DeterministicReader` answers from the window alone, with no model: for NIAH and RULER it
reads the values stated for the asked keys; for the fact tasks (associative, multi-hop,
aggregation) it gives a fact's answer when every sentence the fact needs is in the window
(a reader that knows Dresden has the Semperoper, and chains two facts, needs no more); for
MRCR it finds the k-th instance of the asked request in the window (by a passage header's
instance label where the window has them, as any LLM reader could read them, else by
counting copies of the request in window order) and returns the reply after it, with the
random prefix. Whatever it cannot see it cannot answer, so its score bounds what any LLM
reader could do with that window. `OpenAIReader` asks a real model through an
OpenAI-compatible endpoint, and `LlamaCppReader` (evals.local_reader) one in process, with the
same messages (`reader_messages`); all are graded by `score_reply`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from windowpack.errors import InvalidArgumentError, MissingDependencyError
from windowpack.evals.cases import Case, normalise_whitespace
from windowpack.evals.mrcr import grade_mrcr, request
from windowpack.evals.mrcr_gdm import grade_mrcr_gdm

if TYPE_CHECKING:
    import httpx

# Where a reply in a window ends: the next turn, or a windowpack header, summary or gap line.
_REPLY_END = re.compile(r"\n\n(?:[Uu]ser: |\[(?:chunks? |turns? |summary |\.\.\. |\u2026)|## |# )")
# A windowpack summary block, up to the next block. Extracted sentences can hold a request
# and the start of its reply; a reader copying a reply wants the verbatim turns only.
_SUMMARY_BLOCK = re.compile(r"(?:^|\n)\[summary [^\n]*\].*?(?=\n\n(?:\[|## |# )|\Z)", re.S)
# A passage header's instance label, `[turn 45 of 150 · instance 2 of 4 · chars ...]`.
_INSTANCE = re.compile(r"\binstance (\d+) of \d+\b")


READER_INSTRUCTION = "Answer the question from the context alone, as briefly as it allows."


class Reader(Protocol):
    """Answers `case.question` from `context` (a window's text)."""

    name: str

    def answer(self, case: Case, context: str) -> str: ...


@runtime_checkable
class BoundedReader(Reader, Protocol):
    """A reader with a context limit: it answers "" for a window it cannot read whole, and
    says so beforehand, so that the report can count such windows apart."""

    def fits(self, case: Case, context: str) -> bool: ...


def reader_messages(case: Case, context: str) -> list[dict[str, str]]:
    """The chat an LLM reader is given: the instruction, then the window and the question."""
    return [
        {"role": "system", "content": READER_INSTRUCTION},
        {"role": "user", "content": f"{context}\n\n{case.question}"},
    ]


class DeterministicReader:
    """A model-free reader: an upper bound on what a reader can get from a window."""

    name = "deterministic"

    def answer(self, case: Case, context: str) -> str:
        if case.is_mrcr:
            return _mrcr_reply(case, context)
        if case.grading == "facts":
            return _facts_reply(case, context)
        values = [
            match.group(1)
            for key in case.params["keys"]
            for match in _needle_pattern(str(case.params["kind"]), str(key)).finditer(context)
        ]
        return ", ".join(dict.fromkeys(values))


def _facts_reply(case: Case, context: str) -> str:
    """The answers of the facts whose sentences are all in `context`."""
    text = normalise_whitespace(context)
    answers = [
        str(fact["answer"])
        for fact in case.params["facts"]
        if all(normalise_whitespace(needle) in text for needle in fact["needles"])
    ]
    return ", ".join(answers)


def _needle_pattern(kind: str, key: str) -> re.Pattern[str]:
    return re.compile(rf"special magic {kind}s for {re.escape(key)} is: (\S+?)\.(?:\s|$)")


def _mrcr_reply(case: Case, context: str) -> str:
    """The k-th instance's reply copied from the window, after the random prefix: the
    passage whose header labels it instance k when a window labels instances, else the k-th
    copy of the asked request in window order. Only the prefix when it is not there."""
    params = case.params
    prefix, k = str(params["prefix"]), int(params["k"])
    context = _SUMMARY_BLOCK.sub("", context)
    starts = _reply_starts(case, context)
    labelled = [start for start, label in starts if label is not None]
    chosen = [start for start, label in starts if label == k]
    if chosen:
        start = chosen[0]
    elif not labelled and len(starts) >= k:
        start = starts[k - 1][0]
    else:
        return prefix  # the k-th instance is not in the window: nothing to copy
    end = _REPLY_END.search(context, start)
    reply = context[start : end.start() if end else len(context)].strip()
    # GDM's answers put a space after the random string (its few-shot answers do).
    return f"{prefix} {reply}" if case.grading == "mrcr-gdm" else prefix + reply


def _reply_starts(case: Case, context: str) -> list[tuple[int, int | None]]:
    """Where each copy of the asked request's reply starts in `context`, with the instance
    number of the passage header right above the request, if it has one."""
    params = case.params
    if case.grading == "mrcr-gdm":
        turn = f"User: {params['request']}\n\nAssistant: "
    else:
        turn = f"user: {request(params['format'], params['topic'])}\n\nassistant: "
    pattern = re.compile(rf"(?:^|\n)(?:(\[[^\]\n]*\])\n)?{re.escape(turn)}")
    starts: list[tuple[int, int | None]] = []
    for match in pattern.finditer(context):
        label = _INSTANCE.search(match.group(1) or "")
        starts.append((match.end(), int(label.group(1)) if label else None))
    return starts


def llm_reply(reader: Reader, case: Case, context: str) -> dict[str, Any]:
    """The row fields of a real reader's answer: `llm_score`, and `llm_unread` when a
    `BoundedReader` could not read the window (its "" is scored as any reply)."""
    if isinstance(reader, BoundedReader) and not reader.fits(case, context):
        return {"llm_score": score_reply(case, ""), "llm_unread": True}
    return {"llm_score": score_reply(case, reader.answer(case, context))}


def score_reply(case: Case, reply: str) -> float:
    """MRCR: the official rule of the case's shape (`grade_mrcr`, `grade_mrcr_gdm`).
    NIAH/RULER: the share of the expected values in the reply (RULER's string-match-all)."""
    if case.grading == "mrcr-gdm":
        return grade_mrcr_gdm(reply, case.answers[0])
    if case.grading == "mrcr-openai":
        return grade_mrcr(reply, case.answers[0], str(case.params["prefix"]))
    return sum(value in reply for value in case.answers) / len(case.answers)


class OpenAIReader:
    """A real LLM reader over an OpenAI-compatible `/chat/completions` endpoint."""

    name = "llm"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout: float = 120.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        """`transport` replaces the network (tests pass an `httpx.MockTransport`)."""
        if not base_url.startswith(("http://", "https://")):
            raise InvalidArgumentError("reader-url", f"must be an http(s) URL, got {base_url!r}")
        try:
            import httpx
        except ImportError as error:  # pragma: no cover - httpx ships with the evals extra
            raise MissingDependencyError("httpx", "evals") from error
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model = model
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport
        )

    def answer(self, case: Case, context: str) -> str:
        payload: dict[str, Any] = {
            "model": self.model,
            "temperature": 0,
            "messages": reader_messages(case, context),
        }
        response = self._client.post("/chat/completions", json=payload)
        response.raise_for_status()
        return str(response.json()["choices"][0]["message"]["content"])
