"""Overviews from a document's structure: a chat's index of requests, a document's contents.

The query-independent tier of a window is made of summary nodes, and for two kinds of
document an extract of sentences is the wrong overview. In a chat it quoted random replies
(the issue measured 629 tokens of them in an 8K window) where what a reader needs is what
was asked and when: so each node of a conversation is an index of the turns that start in
it, `turn 12: Write a haiku about saffron in pirate style.`, the request shortened as the
node's target demands. In a document with headings it quoted whatever its word statistics
liked (often code, or "The default value is `off`." without the parameter it belongs to);
so each node is the table of contents of the sections and definitions that start in it:
each heading path with its lead sentence (the section's first descriptive sentence, see
`prose`), `Child process › exec: Spawns a shell then executes the command within that
shell.`, and each defined term with the first sentence of its definition (`definitions`),
`` `work_mem` (`integer`): Sets the base maximum amount of memory… ``. A heading or term
alone says nothing and is never a line: a section without a sentence of its own (a
synopsis in code, a list of links, "Tip") is only the path of the terms defined in it.

A document's root says what the document is for before what is in it: its title and its
opening descriptive sentences (`DROP DATABASE — remove a database`, then the first sentences
of its description), then its contents in what the target leaves.

Fitting a node's target (the tree's ~1/fan-out compression): requests and lead sentences are
shortened (to 40, 20, 12, 8 words; requests, losing their function words first, to 5); a
table of contents then lists each section's terms by name (`Memory: `shared_buffers`,
`work_mem`, …`), fewer and fewer of them, then shows fewer heading levels; last, every k-th
entry is kept, evenly spread. Each step is counted exactly, so a node never exceeds its
target. A node in which no entry starts (inside one long section or definition) has no
outline: the summarizer summarizes it, and the tree names its subject (`subject`).

The collection levels above the documents list each document's title and the first line of
its root the same way; where those lines do not fit, the documents are listed by group (the
folder and name prefix of their ids: `pgdocs/sql-*`), each with its count and as many titles
as its share of the documents earns, so a collection's root covers every part of it.

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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from windowpack.documents import PATH_SEPARATOR, heading_trail, message_starts, parse_heading
from windowpack.summarizer.definitions import definitions, term_name
from windowpack.summarizer.groups import document_groups
from windowpack.summarizer.prose import STOP_WORDS, is_admonition, lead_sentence, statements
from windowpack.text import TokenCounter
from windowpack.types import Span

_ROLE = re.compile(r"^\s*\w+\s*:\s*")
_WORD_LIMITS = (40, 20, 12, 8, 5)
# Below these, fewer entries say more than shorter ones: five content words of a request
# ("Write haiku saffron pirate style") still name it; a lead sentence needs more.
_FEWEST_WORDS_BRIEF, _FEWEST_WORDS = 5, 8
# Words of a section's lead shown beside the names of its terms.
_NAMES_LEAD_WORDS = (12, 5)
# Names of terms shown per section once they do not all fit.
_NAMES_SHOWN = (8, 4, 2, 1)
# Terms of a section shown with their definitions, the others by name, before names alone.
_TERM_LINES = (4, 2, 1)
_ELLIPSIS = "…"
_PUNCTUATION = ".,;:!?\"'()[]"
# A document's purpose: its title and at most this many opening sentences, in at most this
# share of its root's target (the rest is its contents).
_PURPOSE_SENTENCES = 4
_PURPOSE_SHARE = 2
# A root's contents below its purpose are left out when fewer tokens than this remain.
_MIN_CONTENTS_TOKENS = 12
# The group of the documents that share a group with no other.
_OTHERS = "other"
_LINK = re.compile(r"(?<!!)\[([^\]]*)\]\([^)]*\)")
# The title of a markdown link: `[text](url "title")`.
_LINK_TITLE = re.compile(r'(\]\([^)\s]*)(\s+"[^"\n]*")(?=\))')
_SENTENCE_MARKS = re.compile(r"[.!?]")
# A link the sentence splitter cut inside its title (`[Table 4.2](url "Table 4.2.`).
_CUT_LINK = re.compile(r"(?<!!)\[([^\]]*)\]\([^)]*$")

Style = Literal["requests", "contents", "collection"]


@dataclass(frozen=True, kw_only=True)
class OutlineEntry:
    """One line of an outline: it starts at chunk `leaf`; `label` names it (`turn 12`, a
    heading path, a defined term, a document's title), `text` says it (the request, the lead
    sentence, the definition's first sentence; may be empty).

    A term's `context` is the heading path of its section, a document's its group; `name` is
    what a list of names shows (a term without its type, a document's title); `char` is where
    a section or term starts in its document (its leaf is found from the chunks' spans)."""

    leaf: int
    label: str
    text: str
    depth: int = 0
    kind: Literal["turn", "section", "remark", "term", "document"] = "section"
    context: str = ""
    name: str = ""
    char: int | None = None

    @functools.cached_property
    def words(self) -> list[str]:
        """The text's words: split once, shortened for each detail a render tries."""
        return self.text.split()


@dataclass(frozen=True, kw_only=True)
class Subject:
    """What the text from `char` on is about: a heading path, or a path and a term."""

    char: int
    text: str


@dataclass(frozen=True, kw_only=True)
class Purpose:
    """What a document is for: its first line (title and first descriptive sentence), the
    sentences after it, and the entry texts they quote (not repeated below them)."""

    title: str
    first: str
    more: tuple[str, ...]
    quoted: frozenset[str]


@dataclass(frozen=True, kw_only=True)
class DocumentOutline:
    """A document's outline entries in order, rendered per node by its span of chunks."""

    entries: tuple[OutlineEntry, ...]
    style: Style
    subjects: tuple[Subject, ...] = ()
    purpose: Purpose | None = None
    # Where each chunk starts in the document, once the entries are placed on the chunks.
    chunk_starts: tuple[int, ...] | None = None

    @functools.cached_property
    def _leaves(self) -> list[int]:
        return [entry.leaf for entry in self.entries]

    @functools.cached_property
    def _subject_chars(self) -> list[int]:
        return [subject.char for subject in self.subjects]

    @property
    def grows_with_children(self) -> bool:
        """Whether a node's target is at least the mean size of the items it spans (the
        collection levels: their nominal target shrinks by the fan-out per level, and a root
        that must say what every part of a collection holds cannot)."""
        return self.style == "collection"

    def placed(self, chunk_spans: Sequence[Span]) -> DocumentOutline:
        """The outline with each entry that knows where it starts put on the chunk holding
        that place (the first chunk ending after it), given the chunks' spans in order."""
        ends = [span.end for span in chunk_spans]
        if not ends or not any(entry.char is not None for entry in self.entries):
            return replace(self, chunk_starts=tuple(span.start for span in chunk_spans))
        entries = [
            entry
            if entry.char is None
            else replace(entry, leaf=min(bisect.bisect_right(ends, entry.char), len(ends) - 1))
            for entry in self.entries
        ]
        order = sorted(range(len(entries)), key=lambda i: (entries[i].leaf, i))
        return replace(
            self,
            entries=tuple(entries[i] for i in order),
            chunk_starts=tuple(span.start for span in chunk_spans),
        )

    def within(self, leaf_start: int, leaf_end: int) -> Sequence[OutlineEntry]:
        """The entries that start in chunks `[leaf_start, leaf_end)`."""
        first = bisect.bisect_left(self._leaves, leaf_start)
        return self.entries[first : bisect.bisect_left(self._leaves, leaf_end)]

    def key(self, leaf_start: int, leaf_end: int, *, root: bool = False) -> str | None:
        """What the outline of these chunks says, hashed (part of the node's identity: a turn
        number depends on where its chunks are, not only on their text); None if empty."""
        entries = self.within(leaf_start, leaf_end)
        if not entries:
            return None
        said: list[object] = [self.style]
        said += [[e.label, e.text, e.depth, e.kind, e.context, e.name] for e in entries]
        if root and self.purpose is not None:
            said.append(["purpose", self.purpose.first, *self.purpose.more])
        return hashlib.sha256(json.dumps(said).encode("utf-8")).hexdigest()

    def subject(self, leaf_start: int, leaf_end: int) -> str | None:
        """What the chunks `[leaf_start, leaf_end)` are about, for a node in which no entry
        starts: the heading path (and term) open where they start, else the first one that
        opens in them; None without one (or before the entries are placed)."""
        if self.chunk_starts is None or not self.subjects or leaf_start >= leaf_end:
            return None
        start = self.chunk_starts[leaf_start]
        open_at = bisect.bisect_right(self._subject_chars, start) - 1
        if open_at >= 0:
            return self.subjects[open_at].text
        end = self.chunk_starts[leaf_end] if leaf_end < len(self.chunk_starts) else math.inf
        first = self.subjects[0]
        return first.text if first.char < end else None

    def render(
        self,
        leaf_start: int,
        leaf_end: int,
        *,
        target: int,
        counter: TokenCounter,
        root: bool = False,
    ) -> str | None:
        """The outline of chunks `[leaf_start, leaf_end)` within `target` tokens, led by the
        document's purpose when it is the document's `root`; None if no entry starts there."""
        entries = list(self.within(leaf_start, leaf_end))
        if not entries:
            return None
        count = _counted_once(counter)
        if root and self.purpose is not None:
            return self._with_purpose(self.purpose, entries, target, counter, count)
        return self._fitted(entries, target, counter, count)

    def _fitted(
        self,
        entries: Sequence[OutlineEntry],
        target: int,
        counter: TokenCounter,
        count: Callable[[str], int],
        *,
        under: str = "",
    ) -> str:
        """The most detailed outline of `entries` that fits (`under`: the heading a root's
        purpose names, left out of the paths below it)."""
        for text in self._candidates(entries, under):
            if count(text) <= target:
                return text
        return self._thinned(entries, target, counter, count, under) or ""

    def _fitted_whole(
        self,
        entries: Sequence[OutlineEntry],
        target: int,
        counter: TokenCounter,
        count: Callable[[str], int],
        under: str,
    ) -> str | None:
        """The most detailed outline of `entries` that fits whole (thinned at most, never a
        line cut short); None if none does."""
        for text in self._candidates(entries, under):
            if count(text) <= target:
                return text
        return self._thinned(entries, target, counter, count, under, cut=False)

    def _candidates(self, entries: Sequence[OutlineEntry], under: str) -> Iterator[str]:
        """The outline from the most to the least detailed."""
        if self.style == "contents":
            yield from _contents_candidates(entries, under)
            return
        brief = self.style == "requests"
        fewest = _FEWEST_WORDS_BRIEF if brief else _FEWEST_WORDS
        for words in _WORD_LIMITS:
            if words >= fewest:
                yield _lines(entries, words, brief=brief)
        if self.style == "collection":
            yield from _grouped_candidates(entries)

    def _thinned(
        self,
        entries: Sequence[OutlineEntry],
        target: int,
        counter: TokenCounter,
        count: Callable[[str], int],
        under: str = "",
        *,
        cut: bool = True,
    ) -> str | None:
        """Every k-th entry (of the shallowest sections, in a table of contents), the
        smallest k that fits (one entry, then one entry `cut` to fit, at worst)."""
        render: Callable[[Sequence[OutlineEntry]], str]
        if self.style == "contents":
            # The text before the first heading (depth 0) stays; it is not a level of its own.
            kept = [entry for entry in entries if entry.kind != "remark"] or list(entries)
            depths = {_section_depth(entry) for entry in kept} - {0} or {0}
            shallow = [e for e in kept if _section_depth(e) in (0, min(depths))]
            # Sections are thinned, not terms: each keeps its lead and its first term.
            shown = [
                entry
                for section in _sections(shallow)
                for entry in (*((section.entry,) if section.entry else ()), *section.terms[:1])
            ]

            def render(chosen: Sequence[OutlineEntry]) -> str:
                return _contents_names(chosen, under, words=_NAMES_LEAD_WORDS[-1], names=1)

        else:
            shown = list(entries)
            brief = self.style == "requests"
            words = _FEWEST_WORDS_BRIEF if brief else _FEWEST_WORDS

            def render(chosen: Sequence[OutlineEntry]) -> str:
                return _lines(chosen, words, brief=brief)

        tokens = count(render(shown))
        step = max(2, math.ceil(tokens / max(target, 1)))
        while step < len(shown):
            text = render(shown[::step])
            if count(text) <= target:
                return text
            step += max(1, step // 4)
        first = render(shown[:1])
        if count(first) <= target:
            return first
        return _cut(first, target, counter) if cut else None

    def _with_purpose(
        self,
        purpose: Purpose,
        entries: Sequence[OutlineEntry],
        target: int,
        counter: TokenCounter,
        count: Callable[[str], int],
    ) -> str:
        """A document's root: its purpose (in at most half its target, its first line at
        least), then its contents in what is left, without the sentences the purpose
        quotes."""
        lead = _purpose_text(purpose, target, counter, count)
        rest = [e for e in entries if e.kind == "term" or e.text not in purpose.quoted]
        left = target - count(lead) - 1
        # A cut contents may count a token more once joined: a little less is asked then.
        for room in (left, left - 2, left - 4):
            if not rest or room < _MIN_CONTENTS_TOKENS:
                break
            contents = self._fitted_whole(rest, room, counter, count, purpose.title)
            if contents is None:
                break
            combined = f"{lead}\n{contents}"
            if count(combined) <= target:
                return combined
        return lead


def _cut(line: str, target: int, counter: TokenCounter) -> str:
    """A line cut to `target` tokens at a word boundary; what it says, not its label, when
    the cut would leave the label alone (`20.9.1. Statistics:`)."""
    cuts = counter.cut_points(line, target)
    if not cuts:
        return line
    kept = line[: cuts[0]]
    if cuts[0] < len(line) and not line[cuts[0]].isspace() and " " in kept:
        kept = kept.rsplit(" ", 1)[0]
    kept = kept.rstrip(" ,;›")
    label, colon, said = line.partition(": ")
    if colon and len(kept) <= len(label) + len(colon) and said:
        return _cut(said, target, counter)
    return kept


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


# A table of contents ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Section:
    """A section's line in a table of contents: its path, its own entry (if it has a lead)
    and the terms defined in it that start in the node."""

    path: str
    entry: OutlineEntry | None
    terms: tuple[OutlineEntry, ...]


def _sections(entries: Sequence[OutlineEntry]) -> list[_Section]:
    """The entries as sections, in order: a term joins the section before it when it is
    defined there, else it opens its section's line (a node that starts mid-section)."""
    sections: list[_Section] = []
    for entry in entries:
        if entry.kind == "term":
            last = sections[-1] if sections else None
            if last is not None and last.path == entry.context:
                sections[-1] = _Section(last.path, last.entry, (*last.terms, entry))
            else:
                sections.append(_Section(entry.context, None, (entry,)))
        else:
            sections.append(_Section(entry.label, entry, ()))
    return sections


def _contents_candidates(entries: Sequence[OutlineEntry], under: str) -> Iterator[str]:
    """A table of contents from the most to the least detailed: every entry on its line,
    with shorter and shorter texts; then each section's terms by name, fewer and fewer; then
    fewer heading levels."""
    for words in _WORD_LIMITS[:4]:
        yield _contents_lines(entries, under, words)
    # Past full lines, remarks (a note, a tip) go first: they split a section's terms.
    entries = [entry for entry in entries if entry.kind != "remark"] or list(entries)
    if any(entry.kind == "term" for entry in entries):
        for lines in _TERM_LINES:
            yield _contents_lines(entries, under, _WORD_LIMITS[3], term_lines=lines)
        for words in _NAMES_LEAD_WORDS:
            yield _contents_names(entries, under, words=words, names=None)
        for names in _NAMES_SHOWN:
            yield _contents_names(entries, under, words=_NAMES_LEAD_WORDS[-1], names=names)
    else:
        yield _contents_lines(entries, under, _NAMES_LEAD_WORDS[-1])
    depths = sorted({_section_depth(entry) for entry in entries} - {0}, reverse=True)
    for depth in depths[1:]:
        shown = [entry for entry in entries if _section_depth(entry) <= depth]
        for words in _NAMES_LEAD_WORDS:
            yield _contents_names(shown, under, words=words, names=1)


def _section_depth(entry: OutlineEntry) -> int:
    return entry.depth - 1 if entry.kind == "term" else entry.depth


def _contents_lines(
    entries: Sequence[OutlineEntry], under: str, words: int, *, term_lines: int | None = None
) -> str:
    """Each section with its lead, each term with its definition's first words (the first
    `term_lines` terms of a section, the others by name on one more line); a term whose
    section line is not in the node is led by the section's path."""
    lines: list[str] = []
    sections = _sections(entries)
    for section, path in zip(sections, _shown_paths(sections, under), strict=True):
        if section.entry is not None:
            said = _shortened(section.entry.words, words, brief=False)
            lines.append(_section_line(path, said))
        shown = section.terms if term_lines is None else section.terms[:term_lines]
        for index, term in enumerate(shown):
            label = term.label
            if index == 0 and section.entry is None and path:
                label = f"{path}{PATH_SEPARATOR}{label}"
            said = _shortened(term.words, words, brief=False)
            lines.append(f"{label}: {said}")
        rest = section.terms[len(shown) :]
        if rest:
            heading = path.rsplit(PATH_SEPARATOR, 1)[-1]
            named = ", ".join(term.name or term.label for term in rest)
            lines.append(f"{heading} also: {named}" if heading else f"Also: {named}")
    return "\n".join(lines)


def _contents_names(
    entries: Sequence[OutlineEntry], under: str, *, words: int, names: int | None
) -> str:
    """Each section on one line: its path, its lead's first `words` and the names of its
    terms (the first `names` of them, then an ellipsis)."""
    lines: list[str] = []
    sections = _sections(entries)
    for section, path in zip(sections, _shown_paths(sections, under), strict=True):
        lead = _shortened(section.entry.words, words, brief=False) if section.entry else ""
        listed = [term.name or term.label for term in section.terms]
        shown = listed if names is None else listed[:names]
        named = ", ".join(shown) + (f", {_ELLIPSIS}" if len(shown) < len(listed) else "")
        said = f"{lead} ({named})" if lead and named else lead or named
        lines.append(_section_line(path, said))
    return "\n".join(lines)


def _section_line(path: str, said: str) -> str:
    """`path: said`, without the path's last heading when the sentence opens with it
    (`DROP DATABASE — remove a database` needs no `DROP DATABASE:` before it)."""
    parts = path.split(PATH_SEPARATOR) if path else []
    if parts and _starts_with(said, parts[-1]):
        parts.pop()
    return f"{PATH_SEPARATOR.join(parts)}: {said}" if parts else said


def _shown_paths(sections: Sequence[_Section], under: str) -> list[str]:
    """The path each section's line shows: the first line its whole path, the others only
    what follows the headings every line shares (stated once, by the first line); below a
    root's purpose, nothing of the heading it names (`under`)."""
    paths = [
        tuple(section.path.split(PATH_SEPARATOR)) if section.path else () for section in sections
    ]
    shared = _shared_prefix(paths)
    shown: list[str] = []
    for index, path in enumerate(paths):
        skip = min(len(shared), len(path) - 1) if index > 0 else 0
        if under and path[:1] == (under,):
            skip = max(skip, 1)
        shown.append(PATH_SEPARATOR.join(path[skip:]))
    return shown


def _shared_prefix(paths: Sequence[tuple[str, ...]]) -> tuple[str, ...]:
    """The headings every path starts with."""
    if not paths:
        return ()
    shared = paths[0]
    for path in paths[1:]:
        length = 0
        while length < min(len(shared), len(path)) and shared[length] == path[length]:
            length += 1
        shared = shared[:length]
    return shared


def _purpose_text(
    purpose: Purpose, target: int, counter: TokenCounter, count: Callable[[str], int]
) -> str:
    """The purpose's first line and as many of its sentences as fit in half the target; the
    first line alone shortened to fit the whole target."""
    share = max(1, target // _PURPOSE_SHARE)
    for taken in range(len(purpose.more), 0, -1):
        text = purpose.first + "\n" + " ".join(purpose.more[:taken])
        if count(text) <= share:
            return text
    if purpose.more:  # a long first sentence after the first line: its first words
        sentence = purpose.more[0].split()
        for limit in _WORD_LIMITS[1:4]:
            text = purpose.first + "\n" + _shortened(sentence, limit, brief=False)
            if count(text) <= share:
                return text
    first_words = purpose.first.split()
    for words in (len(first_words), *_WORD_LIMITS):
        text = _shortened(first_words, words, brief=False)
        if count(text) <= target:
            return text
    return _cut(purpose.first, target, counter)


# A collection's documents, by group ---------------------------------------------------------


def _grouped_candidates(entries: Sequence[OutlineEntry]) -> Iterator[str]:
    """Documents by group, each group with its count and its share of the titles shown:
    all of them, then fewer and fewer (at least one per group), then none. The documents
    of no group are one more group (`other`); where no two documents share one, the titles
    of all, then of fewer and fewer, evenly spread."""
    groups = _groups(entries)
    # A folder every group shares says nothing about any of them.
    folders = {label.rpartition("/")[0] for label, _ in groups if label not in ("", _OTHERS)}
    shared = folders.pop() if len(folders) == 1 else ""
    cut = len(shared) + 1 if shared else 0
    groups = [(label if label == _OTHERS else label[cut:], members) for label, members in groups]
    total = len(entries)
    fewest = [len(groups), 0] if groups[0][0] else [1]
    for shown in [*range(total, len(groups), -max(1, total // 16)), *fewest]:
        yield "\n".join(_group_line(label, members, shown, total) for label, members in groups)


def _groups(entries: Sequence[OutlineEntry]) -> list[tuple[str, list[OutlineEntry]]]:
    """The entries by group, in order of their first member; the ungrouped ones together,
    as `other` beside groups, unlabelled when there is no group."""
    members: dict[str, list[OutlineEntry]] = {}
    for entry in entries:
        members.setdefault(entry.context, []).append(entry)
    if "" in members and len(members) > 1:
        members[_OTHERS] = members.pop("")
    return list(members.items())


def _group_line(label: str, members: list[OutlineEntry], shown: int, total: int) -> str:
    """`label (n): title; title`: the group's share of `shown` titles (at least one, with
    `shown` 0 none), evenly spread over its members (the count says how many are not); an
    unlabelled group is its titles alone."""
    names = [
        member.name or member.label or _shortened(member.words, 5, brief=False)
        for member in members
    ]
    share = 0 if shown == 0 else max(1, round(shown * len(members) / total))
    listed = "; ".join(_spread(names, share))
    if not label:
        return listed
    return f"{label} ({len(members)}): {listed}" if listed else f"{label} ({len(members)})"


def _spread(items: list[str], count: int) -> list[str]:
    """`count` of `items`, evenly spread from the first (all if there are fewer)."""
    if count >= len(items):
        return items
    return [items[k * len(items) // count] for k in range(max(count, 0))]


# Building outlines --------------------------------------------------------------------------


def document_outline(
    *,
    text: str,
    kind: str,
    units: Sequence[Span] | None,
    chunk_units: Sequence[int | None],
) -> DocumentOutline | None:
    """The outline of a conversation (its turns' requests) or of a markdown document with
    sections (its table of contents, which may have no entry but still knows the subject of
    each part); None for any other document. A document's terms are put on their chunks by
    `DocumentOutline.placed` (the tree builder does it)."""
    if not units:
        return None
    first_leaf: dict[int, int] = {}
    for leaf, unit in enumerate(chunk_units):
        if unit is not None:
            first_leaf.setdefault(unit, leaf)
    if kind == "conversation":
        entries = _requests(text, units, first_leaf)
        return DocumentOutline(entries=entries, style="requests") if entries else None
    if kind == "markdown":
        contents = _Contents(text, units, first_leaf)
        if not contents.entries and not contents.subjects:
            return None
        return DocumentOutline(
            entries=tuple(contents.entries),
            style="contents",
            subjects=tuple(contents.subjects),
            purpose=contents.purpose(),
        )
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
            OutlineEntry(
                leaf=first_leaf[index], label=f"turn {index + 1}", text=request, kind="turn"
            )
        )
    return tuple(entries)


def _said(text: str, span: Span) -> str:
    """A sentence as an outline shows it: on one line, links as their text (a link target
    costs tokens and says nothing a reader of the summary can follow)."""
    said = _LINK.sub(r"\1", text[span.start : span.end])
    return " ".join(_CUT_LINK.sub(r"\1", said).split())


@dataclass(frozen=True)
class _Place:
    """Where a section is: its unit, where its body starts, its first chunk, whether it
    opens with a heading."""

    unit: Span
    body_start: int
    leaf: int
    headed: bool


class _Contents:
    """A markdown document's table of contents: each section's heading path and lead
    sentence (a section before the first heading shows its lead alone, and nothing when it
    has no prose: a page's navigation links), each defined term with its definition's first
    sentence, and where each heading and term starts (the subjects)."""

    def __init__(self, text: str, units: Sequence[Span], first_leaf: dict[int, int]) -> None:
        self.entries: list[OutlineEntry] = []
        self.subjects: list[Subject] = []
        # A link title's periods are commas here (their places kept): the sentence splitter
        # cut a link whose title holds one ("Chapter 28. Monitoring") in two.
        text = _LINK_TITLE.sub(lambda match: match[1] + _SENTENCE_MARKS.sub(",", match[2]), text)
        self._text = text
        self._title: str | None = None
        self._opening: list[str] = []
        self._opening_done = False
        previous_trail: tuple[str, ...] | None = None
        # The path of the section the text is in: an admonition ("### Note", as html2text
        # writes a note inside a definition) does not open a section of its own.
        content: tuple[str, ...] = ()
        for index, (unit, trail) in enumerate(zip(units, heading_trail(text, units), strict=True)):
            line_end = text.find("\n", unit.start, unit.end)
            first_line = text[unit.start : unit.end if line_end < 0 else line_end]
            heading = parse_heading(first_line)
            body_start = unit.start if heading is None else (unit.end if line_end < 0 else line_end)
            # A unit that continues the section before it (a caller's units, a definition
            # cut out as its own unit) is not a section of its own.
            continued = heading is None and bool(trail) and trail == previous_trail
            previous_trail = trail
            clean = tuple(title for title in trail if not is_admonition(title))
            admonition = heading is not None and is_admonition(heading.title)
            if admonition and heading is not None:
                label = (*content, heading.title)
            else:
                if heading is not None or not content:
                    content = clean
                label = content
            if index in first_leaf:
                place = _Place(unit, body_start, first_leaf[index], heading is not None)
                self._section(place, label, content, admonition=admonition, continued=continued)

    def _section(
        self,
        place: _Place,
        label: tuple[str, ...],
        content: tuple[str, ...],
        *,
        admonition: bool,
        continued: bool,
    ) -> None:
        text, unit, body_start = self._text, place.unit, place.body_start
        path = PATH_SEPARATOR.join(content)
        if place.headed and label:
            self.subjects.append(Subject(char=unit.start, text=path or label[-1]))
            if self._title is None and not admonition:
                self._title = label[-1]
        found = definitions(text, body_start, unit.end)
        before_terms = found[0].term.start if found else unit.end
        lead = lead_sentence(text, body_start, before_terms)
        said = _said(text, lead) if lead is not None else ""
        if said and not continued:
            self.entries.append(
                OutlineEntry(
                    leaf=place.leaf,
                    label=PATH_SEPARATOR.join(label),
                    text=said,
                    depth=len(label),
                    kind="remark" if admonition else "section",
                    char=unit.start,
                )
            )
        self._open(body_start, before_terms, ends=bool(found))
        for definition in found:
            term = _said(text, definition.term)
            self.subjects.append(
                Subject(
                    char=definition.term.start,
                    text=f"{path}{PATH_SEPARATOR}{term}" if path else term,
                )
            )
            first = lead_sentence(text, definition.body.start, definition.body.end)
            if first is None:
                continue
            self.entries.append(
                OutlineEntry(
                    leaf=place.leaf,
                    label=term,
                    text=_said(text, first),
                    depth=len(content) + 1,
                    kind="term",
                    context=path,
                    name=term_name(term),
                    char=definition.term.start,
                )
            )

    def _open(self, start: int, end: int, *, ends: bool) -> None:
        """Collect the document's opening sentences: descriptive ones up to its first term."""
        if self._opening_done:
            return
        for sentence in statements(self._text, start, end):
            if len(self._opening) >= _PURPOSE_SENTENCES:
                break
            self._opening.append(_said(self._text, sentence))
        self._opening_done = ends or len(self._opening) >= _PURPOSE_SENTENCES

    def purpose(self) -> Purpose | None:
        """The title and opening sentences, if the document has a heading."""
        if self._title is None:
            return None
        opening = self._opening
        if not opening:
            return Purpose(title=self._title, first=self._title, more=(), quoted=frozenset())
        first = opening[0]
        if not _starts_with(first, self._title):
            first = f"{self._title}: {first}"
        return Purpose(
            title=self._title, first=first, more=tuple(opening[1:]), quoted=frozenset(opening)
        )


def _starts_with(sentence: str, title: str) -> bool:
    """Whether a sentence opens with the title (markup and case aside)."""
    plain, title = re.sub(r"[`*_]", "", sentence).casefold(), title.casefold()
    return plain.startswith(title) and not plain[len(title) : len(title) + 1].isalnum()


def collection_outline(
    roots: Sequence[tuple[str, str]],
    *,
    ids: Sequence[str] | None = None,
    chunk_roots: Sequence[bool] | None = None,
) -> DocumentOutline | None:
    """The outline of a collection: one entry per document, in collection order, from its
    (title, root summary) — the summary's first line (a document's purpose, a chat's first
    request), led by the title unless that line already starts with it. A root that is a
    document's only chunk (`chunk_roots`) is said by its lead sentence instead of its first
    line (a heading, navigation). Documents are grouped by their `ids` (`document_groups`)."""
    groups = document_groups(ids) if ids is not None else [""] * len(roots)
    entries = []
    for ordinal, (title, summary) in enumerate(roots):
        first_line = summary.strip().split("\n", 1)[0].strip()
        if chunk_roots is not None and chunk_roots[ordinal]:
            lead = lead_sentence(summary, 0, len(summary))
            first_line = _said(summary, lead) if lead is not None else ""
        label = "" if not title or first_line.startswith(title) else title
        if first_line or label:
            entries.append(
                OutlineEntry(
                    leaf=ordinal,
                    label=label,
                    text=first_line,
                    kind="document",
                    context=groups[ordinal],
                    name=title,
                )
            )
    return DocumentOutline(entries=tuple(entries), style="collection") if entries else None
