"""MRCR cases in the shape of Google DeepMind's MRCR v2, and its grading rule.

A case is one transcript text: a few-shot preamble, then turns of
`User: Write a {format} about {topic} in {style} style.` / `Assistant: {reply}`. A key is a
(format, topic, style) triple. The asked key is requested `needles` times (2, 4 or 8), each
time with a different reply; so are a few other key groups (as in v2, where every group has
as many instances as the asked one). Near misses share two fields with the asked key and
differ in exactly one (format, topic or style); each is asked 1 to `needles` times. Two near
misses per field and three other groups are planted when they fit in half the conversation
(a short one gets fewer). Fillers differ from every planted key in at least two fields, so
they are neither instances nor near misses of any. The question:
`Prepend {12-character random string} to the {first|second|...} {format} about {topic} in a
{style} style. Do not include any other text in your response.`

Replies come from a fixed pool cut from the haystack (200 to 700 tokens); the replies of
every planted key (asked, other groups, near misses) are distinct and used once in the
conversation, so a reply found in a window is the instance it belongs to. Fillers reuse the
rest of the pool, cycling when a long conversation needs more text than the haystack holds.
The word lists and the preamble are this project's own; only the shape follows v2.
"""

from __future__ import annotations

import functools
import random
import string
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from windowpack.documents import transcript_document
from windowpack.errors import InvalidArgumentError
from windowpack.evals.cases import Case
from windowpack.evals.haystack import Haystack
from windowpack.evals.mrcr_words import FEW_SHOT, FORMATS, STYLES, TOPICS
from windowpack.evals.replies import Reply, ReplyRange, reply_pool
from windowpack.text import TokenCounter, get_token_counter
from windowpack.types import Document

HASH_LENGTH = 12
REPLY_TOKENS = ReplyRange(low=200, high=700, spread=True)
OTHER_GROUPS = 3  # repeated keys besides the asked one
NEAR_MISSES_PER_FIELD = 2
PLANTED_SHARE = 0.5  # planted turns take at most this share of a conversation
INDEX_NAMES = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
FIELDS = ("format", "topic", "style")
SEPARATOR = "\n\n"


@dataclass(frozen=True)
class Key:
    """What a request asks for."""

    format: str
    topic: str
    style: str

    @property
    def request(self) -> str:
        return f"Write a {self.format} about {self.topic} in {self.style} style."

    def differences(self, other: Key) -> int:
        return sum(getattr(self, name) != getattr(other, name) for name in FIELDS)

    def label(self) -> str:
        return f"{self.format} | {self.topic} | {self.style}"


@dataclass(frozen=True)
class _Turn:
    key: Key
    reply: Reply

    @property
    def text(self) -> str:
        return f"User: {self.key.request}{SEPARATOR}Assistant: {self.reply.text}"


@dataclass(kw_only=True)
class _Conversation:
    """A transcript with one asked key per needle count, before any question is drawn."""

    seed: int
    length: int
    plan: list[_Planted]
    turns: list[_Turn]
    text: str
    tokens: int  # of the text, counted exactly

    @functools.cached_property
    def document(self) -> Document:
        """The transcript as one conversation document, shared by the cases asking about it."""
        return transcript_document(self.text, id="conversation", title="conversation")

    def case(self, needles: int) -> Case:
        """The case asking about the key planted `needles` times."""
        asked = next(e for e in self.plan if e.role == "asked" and e.count == needles).key
        return _case(random.Random(f"mrcr-gdm-question:{self.seed}:{needles}"), self, asked)


def gdm_mrcr_case(
    haystack: Haystack,
    counter: TokenCounter,
    *,
    length: int,
    needles: int,
    seed: int,
    together: Sequence[int] | None = None,
) -> Case:
    """A v2-shaped transcript of at most `length` tokens whose asked key has `needles`
    instances; the question asks for the k-th (k drawn in 1..needles).

    `together` lists needle counts whose cases share one conversation (built once): it then
    holds an asked key for each count, each with its own near misses, and the case for each
    count asks about its own key. Sharing cuts what a grid of 2, 4 and 8 needles ingests by
    three; the cases of one count stay independent draws (one per seed). Near misses and
    other groups are planted while the planted turns stay within `PLANTED_SHARE` of the
    length, so a short conversation has fewer of them."""
    counts = tuple(sorted({needles, *(together or ())}))
    if not all(1 <= count <= len(INDEX_NAMES) for count in counts):
        raise InvalidArgumentError("needles", f"must be 1 to {len(INDEX_NAMES)}, got {counts}")
    return _conversation(haystack, counter.name, length=length, counts=counts, seed=seed).case(
        needles
    )


@functools.lru_cache(maxsize=4)
def _conversation(
    haystack: Haystack, tokenizer: str, *, length: int, counts: tuple[int, ...], seed: int
) -> _Conversation:
    counter = get_token_counter(tokenizer)
    rng = random.Random(f"mrcr-gdm:{seed}:{length}:{counts}")
    pool = reply_pool(haystack, counter, REPLY_TOKENS)
    plan = _plan(rng, counts)
    replies = _draw(rng, pool, sum(entry.count for entry in plan))
    cost = _TurnCosts(counter)
    plan, planted = _within(plan, _planted_turns(plan, replies), cost, PLANTED_SHARE * length)
    fillers = _fillers(rng, pool, replies, {entry.key for entry in plan})
    turns, tokens = _fit(rng, cost, planted, fillers, length)
    return _Conversation(
        seed=seed, length=length, plan=plan, turns=turns, text=_text(turns), tokens=tokens
    )


@dataclass(frozen=True)
class _Planted:
    """A planted key, how often it is asked, what it is (an asked key, another repeated
    group, or a near miss named by the one field it changes) and, for a near miss, the
    asked key it is near."""

    key: Key
    count: int
    role: str  # "asked", "group", or the field a near miss differs in
    near: Key | None = None


def _plan(rng: random.Random, counts: Sequence[int]) -> list[_Planted]:
    """The planted keys, most important first: an asked key per count (each asked that many
    times; any two differ in every field), then rounds of one near miss per field of each
    asked key (each 1 to its count times) and one other group (asked as often as one of the
    asked keys)."""
    asked = _apart_keys(rng, len(counts))
    taken = set(asked)
    plan = [_Planted(key, count, "asked") for key, count in zip(asked, counts, strict=True)]
    near: list[list[_Planted]] = []
    for key, count in zip(asked, counts, strict=True):
        near.append(_near_misses(rng, key, count, asked, taken))
    for round_ in range(max(NEAR_MISSES_PER_FIELD, OTHER_GROUPS)):
        for misses in near:
            plan += misses[round_ * len(FIELDS) : (round_ + 1) * len(FIELDS)]
        if round_ < OTHER_GROUPS:
            group = _key_apart(rng, asked, taken)
            taken.add(group)
            plan.append(_Planted(group, counts[round_ % len(counts)], "group"))
    return plan


def _apart_keys(rng: random.Random, number: int) -> list[Key]:
    """`number` random keys, any two different in every field."""
    fields = [rng.sample(_values(field), number) for field in FIELDS]
    return [Key(*values) for values in zip(*fields, strict=True)]


def _near_misses(
    rng: random.Random, key: Key, count: int, asked: Sequence[Key], taken: set[Key]
) -> list[_Planted]:
    """`NEAR_MISSES_PER_FIELD` rounds of one near miss per field of `key`. A near miss's new
    value is none of the asked keys' values, so it differs from every other asked key in all
    fields and is no near miss of theirs."""
    values = {
        field: rng.sample(
            [v for v in _values(field) if v not in {getattr(a, field) for a in asked}],
            NEAR_MISSES_PER_FIELD,
        )
        for field in FIELDS
    }
    misses = []
    for round_ in range(NEAR_MISSES_PER_FIELD):
        for field in FIELDS:
            miss = _replace(key, field, values[field][round_])
            taken.add(miss)
            misses.append(_Planted(miss, rng.randint(1, count), field, near=key))
    return misses


class _TurnCosts:
    """A turn's estimated tokens: its request and roles (counted once per key), its reply's
    own count and the separator after it."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._requests: dict[Key, int] = {}
        self._separator = counter.count(SEPARATOR)

    def __call__(self, turn: _Turn) -> int:
        if turn.key not in self._requests:
            opening = f"User: {turn.key.request}{SEPARATOR}Assistant: "
            self._requests[turn.key] = self.counter.count(opening)
        return self._requests[turn.key] + turn.reply.tokens + self._separator


def _within(
    plan: list[_Planted], turns: list[_Turn], cost: _TurnCosts, room: float
) -> tuple[list[_Planted], list[_Turn]]:
    """The longest head of `plan` whose turns cost at most `room` (asked keys always)."""
    kept, used = 0, 0
    for number, entry in enumerate(plan):
        room -= sum(cost(turn) for turn in turns[used : used + entry.count])
        if room < 0 and entry.role != "asked":
            break
        kept, used = number + 1, used + entry.count
    return plan[:kept], turns[:used]


def _values(field: str) -> tuple[str, ...]:
    return {"format": FORMATS, "topic": TOPICS, "style": STYLES}[field]


def _replace(key: Key, field: str, value: str) -> Key:
    values = {name: getattr(key, name) for name in FIELDS}
    values[field] = value
    return Key(**values)


def _random_key(rng: random.Random) -> Key:
    return Key(rng.choice(FORMATS), rng.choice(TOPICS), rng.choice(STYLES))


def _key_apart(rng: random.Random, asked: Sequence[Key], taken: set[Key]) -> Key:
    """A random key differing from each asked key in at least two fields, not in `taken`."""
    while True:
        key = _random_key(rng)
        if all(key.differences(other) >= 2 for other in asked) and key not in taken:
            return key


def _draw(rng: random.Random, pool: Sequence[Reply], count: int) -> list[Reply]:
    if count > len(pool):
        raise InvalidArgumentError(
            "haystack", f"holds {len(pool)} replies of 200-700 tokens; a case plants {count}"
        )
    return rng.sample(list(pool), count)


def _planted_turns(plan: Sequence[_Planted], replies: Sequence[Reply]) -> list[_Turn]:
    keys = [entry.key for entry in plan for _ in range(entry.count)]
    return [_Turn(key, reply) for key, reply in zip(keys, replies, strict=True)]


def _fillers(
    rng: random.Random, pool: Sequence[Reply], planted: Sequence[Reply], keys: set[Key]
) -> Iterator[_Turn]:
    """Endless filler turns: keys at least two fields from every planted key (so they are
    neither instances nor near misses of any), replies cycling through the unplanted pool."""
    used = set(planted)
    rest = [reply for reply in pool if reply not in used]
    if not rest:
        raise InvalidArgumentError("haystack", "has no replies left for filler turns")
    while True:
        rng.shuffle(rest)
        for reply in rest:
            key = _random_key(rng)
            while any(key.differences(planted_key) < 2 for planted_key in keys):
                key = _random_key(rng)
            yield _Turn(key, reply)


def _fit(
    rng: random.Random,
    cost: _TurnCosts,
    planted: list[_Turn],
    fillers: Iterator[_Turn],
    length: int,
) -> tuple[list[_Turn], int]:
    """Planted turns and as many fillers as fit in `length` tokens with the preamble, in a
    random order, and the exact token count of their text. Costs are estimated per turn,
    then corrected once by the exact count of the whole (tokens merge across joins); a
    filler is dropped while the total is over."""
    counter = cost.counter
    turns = list(planted)
    used: float = counter.count(FEW_SHOT) + sum(cost(turn) for turn in planted)
    if used > length:
        raise InvalidArgumentError("lengths", f"{length} tokens cannot hold the planted turns")
    for correction in (0.0, None):
        if correction is None:  # second pass: what the estimate overshot, per turn
            exact = _count(counter, turns)
            correction = (used - exact) / len(turns)
            used = exact
        for turn in fillers:
            if used + cost(turn) - correction > length:
                break
            turns.append(turn)
            used += cost(turn) - correction
    rng.shuffle(turns)
    while (exact := _count(counter, turns)) > length:
        turns.remove(next(t for t in reversed(turns) if t not in planted))
    return turns, exact


def _count(counter: TokenCounter, turns: Sequence[_Turn]) -> int:
    return counter.count(_text(turns))


def _text(turns: Sequence[_Turn]) -> str:
    return SEPARATOR.join([FEW_SHOT, *(turn.text for turn in turns)])


def _case(rng: random.Random, conversation: _Conversation, asked: Key) -> Case:
    needles = next(entry.count for entry in conversation.plan if entry.key == asked)
    k = rng.randint(1, needles)
    code = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(HASH_LENGTH))
    question = (
        f"Prepend {code} to the {INDEX_NAMES[k - 1]} {asked.format} about {asked.topic} in a "
        f"{asked.style} style. Do not include any other text in your response."
    )
    instances = tuple(turn.reply.text for turn in conversation.turns if turn.key == asked)
    plan = conversation.plan
    return Case(
        task=f"mrcr-gdm-{needles}",
        name=f"mrcr-gdm-{needles}-L{conversation.length}-s{conversation.seed}",
        length=conversation.length,
        tokens=conversation.tokens,
        depth=None,
        documents=(conversation.document,),
        question=question,
        needles=instances,
        answers=(f"{code} {instances[k - 1]}",),
        grading="mrcr-gdm",
        params={
            "format": asked.format,
            "topic": asked.topic,
            "style": asked.style,
            "k": k,
            "prefix": code,
            "n": needles,
            "request": asked.request,
            "turns": len(conversation.turns),
            "other_asked": [e.key.label() for e in plan if e.role == "asked" and e.key != asked],
            "groups": [e.key.label() for e in plan if e.role == "group"],
            "near_misses": {
                field: [e.key.label() for e in plan if e.role == field and e.near == asked]
                for field in FIELDS
            },
            "planted": {entry.key.label(): entry.count for entry in plan},
        },
    )


def grade_mrcr_gdm(prediction: str, target: str) -> float:
    """MRCR v2's rule: 0 unless the target's leading 12-character random string occurs in
    the (stripped) prediction; else the difflib SequenceMatcher ratio of the target's text
    after that string against the prediction's text after the string's last occurrence,
    both stripped."""
    target = target.strip()
    if len(target) < HASH_LENGTH or not prediction:
        return 0.0
    code, expected = target[:HASH_LENGTH], target[HASH_LENGTH:].strip()
    prediction = prediction.strip()
    at = prediction.rfind(code)
    if at < 0:
        return 0.0
    produced = prediction[at + HASH_LENGTH :].strip()
    return float(SequenceMatcher(a=expected, b=produced).ratio())
