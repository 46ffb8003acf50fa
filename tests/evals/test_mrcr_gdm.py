"""The GDM-MRCR-v2-shaped generator plants exactly what it claims; its grade is v2's rule."""

from __future__ import annotations

import re
from collections import Counter
from difflib import SequenceMatcher

import pytest

from windowpack.documents.conversation import transcript_turns
from windowpack.errors import InvalidArgumentError
from windowpack.evals import Case, Haystack, generated_haystack
from windowpack.evals.mrcr_gdm import INDEX_NAMES, Key, gdm_mrcr_case, grade_mrcr_gdm
from windowpack.evals.mrcr_words import FEW_SHOT
from windowpack.text.tokens import TokenCounter

REQUEST = re.compile(r"^User: Write a (.+) about (.+) in (.+) style\.$", re.M)
TURN = re.compile(r"User: (Write a [^\n]+ style\.)\n\nAssistant: (.*?)(?=\n\nUser: |\Z)", re.S)


@pytest.fixture(scope="module")
def haystack() -> Haystack:
    """~100K tokens of generated prose: a pool of a few hundred 200-700-token replies."""
    return generated_haystack(seed=3)


def _turns(case: Case) -> list[tuple[Key, str]]:
    """(key, reply) of every turn after the few-shot preamble, in conversation order."""
    text = case.documents[0].text
    assert text.startswith(FEW_SHOT)
    body = text[len(FEW_SHOT) :]
    turns = []
    for match in TURN.finditer(body):
        found = REQUEST.match(f"User: {match.group(1)}")
        assert found is not None
        turns.append((Key(*found.groups()), match.group(2)))
    return turns


def _asked(case: Case) -> Key:
    return Key(case.params["format"], case.params["topic"], case.params["style"])


@pytest.mark.parametrize(("needles", "length"), [(2, 32_000), (4, 64_000), (8, 128_000)])
def test_plants_exactly_its_keys_near_misses_and_fillers(
    haystack: Haystack, counter: TokenCounter, needles: int, length: int
) -> None:
    case = gdm_mrcr_case(haystack, counter, length=length, needles=needles, seed=11)
    turns = _turns(case)
    asked = _asked(case)
    counts = Counter(key for key, _ in turns)
    planted = case.params["planted"]
    assert counts[asked] == needles == planted[asked.label()]
    assert {key.label(): counts[key] for key in counts if key.label() in planted} == planted
    groups = [key for key in counts if key.label() in case.params["groups"]]
    assert len(groups) == 3 and all(counts[key] == needles for key in groups)
    for field, labels in case.params["near_misses"].items():
        near = [key for key in counts if key.label() in labels]
        assert len(near) == 2 and all(1 <= counts[key] <= needles for key in near)
        # Exactly one field differs from the asked key: the one the near miss is named for.
        assert all(
            [
                name
                for name in ("format", "topic", "style")
                if getattr(key, name) != getattr(asked, name)
            ]
            == [field]
            for key in near
        )
    planted_keys = {key for key in counts if key.label() in planted}
    fillers = [key for key in counts if key not in planted_keys]
    assert fillers, "a conversation has filler turns"
    assert all(key.differences(other) >= 2 for key in fillers for other in planted_keys)
    assert len(turns) == case.params["turns"]


def test_cases_of_several_needle_counts_can_share_one_conversation(
    haystack: Haystack, counter: TokenCounter
) -> None:
    cases = {
        n: gdm_mrcr_case(haystack, counter, length=128_000, needles=n, seed=3, together=(2, 4, 8))
        for n in (2, 4, 8)
    }
    texts = {case.documents[0].text for case in cases.values()}
    assert len(texts) == 1  # one conversation, ingested once for the three cases
    turns = _turns(cases[2])
    counts = Counter(key for key, _ in turns)
    asked = {n: _asked(case) for n, case in cases.items()}
    assert {n: counts[key] for n, key in asked.items()} == {2: 2, 4: 4, 8: 8}
    assert all(a.differences(b) == 3 for a in asked.values() for b in asked.values() if a != b)
    planted_keys = {key for key in counts if key.label() in cases[2].params["planted"]}
    for n, case in cases.items():
        assert case.task == f"mrcr-gdm-{n}" and len(case.needles) == n
        assert sorted(case.params["other_asked"]) == sorted(
            key.label() for m, key in asked.items() if m != n
        )
        near = [
            key
            for key in counts
            if any(key.label() in v for v in case.params["near_misses"].values())
        ]
        assert len(near) == 6
        assert all(key.differences(asked[n]) == 1 for key in near)
        # A near miss of one asked key is no near miss of another.
        assert all(key.differences(asked[m]) == 3 for key in near for m in asked if m != n)
        assert all(1 <= counts[key] <= n for key in near)
    fillers = [key for key in counts if key not in planted_keys]
    assert all(key.differences(other) >= 2 for key in fillers for other in planted_keys)
    assert len({case.question for case in cases.values()}) == 3
    # Asked alone, a count gets a conversation of its own.
    alone = gdm_mrcr_case(haystack, counter, length=128_000, needles=2, seed=3)
    assert alone.documents[0].text not in texts and "other_asked" in alone.params
    assert alone.params["other_asked"] == []


def test_replies_are_200_to_700_tokens_and_planted_ones_are_used_once(
    haystack: Haystack, counter: TokenCounter
) -> None:
    case = gdm_mrcr_case(haystack, counter, length=64_000, needles=8, seed=4)
    turns = _turns(case)
    assert all(200 <= counter.count(reply) <= 700 for _, reply in turns)
    planted = case.params["planted"]
    planted_replies = [reply for key, reply in turns if key.label() in planted]
    text = case.documents[0].text
    assert len(set(planted_replies)) == len(planted_replies)
    assert all(text.count(reply) == 1 for reply in planted_replies)
    # The needles are the asked key's replies in conversation order; k picks the answer.
    asked = _asked(case)
    assert list(case.needles) == [reply for key, reply in turns if key == asked]
    k = case.params["k"]
    assert case.answers == (f"{case.params['prefix']} {case.needles[k - 1]}",)


def test_a_short_conversation_plants_fewer_near_misses_and_groups(
    haystack: Haystack, counter: TokenCounter
) -> None:
    case = gdm_mrcr_case(haystack, counter, length=16_000, needles=4, seed=1)
    turns = _turns(case)
    planted = case.params["planted"]
    assert planted[_asked(case).label()] == 4
    near = sum(len(labels) for labels in case.params["near_misses"].values())
    assert near + len(case.params["groups"]) < 3 * 2 + 3
    planted_tokens = sum(counter.count(r) for key, r in turns if key.label() in planted)
    assert planted_tokens <= 0.5 * 16_000
    assert Counter(key.label() for key, _ in turns if key.label() in planted) == planted


def test_question_answer_and_length(haystack: Haystack, counter: TokenCounter) -> None:
    case = gdm_mrcr_case(haystack, counter, length=32_000, needles=4, seed=2)
    params = case.params
    assert re.fullmatch(r"[A-Za-z0-9]{12}", params["prefix"])
    assert 1 <= params["k"] <= 4
    assert case.question == (
        f"Prepend {params['prefix']} to the {INDEX_NAMES[params['k'] - 1]} {params['format']} "
        f"about {params['topic']} in a {params['style']} style. "
        "Do not include any other text in your response."
    )
    text = case.documents[0].text
    assert case.tokens == counter.count(text)
    assert 0.99 * 32_000 <= case.tokens <= 32_000
    # A transcript document: its units are the few-shot block's turns and every turn.
    document = case.documents[0]
    assert document.kind == "conversation"
    assert document.units == transcript_turns(text)
    preamble_units = len(re.findall(r"^User: ", FEW_SHOT, re.M)) + 1  # + its opening line
    assert len(transcript_turns(text)) == params["turns"] + preamble_units
    assert case.task == "mrcr-gdm-4" and case.grading == "mrcr-gdm"


def test_deterministic_under_a_seed(haystack: Haystack, counter: TokenCounter) -> None:
    first = gdm_mrcr_case(haystack, counter, length=16_000, needles=2, seed=5)
    assert gdm_mrcr_case(haystack, counter, length=16_000, needles=2, seed=5) == first
    other = gdm_mrcr_case(haystack, counter, length=16_000, needles=2, seed=6)
    assert other.documents[0].text != first.documents[0].text
    assert other.params["prefix"] != first.params["prefix"]


def test_bad_sizes_name_the_option(haystack: Haystack, counter: TokenCounter) -> None:
    with pytest.raises(InvalidArgumentError, match="'lengths'"):
        gdm_mrcr_case(haystack, counter, length=3_000, needles=8, seed=0)
    with pytest.raises(InvalidArgumentError, match="'needles'"):
        gdm_mrcr_case(haystack, counter, length=64_000, needles=9, seed=0)


def test_too_small_a_haystack_is_named(counter: TokenCounter) -> None:
    tiny = generated_haystack(seed=1, chars=8_000)
    with pytest.raises(InvalidArgumentError, match="'haystack'"):
        gdm_mrcr_case(tiny, counter, length=64_000, needles=8, seed=0)


@pytest.mark.shared
def test_a_million_token_conversation_of_the_essays(
    essay_haystack: Haystack, counter: TokenCounter
) -> None:
    case = gdm_mrcr_case(essay_haystack, counter, length=1 << 20, needles=8, seed=0)
    assert 0.995 * (1 << 20) <= case.tokens <= 1 << 20
    assert len(case.needles) == 8 and len(set(case.needles)) == 8
    assert case.params["turns"] > 2_000


PREFIX = "aB3dE5gH7jK9"
REPLY = "The tapir ambles down the bank,\nits snout a question mark of mud."


def test_grade_exact_copy_scores_one() -> None:
    assert grade_mrcr_gdm(f"{PREFIX} {REPLY}", f"{PREFIX} {REPLY}") == 1.0
    assert grade_mrcr_gdm(f"  {PREFIX}{REPLY}\n", f"{PREFIX} {REPLY}") == 1.0  # both stripped


def test_grade_without_the_random_string_is_zero() -> None:
    assert grade_mrcr_gdm(REPLY, f"{PREFIX} {REPLY}") == 0.0
    assert grade_mrcr_gdm("", f"{PREFIX} {REPLY}") == 0.0
    assert grade_mrcr_gdm(f"{PREFIX[:-1]} {REPLY}", f"{PREFIX} {REPLY}") == 0.0


def test_grade_half_the_text_is_two_thirds() -> None:
    answer = "abcdefghij" * 10
    assert grade_mrcr_gdm(f"{PREFIX} {answer[:50]}", f"{PREFIX} {answer}") == pytest.approx(
        2 / 3, abs=0.001
    )


def test_grade_reads_after_the_last_occurrence_of_the_string() -> None:
    # v2 keeps only what follows the last copy of the string, whatever came before it.
    prediction = f"{PREFIX} wrong start {PREFIX} {REPLY}"
    assert grade_mrcr_gdm(prediction, f"{PREFIX} {REPLY}") == 1.0
    other = f"{PREFIX} {REPLY.replace('mud', 'clay')}"
    expected = SequenceMatcher(a=REPLY, b=REPLY.replace("mud", "clay")).ratio()
    assert grade_mrcr_gdm(other, f"{PREFIX} {REPLY}") == pytest.approx(expected)
