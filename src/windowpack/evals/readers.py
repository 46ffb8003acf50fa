"""Readers turn a window and a question into a reply, and scoring turns a reply into a number.

`DeterministicReader` answers from the window alone, with no model: for NIAH and RULER it
reads the values stated for the asked keys, for MRCR it finds the k-th copy of the asked
request in the window and returns the reply after it, with the random prefix. Whatever it
cannot see it cannot answer, so its score bounds what any LLM reader could do with that
window. `OpenAIReader` asks a real model through an OpenAI-compatible endpoint; both are
graded by `score_reply`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Protocol

from windowpack.errors import InvalidArgumentError, MissingDependencyError
from windowpack.evals.cases import Case
from windowpack.evals.mrcr import grade_mrcr, request

if TYPE_CHECKING:
    import httpx

# Where a reply in a window ends: the next turn, or a windowpack header, summary or gap line.
_REPLY_END = re.compile(r"\n\n(?:user: |\[(?:chunks? |turns? |summary |\.\.\. )|## |# )")
# A windowpack summary block, up to the next block. Extracted sentences can hold a request
# and the start of its reply; a reader copying a reply wants the verbatim turns only.
_SUMMARY_BLOCK = re.compile(r"(?:^|\n)\[summary [^\n]*\].*?(?=\n\n(?:\[|## |# )|\Z)", re.S)


class Reader(Protocol):
    """Answers `case.question` from `context` (a window's text)."""

    name: str

    def answer(self, case: Case, context: str) -> str: ...


class DeterministicReader:
    """A model-free reader: an upper bound on what a reader can get from a window."""

    name = "deterministic"

    def answer(self, case: Case, context: str) -> str:
        if case.conversation is not None:
            return _mrcr_reply(case, context)
        values = [
            match.group(1)
            for key in case.params["keys"]
            for match in _needle_pattern(str(case.params["kind"]), str(key)).finditer(context)
        ]
        return ", ".join(dict.fromkeys(values))


def _needle_pattern(kind: str, key: str) -> re.Pattern[str]:
    return re.compile(rf"special magic {kind}s for {re.escape(key)} is: (\S+?)\.(?:\s|$)")


def _mrcr_reply(case: Case, context: str) -> str:
    params = case.params
    context = _SUMMARY_BLOCK.sub("", context)
    asked = re.escape(f"user: {request(params['format'], params['topic'])}\n\nassistant: ")
    starts = [match.end() for match in re.finditer(rf"(?:^|\n){asked}", context)]
    prefix = str(params["prefix"])
    if len(starts) < int(params["k"]):
        return prefix  # the k-th copy is not in the window: nothing to copy
    start = starts[int(params["k"]) - 1]
    end = _REPLY_END.search(context, start)
    return prefix + context[start : end.start() if end else len(context)].strip()


def score_reply(case: Case, reply: str) -> float:
    """MRCR: the official rule (`grade_mrcr`). NIAH/RULER: the share of the expected values
    that appear in the reply (RULER's string-match-all)."""
    if case.conversation is not None:
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
            "messages": [
                {
                    "role": "system",
                    "content": "Answer the question from the context alone, as briefly as it "
                    "allows.",
                },
                {"role": "user", "content": f"{context}\n\n{case.question}"},
            ],
        }
        response = self._client.post("/chat/completions", json=payload)
        response.raise_for_status()
        return str(response.json()["choices"][0]["message"]["content"])
