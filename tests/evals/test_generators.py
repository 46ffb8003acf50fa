"""The case generators: deterministic under a seed, planting exactly the needles they claim."""

from __future__ import annotations

import re

import pytest

from windowpack.errors import InvalidArgumentError
from windowpack.evals import RULER_TASKS, Case, Haystack, mrcr_case, niah_case, ruler_case
from windowpack.evals.mrcr import request
from windowpack.text.tokens import TokenCounter

MAGIC = re.compile(r"One of the special magic (?:number|uuid)s for \S+ is: \S+\.")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def _text(case: Case) -> str:
    return "\n\n".join(document.text for document in case.documents)


@pytest.mark.parametrize("depth", [0.0, 0.3, 0.5, 1.0])
def test_niah_plants_one_needle_at_its_depth(
    small_haystack: Haystack, counter: TokenCounter, depth: float
) -> None:
    case = niah_case(small_haystack, counter, length=6000, depth=depth, seed=3)
    text = _text(case)
    assert MAGIC.findall(text) == [case.needles[0]]
    assert case.answers[0] in case.needles[0] and case.params["keys"][0] in case.question
    at = text.index(case.needles[0])
    assert abs(counter.count(text[:at]) / counter.count(text) - depth) < 0.05
    # At a sentence boundary: the start of the text, or after a sentence end and a space.
    assert at == 0 or text[at - 2 : at] == ". "
    assert case.tokens <= 6000


def test_niah_is_deterministic_under_a_seed(
    small_haystack: Haystack, counter: TokenCounter
) -> None:
    first = niah_case(small_haystack, counter, length=4000, depth=0.5, seed=1)
    again = niah_case(small_haystack, counter, length=4000, depth=0.5, seed=1)
    other = niah_case(small_haystack, counter, length=4000, depth=0.5, seed=2)
    assert first == again
    assert first.needles != other.needles


def test_niah_repeats_a_short_haystack_to_reach_the_length(
    small_haystack: Haystack, counter: TokenCounter
) -> None:
    length = 2 * small_haystack.total_tokens(counter) + 500
    case = niah_case(small_haystack, counter, length=length, depth=0.9, seed=0)
    assert length - 50 <= case.tokens <= length
    assert len(MAGIC.findall(_text(case))) == 1


def test_a_depth_outside_0_to_100_percent_is_named(
    small_haystack: Haystack, counter: TokenCounter
) -> None:
    with pytest.raises(InvalidArgumentError, match="'depths'"):
        niah_case(small_haystack, counter, length=2000, depth=1.5, seed=0)


@pytest.mark.parametrize(
    ("task", "planted", "asked"),
    [
        ("multikey-number", 8, 1),
        ("multikey-uuid", 8, 1),
        ("multivalue", 4, 4),
        ("multiquery", 4, 4),
    ],
)
def test_ruler_plants_exactly_its_needles(
    small_haystack: Haystack, counter: TokenCounter, task: str, planted: int, asked: int
) -> None:
    case = ruler_case(small_haystack, counter, task=task, length=8000, seed=5)
    found = MAGIC.findall(_text(case))
    assert len(found) == planted == case.params["planted"]
    assert len(case.needles) == asked and set(case.needles) <= set(found)
    assert all(found.count(needle) == 1 for needle in case.needles)
    assert all(key in case.question for key in case.params["keys"])
    if task == "multivalue":
        assert len(case.params["keys"]) == 1  # one key, four values
    if task == "multikey-uuid":
        assert UUID.match(case.params["keys"][0]) and UUID.match(case.answers[0])
    if task == "multikey-number":
        assert case.params["keys"][0].isdigit() and case.answers[0].isdigit()
    assert ruler_case(small_haystack, counter, task=task, length=8000, seed=5) == case


def test_ruler_tasks_are_the_four_documented() -> None:
    assert RULER_TASKS == ("multikey-number", "multikey-uuid", "multivalue", "multiquery")


@pytest.mark.parametrize("needles", [2, 4, 8])
def test_mrcr_conversation_holds_exactly_n_identical_requests(
    small_haystack: Haystack, counter: TokenCounter, needles: int
) -> None:
    case = mrcr_case(small_haystack, counter, length=12_000, needles=needles, seed=9)
    assert case.conversation is not None
    params = case.params
    asked = request(params["format"], params["topic"])
    users = [m["content"] for m in case.conversation if m["role"] == "user"]
    assert users.count(asked) == needles
    # The k-th reply after the asked request is the answer, with the random prefix.
    replies = [
        case.conversation[i + 1]["content"]
        for i, message in enumerate(case.conversation)
        if message["role"] == "user" and message["content"] == asked
    ]
    assert list(case.needles) == replies and len(set(replies)) == needles
    assert 1 <= params["k"] <= needles
    assert case.answers[0] == params["prefix"] + replies[params["k"] - 1]
    assert re.fullmatch(r"[A-Za-z0-9]{10}", params["prefix"])
    assert case.question == (
        f"Prepend {params['prefix']} to the {_ordinal(params['k'])} (1 indexed) "
        f"{params['format']} about {params['topic']}. "
        "Do not include any other text in your response."
    )
    # Near misses: the same format about other topics and the same topic in other formats.
    assert sum(u.startswith(f"write a {params['format']} about ") for u in users) > needles
    assert sum(u.endswith(f" about {params['topic']}") for u in users) > needles
    assert users[0].startswith("Here are some examples of conversations")  # few-shot first
    assert case.tokens <= 12_000
    assert mrcr_case(small_haystack, counter, length=12_000, needles=needles, seed=9) == case


def _ordinal(k: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(k, f"{k}th")
