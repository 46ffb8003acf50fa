"""Repeated requests: ordinal questions get every matching turn, whole, in order, labelled."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.pack.repeats import Turn, content_terms, focus, parse_reference
from windowpack.pack.verbatim import UNIT_SHARE, unit_rule
from windowpack.text.tokens import get_token_counter

CONFIG = StoreConfig(embedder="hash", chunk_tokens=64)
WORDS = [
    "the",
    "sea",
    "was",
    "calm",
    "and",
    "the",
    "crew",
    "sang",
    "old",
    "songs",
    "about",
    "distant",
    "harbors",
    "and",
    "lost",
    "gold",
]
FORMATS = ["haiku", "limerick", "poem", "email"]
TOPICS = ["saffron", "tapirs", "glaciers"]
STYLES = ["pirate", "regal", "cowboy"]
ASKED = ("haiku", "saffron", "pirate")
NEEDLE_TURNS = (7, 23, 41)


def _reply(rng: random.Random, number: int) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(40, 90))]
    return " ".join(words) + f" (reply {number})"


def _keys(rng: random.Random, count: int) -> list[tuple[str, str, str]]:
    """Random keys, never the asked one except at the needle turns; near misses included."""
    keys = []
    for index in range(count):
        if index in NEEDLE_TURNS:
            keys.append(ASKED)
            continue
        key = (rng.choice(FORMATS), rng.choice(TOPICS), rng.choice(STYLES))
        keys.append(key if key != ASKED else ("haiku", "saffron", "regal"))
    return keys


def _transcript(seed: int = 1, count: int = 60) -> tuple[str, list[str]]:
    rng = random.Random(seed)
    keys = _keys(rng, count)
    keys[10] = ("limerick", "saffron", "pirate")  # near misses: one field differs
    keys[11] = ("haiku", "glaciers", "pirate")
    keys[12] = ("haiku", "saffron", "cowboy")
    turns, replies = [], []
    for index, (format_, topic, style) in enumerate(keys):
        reply = _reply(rng, index)
        replies.append(reply)
        turns.append(
            f"User: Write a {format_} about {topic} in {style} style.\n\nAssistant: {reply}"
        )
    return "A few examples first.\n\n" + "\n\n".join(turns), replies


@pytest.fixture(scope="module")
def chat(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[wp.Collection, list[str]]]:
    store = wp.open(tmp_path_factory.mktemp("repeats"), config=CONFIG)
    text, replies = _transcript()
    col = store.collection("chat")
    col.add_conversation(text, id="chat")
    yield col, replies
    store.close()


@pytest.mark.parametrize(
    ("question", "ordinal", "from_end", "every", "words"),
    [
        (
            "Prepend X to the 2nd (1 indexed) poem about tapirs. Do not.",
            2,
            None,
            False,
            "poem tapirs",
        ),
        (
            "the first haiku about saffron in a pirate style",
            1,
            None,
            False,
            "haiku saffron pirate style",
        ),
        ("Copy the last email about horses, please?", None, 1, False, "email horses"),
        ("What was the third time I asked about glaciers?", 3, None, False, "glaciers"),
        ("show every limerick about owls", None, None, True, "limerick owls"),
        ("the second-to-last riddle about Europa", None, 2, False, "riddle europa"),
        (
            "the eighth story about cities in a noir style",
            8,
            None,
            False,
            "story cities noir style",
        ),
    ],
)
def test_ordinal_references_are_parsed_from_plain_questions(
    question: str, ordinal: int | None, from_end: int | None, every: bool, words: str
) -> None:
    reference = parse_reference(question)
    assert reference is not None
    assert (reference.ordinal, reference.from_end, reference.every) == (ordinal, from_end, every)
    assert reference.terms == content_terms(words)


@pytest.mark.parametrize("question", ["What is a tapir?", "Summarize the chat.", "first, a"])
def test_a_question_without_an_ordinal_reference_pins_nothing(question: str) -> None:
    assert parse_reference(question) is None


def _turn(unit: int, request: str) -> Turn:
    return Turn(
        document=0, unit=unit, first_chunk=unit * 2, request=request, terms=content_terms(request)
    )


def test_exact_agreement_on_every_stated_field_and_nothing_more_makes_an_instance() -> None:
    turns = [
        _turn(0, "Write a haiku about saffron in pirate style."),
        _turn(1, "Write a haiku about saffron in cowboy style."),  # another style
        _turn(2, "Write a limerick about saffron in pirate style."),  # another format
        _turn(3, "Write a haiku about saffron rice in pirate style."),  # adds a qualifier
        _turn(4, "write a haiku about saffron in pirate style"),  # the same request
    ]
    chosen = focus(turns, "the 2nd haiku about saffron in a pirate style")
    assert chosen.labels == {(0, 0): "instance 1 of 2", (0, 4): "instance 2 of 2"}
    assert chosen.pins == (8, 0)  # the asked instance first, then the one before it
    # With the style unsaid, every style is an instance, in order.
    unsaid = focus(turns, "the last haiku about saffron")
    assert set(unsaid.labels) == {(0, 0), (0, 1), (0, 4)}
    assert unsaid.pins[0] == 8


def test_an_ordinal_question_gets_every_instance_whole_in_order_with_labels(
    chat: tuple[wp.Collection, list[str]],
) -> None:
    col, replies = chat
    window = col.pack(
        "Prepend Zq8 to the second haiku about saffron in a pirate style.", budget=3000
    )
    needles = [replies[i] for i in NEEDLE_TURNS]
    positions = [window.text.find(reply) for reply in needles]
    assert all(position >= 0 for position in positions) and positions == sorted(positions)
    labels = re.findall(r"\[turn (\d+) of \d+ · instance (\d) of (\d)", window.text)
    assert labels == [(str(i + 2), str(n), "3") for n, i in enumerate(NEEDLE_TURNS, start=1)]
    near = [replies[i] for i in (10, 11, 12)]
    assert not any(
        "instance" in item.text and reply in item.text for item in window.items for reply in near
    )


def test_at_a_tight_budget_the_asked_instance_comes_first(
    chat: tuple[wp.Collection, list[str]],
) -> None:
    col, replies = chat
    sizes = []
    for budget in range(400, 1600, 100):
        window = col.pack("the third haiku about saffron in a pirate style", budget=budget)
        present = [replies[i] in window.text for i in NEEDLE_TURNS]
        sizes.append(present)
        if any(present):
            assert present[2], budget  # the asked one is never the one missing
    assert sizes[-1] == [True, True, True]


def test_a_turn_is_whole_or_absent_unless_too_big_for_its_share_then_marked(
    chat: tuple[wp.Collection, list[str]],
) -> None:
    col, replies = chat
    counter = get_token_counter("o200k_base")
    cut = 0
    for budget in (60, 90, 120, 200, 300, 700, 1500, 3000):
        window = col.pack("songs about distant harbors and lost gold", budget=budget)
        for item in window.items:
            if item.kind != "chunk" or item.unit is None:
                continue
            reply = replies[item.unit - 1]
            if reply not in item.text:  # only a turn over its share may be cut, and it says so
                cut += 1  # (or one whose rest the window had no room left for)
                over = counter.count(reply) > UNIT_SHARE * unit_rule(budget)
                assert over or counter.count(reply) > budget - window.tokens, (budget, item.unit)
                # The marker of what is missing of it: "[…300 tokens of this turn]" or
                # "[…900 tokens, from this turn on]" (compact), "[... 300 tokens of this
                # turn left out ...]" (full).
                assert re.search(r"tokens(?: of|, from) this turn", window.text)
    assert cut > 0  # the smallest budget does cut some turn: the check above ran


def _tapir_chat() -> tuple[list[str], list[str]]:
    """40 turns of ~220 words; every fifth asks for a poem about tapirs: (turns, their replies
    to those 8 requests)."""
    rng = random.Random(9)
    turns, needles = [], []
    for index in range(40):
        reply = " ".join(rng.choice(WORDS) for _ in range(220)) + f" (reply {index})"
        request = "poem about tapirs" if index % 5 == 0 else f"note about item {index}"
        turns.append(f"User: write a {request}\n\nAssistant: {reply}")
        if index % 5 == 0:
            needles.append(reply)
    return turns, needles


def test_the_overview_yields_to_the_instances_an_ordinal_question_needs(
    tmp_path: Path,
) -> None:
    turns, needles = _tapir_chat()
    with wp.open(tmp_path / "store", config=CONFIG) as store:
        col = store.collection("chat")
        col.add_conversation("\n\n".join(turns), id="chat")
        counter = get_token_counter("o200k_base")
        # Room for the 8 turns with their headers, and not for an eighth of the budget more
        # (40 tokens a turn: its "full" header and the gap marker after it).
        needed = sum(counter.count(t) + 40 for i, t in enumerate(turns) if i % 5 == 0)
        budget = needed + 300
        overview = budget // 8
        plain = col.pack(
            "songs about distant harbors", budget=budget, headers="full", overview_tokens=overview
        )
        asked = col.pack(
            "the 8th poem about tapirs", budget=budget, headers="full", overview_tokens=overview
        )
    assert plain.cacheable_prefix_tokens > 0  # the overview asked for, for ordinary questions
    assert all(reply in asked.text for reply in needles)  # all 8, though they need the room
    assert asked.cacheable_prefix_tokens < plain.cacheable_prefix_tokens


@pytest.mark.parametrize("slack", [40, 80, 120, 200, 300])
def test_compact_windows_hold_every_instance_that_room_was_yielded_for(
    tmp_path: Path, slack: int
) -> None:
    """In compact windows too, the instances an ordinal question needs are all in when the
    budget holds them and their headers with `slack` tokens to spare: the allocator counts
    each one's label (`instance 2 of 8`), which its exactly costed compact header lacks,
    so that the exact count does not send it round again with less room and lose one."""
    turns, needles = _tapir_chat()
    with wp.open(tmp_path / "store", config=CONFIG) as store:
        col = store.collection("chat")
        col.add_conversation("\n\n".join(turns), id="chat")
        counter = get_token_counter("o200k_base")
        # Each turn, its compact header ("[turn 36 of 40 · instance 8 of 8]") and the marker
        # after it ("[…1,234 tokens]"), with the blank lines between.
        needed = sum(
            counter.count(f"[turn {i + 1} of 40 · instance {i // 5 + 1} of 8]\n{t}") + 10
            for i, t in enumerate(turns)
            if i % 5 == 0
        )
        asked = col.pack("the 8th poem about tapirs", budget=needed + slack)
    assert all(reply in asked.text for reply in needles), [r in asked.text for r in needles]
