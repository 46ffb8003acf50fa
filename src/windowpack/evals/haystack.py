"""Haystacks: the filler text needles are hidden in, loaded from a path or generated.

A haystack is an ordered list of passages. Each passage becomes one document of an eval
collection, so planting a needle changes one document and every other one is byte-identical
across the grid: the store's embedding cache (keyed by content hash) then embeds a passage
once per run, not once per cell. Long texts are cut into ~20K-character passages at blank
lines or sentence ends for the same reason.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from windowpack.errors import InputPathNotFoundError, InvalidArgumentError, UnsupportedFileError
from windowpack.text import TokenCounter

# A passage longer than this is cut into parts of about `PASSAGE_CHARS` characters.
SPLIT_ABOVE_CHARS = 100_000
PASSAGE_CHARS = 20_000
GENERATED_CHARS = 400_000

_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"[.!?][\"')\]\u201d\u2019]*\s+")
_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True, kw_only=True)
class Haystack:
    """Passages in order, where they came from, and their token counts once computed."""

    passages: tuple[str, ...]
    source: str
    _counts: dict[str, list[int]] = field(default_factory=dict, compare=False, repr=False)

    def token_counts(self, counter: TokenCounter) -> list[int]:
        """Each passage's exact token count in `counter`'s tokenizer (computed once)."""
        if counter.name not in self._counts:
            self._counts[counter.name] = counter.count_many(list(self.passages))
        return self._counts[counter.name]

    def total_tokens(self, counter: TokenCounter) -> int:
        return sum(self.token_counts(counter))


def load_haystack(path: Path | None, *, seed: int = 0) -> Haystack:
    """The haystack at `path`, or a generated one when `path` is None.

    `path` may be a folder of .txt files (one passage each, in name order), a JSON file
    `{"text": ...}`, a JSONL file of passages (strings or objects with "text"), or a .txt file.
    """
    if path is None:
        return generated_haystack(seed=seed)
    if not path.exists():
        raise InputPathNotFoundError(str(path))
    if path.is_dir():
        texts = [file.read_text(encoding="utf-8") for file in sorted(path.glob("*.txt"))]
    elif path.suffix == ".json":
        texts = [_json_text(path)]
    elif path.suffix == ".jsonl":
        texts = _jsonl_texts(path)
    elif path.suffix == ".txt":
        texts = [path.read_text(encoding="utf-8")]
    else:
        raise UnsupportedFileError(str(path), "a haystack is a folder, .txt, .json or .jsonl")
    passages = tuple(part for text in texts for part in split_passage(text) if part.strip())
    if not passages:
        raise InvalidArgumentError("haystack", f"{path} holds no text")
    return Haystack(passages=passages, source=str(path))


def _json_text(path: Path) -> str:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        raise UnsupportedFileError(str(path), 'a JSON haystack must be {"text": "..."}')
    return str(data["text"])


def _jsonl_texts(path: Path) -> list[str]:
    texts: list[str] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        value = json.loads(line)
        if isinstance(value, dict):
            value = value.get("text")
        if not isinstance(value, str):
            raise UnsupportedFileError(str(path), f"line {number}: not a string or {{'text'}}")
        texts.append(value)
    return texts


def split_passage(text: str, target: int = PASSAGE_CHARS) -> list[str]:
    """`text` as one passage, or cut into ~`target`-char parts when over `SPLIT_ABOVE_CHARS`."""
    if len(text) <= SPLIT_ABOVE_CHARS:
        return [text.strip()]
    return [text[start:end].strip() for start, end in split_bounds(text, target)]


def split_bounds(text: str, target: int) -> list[tuple[int, int]]:
    """Char ranges of parts of about `target` chars, cut at a blank line when one lies within
    ±25 % of the target, else at a sentence end, else at whitespace."""
    bounds: list[tuple[int, int]] = []
    start = 0
    while len(text) - start > target * 3 // 2:
        low, ideal, high = start + target * 3 // 4, start + target, start + target * 5 // 4
        cut = (
            _nearest_end(_BLANK_LINE, text, low, high, ideal)
            or _nearest_end(_SENTENCE_END, text, low, high, ideal)
            or _nearest_end(_WHITESPACE, text, low, high, ideal)
            or ideal
        )
        bounds.append((start, cut))
        start = cut
    bounds.append((start, len(text)))
    return bounds


def _nearest_end(pattern: re.Pattern[str], text: str, low: int, high: int, ideal: int) -> int:
    ends = [match.end() for match in pattern.finditer(text, low, high)]
    return min(ends, key=lambda end: abs(end - ideal)) if ends else 0


def sentence_boundaries(text: str) -> list[int]:
    """Offsets where a sentence may be inserted: the start, after each sentence end, the end."""
    return [0, *(match.end() for match in _SENTENCE_END.finditer(text)), len(text)]


_WORDS = [
    "river",
    "stone",
    "garden",
    "lantern",
    "harbour",
    "meadow",
    "copper",
    "violet",
    "window",
    "orchard",
    "canal",
    "winter",
    "market",
    "engine",
    "signal",
    "ladder",
    "forest",
    "pepper",
    "candle",
    "bridge",
    "valley",
    "silver",
    "thunder",
    "island",
    "morning",
    "basket",
    "shadow",
    "feather",
    "marble",
    "compass",
    "village",
    "mirror",
    "cotton",
    "harvest",
    "pocket",
    "blanket",
    "circle",
    "quiet",
    "yellow",
    "gentle",
    "distant",
    "narrow",
    "ancient",
    "simple",
    "careful",
    "sudden",
    "walks",
    "carries",
    "builds",
    "watches",
    "follows",
    "paints",
    "gathers",
    "opens",
    "measures",
    "remembers",
]


def generated_haystack(*, seed: int = 0, chars: int = GENERATED_CHARS) -> Haystack:
    """Seeded filler prose: varied sentences from a fixed word list, in paragraphs."""
    rng = random.Random(seed)
    paragraphs: list[str] = []
    total = 0
    while total < chars:
        sentences = [_generated_sentence(rng) for _ in range(rng.randint(3, 7))]
        paragraph = " ".join(sentences)
        paragraphs.append(paragraph)
        total += len(paragraph) + 2
    text = "\n\n".join(paragraphs)
    passages = tuple(text[start:end].strip() for start, end in split_bounds(text, PASSAGE_CHARS))
    return Haystack(passages=passages, source=f"generated (seed {seed})")


def _generated_sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 16))]
    return " ".join(words).capitalize() + "."


def passages_of_length(haystack: Haystack, tokens: int, counter: TokenCounter) -> list[str]:
    """Leading passages holding at most `tokens` tokens, repeating the haystack if it is too
    short (as NIAH and RULER do); the last passage is cut at a token boundary to fit."""
    if tokens < 1:
        raise InvalidArgumentError("lengths", f"a haystack length must be positive, got {tokens}")
    counts = haystack.token_counts(counter)
    kept: list[str] = []
    total = 0
    index = 0
    while total < tokens:
        passage, count = haystack.passages[index % len(counts)], counts[index % len(counts)]
        index += 1
        if total + count > tokens:
            passage = _cut_to_sentences(passage, counter, tokens - total, partial=not kept)
            if not passage.strip():
                break
            count = counter.count(passage)
        kept.append(passage)
        total += count
    return kept


def _cut_to_sentences(passage: str, counter: TokenCounter, tokens: int, *, partial: bool) -> str:
    """The longest run of whole sentences of `passage` within `tokens`, so the haystack ends
    on a sentence end and a needle at 100% depth follows a whole sentence. When not even one
    sentence fits: nothing, or with `partial` (the first passage) a cut at a token boundary."""
    cuts = counter.cut_points(passage, tokens)
    if not cuts:
        return passage
    ends = [end for end in sentence_boundaries(passage) if 0 < end <= cuts[0]]
    if not ends:
        return passage[: cuts[0]].rstrip() if partial else ""
    return passage[: ends[-1]].rstrip()


def insert_at_depth(
    passages: Sequence[str], counter: TokenCounter, sentence: str, depth: float
) -> list[str]:
    """`passages` with `sentence` inserted at the sentence boundary nearest `depth` (0 to 1)
    of their tokens, so the needle never splits a sentence of the haystack."""
    counts = counter.count_many(list(passages))
    target = depth * sum(counts)
    before = 0
    for index, count in enumerate(counts):
        if before + count >= target or index == len(counts) - 1:
            break
        before += count
    text = passages[index]
    share = (target - before) / max(1, counts[index])
    ideal = round(min(1.0, max(0.0, share)) * len(text))
    at = min(sentence_boundaries(text), key=lambda offset: abs(offset - ideal))
    head, tail = text[:at].rstrip(), text[at:].lstrip()
    joined = " ".join(part for part in (head, sentence, tail) if part)
    return [*passages[:index], joined, *passages[index + 1 :]]
