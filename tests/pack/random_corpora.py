"""Random corpora for the packing properties: words, sentences and chats drawn from a few
nouns, so the hash embedder's scores scatter over many documents."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, settings

WORDS = [
    "otter",
    "lantern",
    "glacier",
    "meadow",
    "falcon",
    "quarry",
    "ember",
    "tundra",
    "harbor",
    "saffron",
]
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def words(rng: random.Random, low: int, high: int) -> str:
    """A sentence of `low` to `high` of the words."""
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))).capitalize() + "."


def chat(
    rng: random.Random, *, turns: int = 10, reply_words: int = 30, paragraphs: int = 4
) -> list[dict[str, str]]:
    """Messages of 3 to `turns` turns, some asking for the same haiku."""
    messages = []
    for _ in range(rng.randint(3, turns)):
        request = rng.choice(["Write a haiku about saffron in pirate style.", words(rng, 3, 8)])
        messages.append({"role": "user", "content": request})
        reply = "\n\n".join(words(rng, 5, reply_words) for _ in range(rng.randint(1, paragraphs)))
        messages.append({"role": "assistant", "content": reply})
    return messages
