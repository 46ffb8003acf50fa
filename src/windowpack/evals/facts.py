"""Cases whose planted facts are sentences of prose, not magic numbers: associative
(NoLiMa-style), multi-hop and aggregation. Seeded; each plants exactly the facts it lists.

- `associative_case`: one needle of `ASSOCIATIVE_NEEDLES` (the seed picks it, the four kinds
  in turn) at a seeded depth; asked by association, or with `control` in the needle's words.
  Both variants of a seed plant the same documents, so one ingest serves the pair.
- `multihop_case`: the two facts of a `MULTIHOP_NEEDLES` chain, at seeded depths at least a
  quarter of the haystack apart, in either order.
- `aggregation_case`: `facts` sentences, each saying that one firm opened an office in
  another city, spread over the haystack (one per equal slice of it, at a seeded point).

Each case lists its facts in `params["facts"]` as groups (`needles`, `answer`): a group is
answered when all its needles are in the window, which is what the deterministic reader
checks. Recall (`Case.needle_recall`) is the share of planted sentences in the window; the
reader's score is the share of answers it could give (multi-hop: both facts, or nothing).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from windowpack.errors import InvalidArgumentError
from windowpack.evals import aggregation_set
from windowpack.evals.associative_set import ASSOCIATIVE_NEEDLES, AssociativeNeedle
from windowpack.evals.cases import Case
from windowpack.evals.haystack import Haystack
from windowpack.evals.multihop_set import MULTIHOP_NEEDLES
from windowpack.evals.planting import Planted, plant
from windowpack.text import TokenCounter

AGGREGATION_FACTS = 16
MAX_AGGREGATION_FACTS = len(aggregation_set.CITIES)
_MULTIHOP_MIN_GAP = 0.25


def associative_order() -> tuple[AssociativeNeedle, ...]:
    """The needles in the order seeds take them: one of each kind in turn, so any four
    consecutive seeds cover the four kinds."""
    kinds: dict[str, list[AssociativeNeedle]] = {}
    for needle in ASSOCIATIVE_NEEDLES:
        kinds.setdefault(needle.kind, []).append(needle)
    return tuple(needle for group in zip(*kinds.values(), strict=True) for needle in group)


def associative_case(
    haystack: Haystack, counter: TokenCounter, *, length: int, seed: int, control: bool = False
) -> Case:
    """An associative needle in a `length`-token haystack, asked by association or (with
    `control`) in its own words."""
    order = associative_order()
    item = order[seed % len(order)]
    depth = random.Random(f"associative:{seed}:{length}").random()
    variant = "control" if control else "associative"
    return _facts_case(
        "associative",
        f"{variant}-{item.kind}-L{length}-s{seed}",
        plant(haystack, counter, length=length, sentences=[(item.needle, depth)]),
        length=length,
        depth=depth,
        question=item.control if control else item.question,
        facts=[([item.needle], item.answer)],
        params={"kind": item.kind, "variant": variant},
    )


def multihop_case(haystack: Haystack, counter: TokenCounter, *, length: int, seed: int) -> Case:
    """A two-fact chain in a `length`-token haystack; recall needs both facts."""
    item = MULTIHOP_NEEDLES[seed % len(MULTIHOP_NEEDLES)]
    rng = random.Random(f"multihop:{seed}:{length}")
    first = rng.random()
    # Circular distance of at least the gap, so the facts never share a neighbourhood.
    second = (first + _MULTIHOP_MIN_GAP + rng.random() * (1 - 2 * _MULTIHOP_MIN_GAP)) % 1.0
    planted = plant(
        haystack, counter, length=length, sentences=[(item.first, first), (item.second, second)]
    )
    return _facts_case(
        "multihop",
        f"multihop-L{length}-s{seed}",
        planted,
        length=length,
        depth=None,
        question=item.question,
        facts=[([item.first, item.second], item.answer)],
        params={"depths": [first, second]},
    )


def aggregation_case(
    haystack: Haystack,
    counter: TokenCounter,
    *,
    length: int,
    seed: int,
    facts: int = AGGREGATION_FACTS,
) -> Case:
    """`facts` office openings of one firm, one in each equal slice of the haystack."""
    if not 1 <= facts <= MAX_AGGREGATION_FACTS:
        raise InvalidArgumentError(
            "aggregation-facts", f"must be 1 to {MAX_AGGREGATION_FACTS}, got {facts}"
        )
    rng = random.Random(f"aggregation:{seed}:{length}:{facts}")
    firm = rng.choice(aggregation_set.FIRMS)
    cities = rng.sample(aggregation_set.CITIES, facts)
    templates = aggregation_set.TEMPLATES
    sentences = [
        templates[(index + seed) % len(templates)].format(firm=firm, city=city)
        for index, city in enumerate(cities)
    ]
    depths = [(index + rng.random()) / facts for index in range(facts)]
    return _facts_case(
        "aggregation",
        f"aggregation-{facts}-L{length}-s{seed}",
        plant(
            haystack, counter, length=length, sentences=list(zip(sentences, depths, strict=True))
        ),
        length=length,
        depth=None,
        question=aggregation_set.QUESTION.format(firm=firm),
        facts=[([sentence], city) for sentence, city in zip(sentences, cities, strict=True)],
        params={"firm": firm},
    )


def _facts_case(
    task: str,
    name: str,
    planted: Planted,
    *,
    length: int,
    depth: float | None,
    question: str,
    facts: Sequence[tuple[list[str], str]],
    params: dict[str, object],
) -> Case:
    return Case(
        task=task,
        name=name,
        length=length,
        tokens=planted.tokens,
        depth=depth,
        documents=planted.documents,
        question=question,
        needles=tuple(needle for needles, _ in facts for needle in needles),
        answers=tuple(answer for _, answer in facts),
        grading="facts",
        params={
            **params,
            "facts": [{"needles": needles, "answer": answer} for needles, answer in facts],
        },
    )
