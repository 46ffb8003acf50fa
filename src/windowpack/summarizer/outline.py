"""Overviews from a document's structure: a chat's index of requests, a document's contents.

The query-independent tier of a window is made of summary nodes, and for two kinds of
document an extract of sentences is the wrong overview. In a chat it quoted random replies
(the issue measured 629 tokens of them in an 8K window) where what a reader needs is what
was asked and when: so each node of a conversation is an index of the turns that start in
it, `turn 12: Write a haiku about saffron in pirate style.`, the request shortened as the
node's target demands. In a document with headings it quoted whatever its word statistics
liked (often code); so each node is the table of contents of the sections that start in
it, each heading path with its lead sentence (the section's first prose sentence, see
`prose`): `Child process › exec: Spawns a shell then executes the command within that
shell.`

Fitting a node's target (the tree's ~1/fan-out compression): requests and lead sentences are
shortened (to 40, 20, 12, 8 words; requests, losing their function words first, to 5); a
table of contents then shows fewer heading levels, with 12-word then 5-word leads, then
headings alone; last, every k-th entry is kept, evenly spread. Each step is counted exactly,
so a node never exceeds its target. A node in which no entry starts (inside one long
section) has no outline: the summarizer summarizes it. The collection levels above the
documents list each document's title and the first line of its root the same way.

An outline does not depend on the summarizer: with an LLM summarizer too, a chat's overview
is its index of requests.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from windowpack.documents import PATH_SEPARATOR, heading_trail, message_starts, parse_heading
from windowpack.summarizer.prose import STOP_WORDS, lead_sentence
from windowpack.text import TokenCounter
from windowpack.types import Span

_ROLE = re.compile(r"^\s*\w+\s*:\s*")
_WORD_LIMITS = (40, 20, 12, 8, 5)
# Below these, fewer entries say more than shorter ones: five content words of a request
# ("Write haiku saffron pirate style") still name it; a lead sentence needs more.
_FEWEST_WORDS_BRIEF, _FEWEST_WORDS = 5, 8
_ELLIPSIS = "…"
_PUNCTUATION = ".,;:!?\"'()[]"


@dataclass(frozen=True, kw_only=True)
class OutlineEntry:
    """One line of an outline: it starts at chunk `leaf`; `label` names it (`turn 12`, a
    heading path), `text` says it (the request, the lead sentence; may be empty)."""

    leaf: int
    label: str
    text: str
    depth: int = 0

    @functools.cached_property
    def words(self) -> list[str]:
        """The text's words: split once, shortened for each detail a render tries."""
        return self.text.split()


@dataclass(frozen=True, kw_only=True)
class DocumentOutline:
    """A document's outline entries in order, rendered per node by its span of chunks."""

    entries: tuple[OutlineEntry, ...]
    # A table of contents may show a heading alone; a request index always shows the request.
    labels_alone: bool
    # Requests are shortened by dropping function words first (see `_shortened`).
    brief: bool = False

    @functools.cached_property
    def _leaves(self) -> list[int]:
        return [entry.leaf for entry in self.entries]

    def within(self, leaf_start: int, leaf_end: int) -> Sequence[OutlineEntry]:
        """The entries that start in chunks `[leaf_start, leaf_end)`."""
        first = bisect.bisect_left(self._leaves, leaf_start)
        return self.entries[first : bisect.bisect_left(self._leaves, leaf_end)]

    def key(self, leaf_start: int, leaf_end: int) -> str | None:
        """What the outline of these chunks says, hashed (part of the node's identity: a turn
        number depends on where its chunks are, not only on their text); None if empty."""
        entries = self.within(leaf_start, leaf_end)
        if not entries:
            return None
        encoded = json.dumps([[e.label, e.text, e.depth] for e in entries]).encode("utf-8")
        return hashlib.sha256(encoded).hexdigest()

    def render(
        self, leaf_start: int, leaf_end: int, *, target: int, counter: TokenCounter
    ) -> str | None:
        """The outline of chunks `[leaf_start, leaf_end)` within `target` tokens; None if
        no entry starts there."""
        entries = list(self.within(leaf_start, leaf_end))
        if not entries:
            return None
        count = _counted_once(counter)
        for depth, words in self._details(entries):
            shown = [entry for entry in entries if entry.depth <= depth]
            text = _lines(shown, words, brief=self.brief)
            if count(text) <= target:
                return text
        shallowest = min(entry.depth for entry in entries)
        shown = [entry for entry in entries if entry.depth == shallowest]
        words = None if self.labels_alone else self._fewest_words
        return _thinned(shown, words, target, counter, brief=self.brief, count=count)

    @property
    def _fewest_words(self) -> int:
        return _FEWEST_WORDS_BRIEF if self.brief else _FEWEST_WORDS

    def _details(self, entries: Sequence[OutlineEntry]) -> list[tuple[int, int | None]]:
        """(deepest heading shown, words per text) from the most to the least detailed: all
        headings with shorter and shorter texts; then, for a table of contents, fewer
        levels with 12-word leads, then with 5, then headings alone."""
        depths = sorted({entry.depth for entry in entries}, reverse=True)
        full: list[tuple[int, int | None]] = [(depths[0], words) for words in _WORD_LIMITS[:3]]
        if not self.labels_alone:
            shorter = [w for w in _WORD_LIMITS[3:] if w >= self._fewest_words]
            return full + [(depths[0], words) for words in shorter]
        fewer = [(depth, words) for words in (12, 5) for depth in depths[1:]]
        return [*full, *fewer, *((depth, None) for depth in depths)]


def _counted_once(counter: TokenCounter) -> Callable[[str], int]:
    """`counter.count`, remembering its counts: a render's details often come to the same
    text (entries shorter than the words shown), and its thinning starts from the text its
    last detail tried (a collection root's is every document's line: ~40K tokens at 10M)."""
    counts: dict[str, int] = {}

    def count(text: str) -> int:
        if text not in counts:
            counts[text] = counter.count(text)
        return counts[text]

    return count


def _lines(entries: Sequence[OutlineEntry], words: int | None, *, brief: bool = False) -> str:
    return "\n".join(_line(entry, words, brief=brief) for entry in entries)


def _line(entry: OutlineEntry, words: int | None, *, brief: bool = False) -> str:
    said = _shortened(entry.words, words, brief=brief) if words is not None else ""
    if not entry.label:
        return said
    return f"{entry.label}: {said}" if said else entry.label


def _shortened(parts: list[str], words: int, *, brief: bool) -> str:
    """The first `words` of the words `parts` and an ellipsis if there were more. `brief`
    (for requests) drops function words first: "Write a haiku about saffron in a pirate
    style" keeps "Write haiku saffron pirate style", and a request's subject comes late."""
    if len(parts) <= words:
        return " ".join(parts)
    if brief:
        parts = [part for part in parts if part.lower().strip(_PUNCTUATION) not in STOP_WORDS]
    return " ".join(parts[:words]) + (_ELLIPSIS if len(parts) > words else "")


def _thinned(
    entries: list[OutlineEntry],
    words: int | None,
    target: int,
    counter: TokenCounter,
    *,
    brief: bool,
    count: Callable[[str], int],
) -> str:
    """Every k-th entry, the smallest k that fits (one entry cut to fit, at worst)."""
    tokens = count(_lines(entries, words, brief=brief))
    step = max(2, math.ceil(tokens / max(target, 1)))
    while step < len(entries):
        text = _lines(entries[::step], words, brief=brief)
        if count(text) <= target:
            return text
        step += max(1, step // 4)
    line = _line(entries[0], words, brief=brief)
    cuts = counter.cut_points(line, target)
    return line[: cuts[0]].rstrip() if cuts else line


def document_outline(
    *,
    text: str,
    kind: str,
    units: Sequence[Span] | None,
    chunk_units: Sequence[int | None],
) -> DocumentOutline | None:
    """The outline of a conversation (its turns' requests) or of a markdown document with
    sections (its table of contents); None for any other document."""
    if not units:
        return None
    first_leaf: dict[int, int] = {}
    for leaf, unit in enumerate(chunk_units):
        if unit is not None:
            first_leaf.setdefault(unit, leaf)
    if kind == "conversation":
        entries = _requests(text, units, first_leaf)
        return DocumentOutline(entries=entries, labels_alone=False, brief=True) if entries else None
    if kind == "markdown":
        entries = _contents(text, units, first_leaf)
        return DocumentOutline(entries=entries, labels_alone=True) if entries else None
    return None


def _requests(
    text: str, units: Sequence[Span], first_leaf: dict[int, int]
) -> tuple[OutlineEntry, ...]:
    """Each turn's request: its first message without the role, numbered as passage headers
    number turns (a preamble before the first request is turn 1)."""
    entries = []
    for index, unit in enumerate(units):
        if index not in first_leaf:
            continue
        later = message_starts(text, unit.start + 1, unit.end)
        first_message = text[unit.start : later[0] if later else unit.end]
        request = " ".join(_ROLE.sub("", first_message, count=1).split())
        entries.append(
            OutlineEntry(leaf=first_leaf[index], label=f"turn {index + 1}", text=request)
        )
    return tuple(entries)


def _contents(
    text: str, units: Sequence[Span], first_leaf: dict[int, int]
) -> tuple[OutlineEntry, ...]:
    """Each section's heading path and lead sentence (a section before the first heading
    shows its lead alone, and nothing when it has no prose: a page's navigation links)."""
    entries = []
    for index, (unit, trail) in enumerate(zip(units, heading_trail(text, units), strict=True)):
        if index not in first_leaf:
            continue
        line_end = text.find("\n", unit.start, unit.end)
        first_line = text[unit.start : unit.end if line_end < 0 else line_end]
        body_start = unit.start if parse_heading(first_line) is None else line_end
        lead = lead_sentence(text, unit.end if body_start < 0 else body_start, unit.end)
        said = " ".join(text[lead.start : lead.end].split()) if lead is not None else ""
        if not trail and not said:
            continue
        entries.append(
            OutlineEntry(
                leaf=first_leaf[index],
                label=PATH_SEPARATOR.join(trail),
                text=said,
                depth=len(trail),
            )
        )
    return tuple(entries)


def collection_outline(roots: Sequence[tuple[str, str]]) -> DocumentOutline | None:
    """The outline of a collection: one entry per document, in collection order, from its
    (title, root summary) — the summary's first line (a document's top heading and lead,
    a chat's first request), led by the title unless that line already starts with it."""
    entries = []
    for ordinal, (title, summary) in enumerate(roots):
        first_line = summary.strip().split("\n", 1)[0].strip()
        label = "" if not title or first_line.startswith(title) else title
        if first_line or label:
            entries.append(OutlineEntry(leaf=ordinal, label=label, text=first_line))
    return DocumentOutline(entries=tuple(entries), labels_alone=False) if entries else None
