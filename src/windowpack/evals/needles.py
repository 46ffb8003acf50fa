"""NIAH and RULER-style needle cases: seeded, each planting exactly the needles it lists.

Needles follow RULER's template, "One of the special magic {numbers|uuids} for {key} is:
{value}.", inserted whole at sentence boundaries of the haystack.

- `niah_case`: one needle at a given depth; the question asks for its value.
- `ruler_case`: `multikey-number` / `multikey-uuid` (one asked needle among same-template
  distractors with other keys), `multivalue` (one key, four values, all needed) and
  `multiquery` (four keys asked at once), needles at seeded random depths.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass

from windowpack.errors import InvalidArgumentError
from windowpack.evals.cases import Case
from windowpack.evals.haystack import Haystack
from windowpack.evals.planting import plant
from windowpack.text import TokenCounter

RULER_TASKS = ("multikey-number", "multikey-uuid", "multivalue", "multiquery")
MULTIKEY_NEEDLES = 8  # one asked, seven distractors with other keys
MULTIVALUE_NEEDLES = 4
MULTIQUERY_NEEDLES = 4

_ADJECTIVES = [
    "amber",
    "brisk",
    "calm",
    "dapper",
    "eager",
    "fuzzy",
    "gleaming",
    "hollow",
    "icy",
    "jolly",
    "keen",
    "lucid",
]
_NOUNS = [
    "anchor",
    "beacon",
    "cactus",
    "dune",
    "ember",
    "falcon",
    "glacier",
    "harp",
    "igloo",
    "jasmine",
    "kettle",
    "lagoon",
]


@dataclass(frozen=True)
class Needle:
    """One planted fact: its key, its value and the sentence that states it."""

    key: str
    value: str
    kind: str  # "number" or "uuid": what the value is

    @property
    def sentence(self) -> str:
        return f"One of the special magic {self.kind}s for {self.key} is: {self.value}."


def niah_case(
    haystack: Haystack, counter: TokenCounter, *, length: int, depth: float, seed: int
) -> Case:
    """One needle at `depth` (0 to 1) of a `length`-token haystack."""
    _check_depth(depth)
    rng = random.Random(f"niah:{seed}:{length}:{depth}")
    needle = Needle(_word_key(rng), _number(rng), "number")
    question = f"What is the special magic number for {needle.key} mentioned in the text?"
    return _build_case(
        "niah",
        f"niah-L{length}-d{round(depth * 100)}-s{seed}",
        haystack,
        counter,
        length=length,
        planted=[(needle, depth)],
        asked=[needle],
        question=question,
        depth=depth,
    )


def ruler_case(
    haystack: Haystack, counter: TokenCounter, *, task: str, length: int, seed: int
) -> Case:
    """A RULER-style case of `task` (one of `RULER_TASKS`) in a `length`-token haystack."""
    rng = random.Random(f"ruler:{task}:{seed}:{length}")
    if task in ("multikey-number", "multikey-uuid"):
        kind = "uuid" if task.endswith("uuid") else "number"
        make = _uuid if kind == "uuid" else _number
        needles = _distinct([Needle(make(rng), make(rng), kind) for _ in range(MULTIKEY_NEEDLES)])
        asked = [rng.choice(needles)]
        question = f"What is the special magic {kind} for {asked[0].key} mentioned in the text?"
    elif task == "multivalue":
        key = _word_key(rng)
        needles = _distinct(
            [Needle(key, _number(rng), "number") for _ in range(MULTIVALUE_NEEDLES)]
        )
        asked = needles
        question = f"What are all the special magic numbers for {key} mentioned in the text?"
    elif task == "multiquery":
        needles = _distinct(
            [Needle(_word_key(rng), _number(rng), "number") for _ in range(MULTIQUERY_NEEDLES)]
        )
        asked = needles
        keys = ", ".join(needle.key for needle in needles[:-1]) + f" and {needles[-1].key}"
        question = f"What are the special magic numbers for {keys} mentioned in the text?"
    else:
        raise InvalidArgumentError("task", f"{task!r} is not one of {', '.join(RULER_TASKS)}")
    planted = [(needle, rng.random()) for needle in needles]
    return _build_case(
        task,
        f"{task}-L{length}-s{seed}",
        haystack,
        counter,
        length=length,
        planted=planted,
        asked=asked,
        question=question,
        depth=None,
    )


def _build_case(
    task: str,
    name: str,
    haystack: Haystack,
    counter: TokenCounter,
    *,
    length: int,
    planted: list[tuple[Needle, float]],
    asked: list[Needle],
    question: str,
    depth: float | None,
) -> Case:
    # The needles' own tokens come out of the length, so the case holds `length` tokens.
    planted_case = plant(
        haystack,
        counter,
        length=length,
        sentences=[(needle.sentence, at) for needle, at in planted],
    )
    return Case(
        task=task,
        name=name,
        length=length,
        tokens=planted_case.tokens,
        depth=depth,
        documents=planted_case.documents,
        question=question,
        needles=tuple(needle.sentence for needle in asked),
        answers=tuple(needle.value for needle in asked),
        params={
            "keys": list(dict.fromkeys(needle.key for needle in asked)),
            "kind": asked[0].kind,
            "planted": len(planted),
        },
    )


def _check_depth(depth: float) -> None:
    if not 0.0 <= depth <= 1.0:
        raise InvalidArgumentError("depths", f"a depth is a percentage 0-100, got {depth * 100}")


def _distinct(needles: list[Needle]) -> list[Needle]:
    # Equal draws would plant one sentence twice and make a needle ambiguous; re-seed instead.
    sentences = [needle.sentence for needle in needles]
    if len(set(sentences)) != len(sentences) or len({n.value for n in needles}) != len(needles):
        raise InvalidArgumentError("seed", "drew two equal needles; pick another seed")
    return needles


def _word_key(rng: random.Random) -> str:
    return f"{rng.choice(_ADJECTIVES)}-{rng.choice(_NOUNS)}-{rng.randrange(100, 1000)}"


def _number(rng: random.Random) -> str:
    return str(rng.randrange(1_000_000, 10_000_000))


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))
