"""The deterministic reader answers from the window alone; replies are scored per task."""

from __future__ import annotations

import httpx
import pytest

from windowpack.errors import InvalidArgumentError
from windowpack.evals import (
    Case,
    DeterministicReader,
    Haystack,
    OpenAIReader,
    generated_haystack,
    mrcr_case,
    niah_case,
    ruler_case,
    score_reply,
)
from windowpack.evals.mrcr import request
from windowpack.evals.mrcr_gdm import gdm_mrcr_case
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


@pytest.fixture(scope="module")
def gdm_case(counter: TokenCounter) -> Case:
    """A v2-shaped case whose asked request has 4 instances; the question asks for the 3rd."""
    haystack = generated_haystack(seed=3)
    case = next(
        case
        for seed in range(50)
        if (case := gdm_mrcr_case(haystack, counter, length=32_000, needles=4, seed=seed))
        and case.params["k"] == 3
    )
    return case


def _gdm_turn(number: int, case: Case, reply: str, label: str = "") -> str:
    header = f"[turn {number} of 90{label} · chars 0-10]"
    return f"{header}\nUser: {case.params['request']}\n\nAssistant: {reply}"


def test_gdm_reader_copies_the_kth_copy_of_the_request(gdm_case: Case) -> None:
    turns = [_gdm_turn(i * 5 + 3, gdm_case, reply) for i, reply in enumerate(gdm_case.needles)]
    window = "\n\n[... 900 tokens left out ...]\n\n".join(turns)
    reply = DeterministicReader().answer(gdm_case, window)
    assert reply == gdm_case.answers[0] and score_reply(gdm_case, reply) == 1.0
    assert gdm_case.ordinal_complete(window) is True


def test_gdm_reader_reads_instance_labels_when_a_window_has_them(gdm_case: Case) -> None:
    # Instances 1 and 2 are missing; the labels still say which copy is the 3rd.
    turns = [
        _gdm_turn(40, gdm_case, gdm_case.needles[2], " · instance 3 of 4"),
        _gdm_turn(60, gdm_case, gdm_case.needles[3], " · instance 4 of 4"),
    ]
    window = "\n\n".join(turns)
    assert DeterministicReader().answer(gdm_case, window) == gdm_case.answers[0]
    assert gdm_case.ordinal_complete(window) is False  # the earlier instances are not there
    # Without labels the same window's 3rd copy does not exist: nothing to copy.
    unlabelled = "\n\n".join(_gdm_turn(n, gdm_case, r) for n, r in ((40, "x"), (60, "y")))
    assert DeterministicReader().answer(gdm_case, unlabelled) == gdm_case.params["prefix"]


def test_gdm_reader_with_labels_but_not_the_asked_one_copies_nothing(gdm_case: Case) -> None:
    window = _gdm_turn(40, gdm_case, gdm_case.needles[1], " · instance 2 of 4")
    reply = DeterministicReader().answer(gdm_case, window)
    assert reply == gdm_case.params["prefix"] and score_reply(gdm_case, reply) < 0.05


def test_gdm_reader_over_the_whole_transcript_scores_one(gdm_case: Case) -> None:
    text = gdm_case.documents[0].text
    assert score_reply(gdm_case, DeterministicReader().answer(gdm_case, text)) == 1.0
    assert gdm_case.ordinal_complete(text) is True


def test_a_partial_reply_scores_in_between(gdm_case: Case) -> None:
    needles = gdm_case.needles
    cut = needles[2][: len(needles[2]) // 2]
    turns = [_gdm_turn(i, gdm_case, r) for i, r in enumerate([*needles[:2], cut])]
    window = "\n\n".join(turns) + "\n\n[... 120 tokens left out ...]"
    score = score_reply(gdm_case, DeterministicReader().answer(gdm_case, window))
    assert 0.5 < score < 0.8
    assert gdm_case.ordinal_complete(window) is False


def test_ordinal_complete_needs_every_instance_up_to_k_in_order(gdm_case: Case) -> None:
    first, second, third, fourth = gdm_case.needles
    assert gdm_case.ordinal_complete(f"{first}\n\n{second}\n\n{third}") is True
    assert gdm_case.ordinal_complete(f"{first}\n\n{third}\n\n{fourth}") is False
    assert gdm_case.ordinal_complete(f"{second}\n\n{first}\n\n{third}") is False  # order
    # Whitespace runs compare equal: a baseline joins chunks with a blank line.
    spaced = " ".join(part.replace("\n\n", "\n\n\n") for part in (first, second, third))
    assert gdm_case.ordinal_complete(spaced) is True


def test_ordinal_complete_is_none_outside_mrcr(
    small_haystack: Haystack, counter: TokenCounter
) -> None:
    case = niah_case(small_haystack, counter, length=2000, depth=0.0, seed=0)
    assert case.ordinal_complete(case.documents[0].text) is None
