"""MRCR cases in the shape of OpenAI's MRCR (multi-round co-reference) and its grading rule.

A case is a conversation of `write a {format} about {topic}` requests with assistant replies
drawn from the haystack (a passage that mentions the topic where one exists, so retrieval by
topic is not trivially easy). The same request appears 2, 4 or 8 times with different replies,
among near misses (same format other topic, same topic other format). The first message
holds few-shot examples, as in MRCR. The final question asks to prepend a random string to
the k-th (1 indexed) reply of the repeated request; `grade_mrcr` scores a reply by the
official rule.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from difflib import SequenceMatcher

from windowpack.documents import conversation_document
from windowpack.errors import InvalidArgumentError
from windowpack.evals.cases import Case
from windowpack.evals.haystack import Haystack
from windowpack.evals.replies import ReplyRange, reply_pool
from windowpack.text import TokenCounter

NEEDLE_COUNTS = (2, 4, 8)
NEAR_MISSES = 3  # of each kind: same format other topic, same topic other format
PREFIX_LENGTH = 10
REPLY_TOKENS = ReplyRange(low=80, high=400)

FORMATS = (
    "poem",
    "short essay",
    "email",
    "social media post",
    "riddle",
    "story",
    "blog post",
    "speech",
    "letter",
    "limerick",
)
TOPICS = (
    "startups",
    "investors",
    "programming",
    "cities",
    "painting",
    "money",
    "schools",
    "design",
    "wealth",
    "founders",
    "languages",
    "writing",
    "hackers",
    "essays",
    "users",
    "art",
    "books",
    "software",
    "college",
    "taste",
)


def grade_mrcr(response: str, answer: str, random_string_to_prepend: str) -> float:
    """The official MRCR score: 0 unless `response` starts with the random string; else the
    difflib SequenceMatcher ratio of the two texts with that string removed from both."""
    if not response.startswith(random_string_to_prepend):
        return 0.0
    response = response.removeprefix(random_string_to_prepend)
    answer = answer.removeprefix(random_string_to_prepend)
    return float(SequenceMatcher(None, response, answer).ratio())


def request(format_: str, topic: str) -> str:
    return f"write a {format_} about {topic}"


def ordinal(number: int) -> str:
    """1st, 2nd, 3rd, 4th, ... 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10)
    return f"{number}{suffix or 'th'}"


@dataclass(frozen=True)
class _Turn:
    format: str
    topic: str
    reply: str
    tokens: int

    def messages(self) -> list[dict[str, str]]:
        return [
            {"role": "user", "content": request(self.format, self.topic)},
            {"role": "assistant", "content": self.reply},
        ]


def mrcr_case(
    haystack: Haystack, counter: TokenCounter, *, length: int, needles: int, seed: int
) -> Case:
    """A conversation of at most `length` tokens with `needles` identical requests."""
    if needles < 1:
        raise InvalidArgumentError("needles", f"must be at least 1, got {needles}")
    rng = random.Random(f"mrcr:{seed}:{length}:{needles}")
    replies = _ReplyPool(haystack, counter, rng)
    format_, topic = rng.choice(FORMATS), rng.choice(TOPICS)
    asked = [replies.turn(format_, topic, needle=True) for _ in range(needles)]
    near = [replies.turn(f, topic) for f in _others(rng, FORMATS, format_)]
    near += [replies.turn(format_, t) for t in _others(rng, TOPICS, topic)]
    k = rng.randint(1, needles)
    alphabet = string.ascii_letters + string.digits
    prefix = "".join(rng.choice(alphabet) for _ in range(PREFIX_LENGTH))
    question = (
        f"Prepend {prefix} to the {ordinal(k)} (1 indexed) {format_} about {topic}. "
        "Do not include any other text in your response."
    )
    few_shot = _few_shot(replies)
    used = counter.count(few_shot) + sum(turn.tokens for turn in asked + near)
    fillers = _fillers(replies, rng, length - used, (format_, topic))
    turns = _shuffled_keeping_needle_order(rng, asked, near + fillers)
    messages = [{"role": "user", "content": few_shot}]
    messages += [message for turn in turns for message in turn.messages()]
    document = conversation_document(messages, id="conversation", title="conversation")
    return Case(
        task=f"mrcr-openai-{needles}",
        name=f"mrcr-openai-{needles}-L{length}-s{seed}",
        length=length,
        tokens=counter.count(document.text),
        depth=None,
        documents=(document,),
        question=question,
        needles=tuple(turn.reply for turn in asked),
        answers=(prefix + asked[k - 1].reply,),
        conversation=tuple(messages),
        grading="mrcr-openai",
        params={"format": format_, "topic": topic, "k": k, "prefix": prefix, "n": needles},
    )


class _ReplyPool:
    """Replies cut from the haystack's paragraphs, topical when possible.

    A needle's reply is used once in the whole conversation, so the k-th copy of the
    request has one right answer; once every reply has been used, fillers reuse the others.
    """

    def __init__(self, haystack: Haystack, counter: TokenCounter, rng: random.Random) -> None:
        self._counter = counter
        pool = reply_pool(haystack, counter, REPLY_TOKENS)
        self._replies = [(reply.text, reply.tokens) for reply in pool]
        rng.shuffle(self._replies)
        self._used: set[int] = set()
        self._reserved: set[int] = set()
        self._next = 0

    def turn(self, format_: str, topic: str, *, needle: bool = False) -> _Turn:
        stem = topic.rstrip("s").lower()
        index = next(
            (
                i
                for i, (text, _) in enumerate(self._replies)
                if i not in self._used and stem in text.lower()
            ),
            None,
        )
        if index is None:
            index = self._next_index(needle)
        self._used.add(index)
        if needle:
            self._reserved.add(index)
        text, tokens = self._replies[index]
        extra = self._counter.count(request(format_, topic)) + 8  # roles and separators
        return _Turn(format_, topic, text, tokens + extra)

    def _next_index(self, needle: bool) -> int:
        for taken in (self._used, self._reserved):
            for _ in range(len(self._replies)):
                index = self._next % len(self._replies)
                self._next += 1
                if index not in taken:
                    return index
            if needle:
                break
        raise InvalidArgumentError("haystack", "too little text for the MRCR conversation")


def _others(rng: random.Random, values: tuple[str, ...], taken: str) -> list[str]:
    return rng.sample([value for value in values if value != taken], NEAR_MISSES)


def _fillers(
    pool: _ReplyPool, rng: random.Random, room: int, needle: tuple[str, str]
) -> list[_Turn]:
    fillers: list[_Turn] = []
    while True:
        format_, topic = rng.choice(FORMATS), rng.choice(TOPICS)
        if (format_, topic) == needle:
            continue
        turn = pool.turn(format_, topic)
        if turn.tokens > room:
            return fillers
        fillers.append(turn)
        room -= turn.tokens


def _shuffled_keeping_needle_order(
    rng: random.Random, needles: list[_Turn], others: list[_Turn]
) -> list[_Turn]:
    """All turns in random order, the needles in their given order (so `asked[k-1]` is the
    k-th one in the conversation)."""
    slots = [True] * len(needles) + [False] * len(others)
    rng.shuffle(slots)
    needle_iter, other_iter = iter(needles), iter(others)
    return [next(needle_iter) if slot else next(other_iter) for slot in slots]


def _few_shot(pool: _ReplyPool) -> str:
    first, second = pool.turn("poem", "examples"), pool.turn("email", "examples")
    return (
        "Here are some examples of conversations succeeded by a follow-up question answered "
        "correctly:\n\n======EXAMPLE======\n"
        f"User: write a poem about examples\nAssistant: {first.reply}\n"
        f"User: write a email about examples\nAssistant: {second.reply}\n"
        "User: Prepend aKx9Pq2LmZ to the 1st (1 indexed) poem about examples. "
        "Do not include any other text in your response.\n"
        f"Assistant: aKx9Pq2LmZ{first.reply}\n======END EXAMPLE======\n"
    )
