"""The deterministic reader answers from the window alone; replies are scored per task."""

from __future__ import annotations

import httpx
import pytest

from windowpack.errors import InvalidArgumentError
from windowpack.evals import (
    DeterministicReader,
    Haystack,
    OpenAIReader,
    mrcr_case,
    niah_case,
    ruler_case,
    score_reply,
)
from windowpack.evals.mrcr import request
from windowpack.text.tokens import TokenCounter


def test_niah_reader_reads_the_value_of_the_asked_key(
    small_haystack: Haystack, counter: TokenCounter
) -> None:
    case = niah_case(small_haystack, counter, length=3000, depth=0.5, seed=0)
    window = f"[chunks 3-4 of 9 · chars 10-90]\nSome text. {case.needles[0]} More text."
    reply = DeterministicReader().answer(case, window)
    assert reply == case.answers[0] and score_reply(case, reply) == 1.0
    assert score_reply(case, DeterministicReader().answer(case, "no needle here")) == 0.0


def test_multivalue_scores_the_share_of_values_found(
    small_haystack: Haystack, counter: TokenCounter
) -> None:
    case = ruler_case(small_haystack, counter, task="multivalue", length=5000, seed=0)
    window = " ".join(case.needles[:3])
    assert score_reply(case, DeterministicReader().answer(case, window)) == 0.75


def test_multikey_reader_ignores_distractor_keys(
    small_haystack: Haystack, counter: TokenCounter
) -> None:
    case = ruler_case(small_haystack, counter, task="multikey-uuid", length=5000, seed=0)
    distractor = "One of the special magic uuids for 0000 is: 1111."
    reply = DeterministicReader().answer(case, f"{distractor} {case.needles[0]}")
    assert reply == case.answers[0]


def _turn(number: int, request_text: str, reply: str) -> str:
    return f"[turn {number} of 40 · chars 0-10]\nuser: {request_text}\n\nassistant: {reply}"


def test_mrcr_reader_copies_the_kth_reply_of_a_windowpack_window(
    small_haystack: Haystack, counter: TokenCounter
) -> None:
    case = mrcr_case(small_haystack, counter, length=8000, needles=4, seed=2)
    params = case.params
    asked = request(params["format"], params["topic"])
    turns = [_turn(i * 3 + 2, asked, reply) for i, reply in enumerate(case.needles)]
    # A summary quoting the request and a reply's start must not count as a copy.
    quoted = f"user: {asked}\n\nassistant: Words from an extracted sentence."
    window = f"# Overview\n\n[summary (level 1) of chunks 1-4 of 9]\n{quoted}\n\n"
    window += "\n\n[... 300 tokens left out ...]\n\n".join(turns)
    reply = DeterministicReader().answer(case, window)
    assert reply == case.answers[0] and score_reply(case, reply) == 1.0


def test_mrcr_reader_without_the_kth_copy_answers_only_the_prefix(
    small_haystack: Haystack, counter: TokenCounter
) -> None:
    case = mrcr_case(small_haystack, counter, length=8000, needles=2, seed=2)
    window = _turn(1, "write a poem about nothing", "a reply")
    reply = DeterministicReader().answer(case, window)
    assert reply == case.params["prefix"] and score_reply(case, reply) == 0.0


def test_openai_reader_posts_the_window_and_question(
    small_haystack: Haystack, counter: TokenCounter
) -> None:
    case = niah_case(small_haystack, counter, length=2000, depth=0.0, seed=0)
    seen: list[dict[str, object]] = []

    def handler(http_request: httpx.Request) -> httpx.Response:
        import json

        seen.append(json.loads(http_request.content))
        assert http_request.url.path == "/v1/chat/completions"
        assert http_request.headers["Authorization"] == "Bearer sk-test"
        answer = f"The number is {case.answers[0]}."
        return httpx.Response(200, json={"choices": [{"message": {"content": answer}}]})

    reader = OpenAIReader(
        "http://reader.test/v1",
        "small-model",
        api_key="sk-test",
        transport=httpx.MockTransport(handler),
    )
    reply = reader.answer(case, "the window text")
    assert score_reply(case, reply) == 1.0
    body = seen[0]
    assert body["model"] == "small-model"
    assert "the window text" in str(body["messages"]) and case.question in str(body["messages"])


def test_reader_url_must_be_http() -> None:
    with pytest.raises(InvalidArgumentError, match="'reader-url'"):
        OpenAIReader("localhost:8000", "m")
