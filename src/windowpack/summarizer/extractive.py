"""The default summarizer: extractive, deterministic, no LLM.

A node's summary is a selection of whole sentences of its children, verbatim and in source
order, chosen for coverage of the node's content and fitted to a token target.

Method
    1. The children's prose is split into sentences with `split_sentences` (the chunker's
       rules): code blocks (fenced or indented), HTML comments, table markup, headings and
       link lists are not prose (`prose`), and a summary of technical docs must not quote
       them; nor are lead-ins, sentences that end with a colon ("where lockmode is one of:"),
       which say nothing without what follows. Only when a node has no such sentence at all
       are all its sentences units (lead-ins, headings and generic labels such as "Tip" only
       if there is nothing else). A sentence that alone counts
       more than the target is split further at its line breaks; each line is then a unit
       like a sentence. Units are counted with `count_many`. A code-heavy node (prose under a
       third of its tokens) is summarized by its first heading's title and its first prose
       sentence, in that order, instead of steps 2-4 (the lead alone under a generic
       heading such as "Synopsis"). A node without prose is read line by line.
    2. Each unit becomes a TF-IDF vector over its lowercased words (`\\w+`, English stop words
       and one-letter ASCII words dropped), with sublinear term frequency and a smoothed IDF
       computed over the node's own units, L2-normalised. Vectors are kept sparse (COO
       arrays in numpy), so memory is linear in the text even for very wide nodes.
    3. Greedy maximal marginal relevance: with `d = diversity`, a unit scores
       `(1 - d) * cos(unit, centroid of all units) - d * max cos(unit, units already chosen)`.
       The best-scoring unit that still fits the remaining budget is added (ties go to the
       earlier unit: numpy's argmax takes the first maximum), until none fits. A unit whose
       text equals a chosen one is never chosen again. Units of fewer than 3 words (and fewer
       than 20 characters, so that sentences of scripts written without spaces are not all
       "short") are skipped, unless the node has no other units.
    4. The chosen units are put back in source order and joined: units of the same child with
       only whitespace between them in the source by " ", any other two by "\\n", so a line
       break marks where text was left out (a unit may itself contain line breaks: the text is
       verbatim). While the exact count of that text is over the target (the estimate was the
       units' counts plus one token per separator), the last-added unit is dropped.

Special cases
    - Children that are empty or only whitespace are ignored; none left: the summary is "".
    - If the children (each stripped of surrounding whitespace) joined by "\\n" already fit in
      the target, that text is the summary: there is nothing to compress.
    - If no unit fits the target (a tiny target, or only giant sentences), the summary is the
      longest token-aligned prefix of the best unit (the one MMR would pick first) that fits,
      cut back to a word boundary when it ends mid-word (a text without spaces is cut at the
      token boundary). This is the only case where the summary is not whole sentences; it is
      still a verbatim substring of a child. With `target_tokens=1` this is typically the
      first word or word piece of the best sentence.
    - The summary is "" for non-blank children only when no unit's first character fits in the
      target, e.g. target 1 or 2 and every unit starting with a character that alone costs more
      tokens (some CJK characters and emoji do). A character costs at most 4 tokens in a
      byte-level BPE, so any target of 4 or more gives a non-empty summary.

Cost: one exact count of the whole node, one `count_many` over its sentences, and O(number of
word occurrences) numpy work per chosen unit: about 1-2 ms for 8 children of 200 tokens to 200
tokens, about 10 ms for 64 children to 1,600 tokens.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from windowpack.documents import heading_starts
from windowpack.errors import InvalidArgumentError
from windowpack.summarizer.prose import (
    STOP_WORDS,
    descriptive_sentences,
    is_generic_label,
    is_lead_in,
)
from windowpack.text import TokenCounter, split_sentences
from windowpack.types import Span

_WORD = re.compile(r"\w+")
_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}(\s|$)")
_MIN_WORDS = 3
_MIN_CHARS = 20
# A node whose prose sentences hold less than a third of its tokens is "code-heavy".
_CODE_HEAVY = 3
# Tokens allowed for each separator (" " or "\n") in the estimate before the exact count.
_SEPARATOR_TOKENS = 1

_Floats = npt.NDArray[np.float64]
_Ints = npt.NDArray[np.int64]


@dataclass(frozen=True, kw_only=True)
class Excerpt:
    """`children[child][span.start:span.end]`: one verbatim piece of a summary."""

    child: int
    span: Span


@dataclass(frozen=True, slots=True)
class _Unit:
    child: int
    start: int
    end: int
    text: str
    tokens: int


class ExtractiveSummarizer:
    """Picks whole sentences of the children by greedy MMR to a token target (see module)."""

    def __init__(self, *, diversity: float = 0.3) -> None:
        if not 0.0 <= diversity <= 1.0:  # also rejects NaN
            raise InvalidArgumentError("diversity", f"must be in [0, 1], got {diversity}")
        self._diversity = float(diversity)

    @property
    def diversity(self) -> float:
        return self._diversity

    @property
    def summarizer_id(self) -> str:
        return f"extractive-v3-d{self._diversity}"

    def summarize(
        self, children: Sequence[str], *, target_tokens: int, counter: TokenCounter
    ) -> str:
        """The summary of `children`: at most `target_tokens` tokens in `counter`."""
        excerpts = self.select(children, target_tokens=target_tokens, counter=counter)
        return render_excerpts(children, excerpts)

    def select(
        self, children: Sequence[str], *, target_tokens: int, counter: TokenCounter
    ) -> list[Excerpt]:
        """The excerpts `summarize` renders, in source order (for provenance and tests)."""
        if target_tokens < 1:
            raise InvalidArgumentError("target_tokens", f"must be at least 1, got {target_tokens}")
        whole = [
            Excerpt(child=index, span=span)
            for index, child in enumerate(children)
            if (span := _trimmed(child, 0, len(child))) is not None
        ]
        total = counter.count(render_excerpts(children, whole)) if whole else 0
        if not whole or total <= target_tokens:
            return whole
        prose = _units(children, whole, counter, target_tokens, prose_only=True)
        if prose and sum(unit.tokens for unit in prose) * _CODE_HEAVY < total:
            lead = _heading_and_lead(children, whole, prose, counter, target_tokens)
            if lead:
                return lead
        units = prose or _units(children, whole, counter, target_tokens, prose_only=False)
        relevance, similarity_to = _similarities([unit.text for unit in units])
        chosen = self._choose(units, relevance, similarity_to, target_tokens)
        if not chosen:
            return _prefix_fallback(units, relevance, counter, target_tokens)
        while True:
            excerpts = sorted(
                (Excerpt(child=u.child, span=Span(start=u.start, end=u.end)) for u in chosen),
                key=lambda e: (e.child, e.span.start),
            )
            if len(chosen) == 1 or counter.count(render_excerpts(children, excerpts)) <= (
                target_tokens
            ):
                return excerpts
            chosen.pop()

    def _choose(
        self,
        units: list[_Unit],
        relevance: _Floats,
        similarity_to: _SimilarityTo,
        target: int,
    ) -> list[_Unit]:
        """Greedy MMR under the estimated budget; the units in the order they were chosen."""
        d = self._diversity
        costs = np.array([unit.tokens for unit in units], dtype=np.int64)
        long = np.array([not _is_short(unit.text) for unit in units], dtype=bool)
        eligible = long if long.any() else np.ones(len(units), dtype=bool)
        group_of: dict[str, int] = {}
        groups = np.array([group_of.setdefault(u.text, i) for i, u in enumerate(units)])
        max_similarity = np.zeros(len(units))
        chosen: list[_Unit] = []
        used = 0
        while True:
            separator = _SEPARATOR_TOKENS if chosen else 0
            fits = eligible & (costs + separator <= target - used)
            if not fits.any():
                return chosen
            scores = (1.0 - d) * relevance - d * max_similarity
            best = int(np.argmax(np.where(fits, scores, -np.inf)))
            chosen.append(units[best])
            used += int(costs[best]) + separator
            eligible &= groups != groups[best]
            max_similarity = np.maximum(max_similarity, similarity_to(best))


def render_excerpts(children: Sequence[str], excerpts: Sequence[Excerpt]) -> str:
    """Join excerpts (in source order): " " between two with only whitespace between them in
    the same child, "\\n" otherwise."""
    parts: list[str] = []
    previous: Excerpt | None = None
    for excerpt in excerpts:
        text = children[excerpt.child]
        if previous is not None:
            adjacent = previous.child == excerpt.child and (
                not text[previous.span.end : excerpt.span.start].strip()
            )
            parts.append(" " if adjacent else "\n")
        parts.append(text[excerpt.span.start : excerpt.span.end])
        previous = excerpt
    return "".join(parts)


def _trimmed(text: str, start: int, end: int) -> Span | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Span(start=start, end=end) if start < end else None


def _is_label(text: str) -> bool:
    """A lead-in, a heading or a generic label ("Tip"): no summary by itself."""
    return is_lead_in(text) or is_generic_label(text) or _HEADING_LINE.match(text) is not None


def _is_short(text: str) -> bool:
    return len(text) < _MIN_CHARS and len(text.split()) < _MIN_WORDS


def _units(
    children: Sequence[str],
    whole: list[Excerpt],
    counter: TokenCounter,
    target: int,
    *,
    prose_only: bool,
) -> list[_Unit]:
    """The sentences of the children (only prose ones if asked), in order; a sentence over
    `target` is split into lines."""
    split = descriptive_sentences if prose_only else split_sentences
    spans = [
        (excerpt.child, sentence)
        for excerpt in whole
        for sentence in split(children[excerpt.child], excerpt.span.start, excerpt.span.end)
    ]
    if not prose_only:
        # Without prose a node is code or markup, which is read line by line; a lead-in
        # ("where lockmode is one of:"), a heading or a generic label says nothing without
        # what follows it: a unit only when the node has nothing else.
        spans = [(child, line) for child, span in spans for line in _lines(children[child], span)]
        said = [
            (child, span)
            for child, span in spans
            if not _is_label(children[child][span.start : span.end])
        ]
        spans = said or spans
    texts = [children[child][span.start : span.end] for child, span in spans]
    counts = counter.count_many(texts)
    too_big = {
        i
        for i, (count, text) in enumerate(zip(counts, texts, strict=True))
        if count > target and "\n" in text
    }
    lines: dict[int, list[Span]] = {}
    for i in sorted(too_big):
        child, span = spans[i]
        lines[i] = _lines(children[child], span)
    line_counts = iter(
        counter.count_many(
            [children[spans[i][0]][s.start : s.end] for i in sorted(lines) for s in lines[i]]
        )
    )
    units: list[_Unit] = []
    for i, ((child, span), text, count) in enumerate(zip(spans, texts, counts, strict=True)):
        if i not in lines:
            units.append(_Unit(child, span.start, span.end, text, count))
            continue
        for line in lines[i]:
            line_text = children[child][line.start : line.end]
            units.append(_Unit(child, line.start, line.end, line_text, next(line_counts)))
    return units


def _heading_and_lead(
    children: Sequence[str],
    whole: list[Excerpt],
    prose: list[_Unit],
    counter: TokenCounter,
    target: int,
) -> list[Excerpt]:
    """A code-heavy node's summary: its first heading's title and its first prose sentence
    (the lead alone if both do not fit; [] if not even that does)."""
    lead = Excerpt(child=prose[0].child, span=Span(start=prose[0].start, end=prose[0].end))
    heading = _first_heading(children, whole)
    if heading is not None and is_generic_label(
        children[heading.child][heading.span.start : heading.span.end]
    ):
        heading = None  # "Synopsis" names no subject
    for excerpts in ([heading, lead] if heading is not None else [], [lead]):
        ordered = sorted(excerpts, key=lambda e: (e.child, e.span.start))
        if ordered and counter.count(render_excerpts(children, ordered)) <= target:
            return ordered
    return []


def _first_heading(children: Sequence[str], whole: list[Excerpt]) -> Excerpt | None:
    """The title of the first markdown heading in the children, outside code blocks."""
    for excerpt in whole:
        text = children[excerpt.child]
        for start in heading_starts(text, excerpt.span.start, excerpt.span.end, include_start=True):
            line_end = text.find("\n", start, excerpt.span.end)
            line_end = excerpt.span.end if line_end < 0 else line_end
            title_start = start + len(text[start:line_end]) - len(text[start:line_end].lstrip(" #"))
            if (span := _trimmed(text, title_start, line_end)) is not None:
                return Excerpt(child=excerpt.child, span=span)
    return None


def _lines(text: str, span: Span) -> list[Span]:
    lines: list[Span] = []
    start = span.start
    while start < span.end:
        newline = text.find("\n", start, span.end)
        end = span.end if newline < 0 else newline
        if (line := _trimmed(text, start, end)) is not None:
            lines.append(line)
        start = end + 1
    return lines


class _SimilarityTo:
    """Cosine similarity of every unit to one unit, from sparse L2-normalised vectors."""

    def __init__(self, rows: _Ints, cols: _Ints, values: _Floats, units: int, words: int) -> None:
        self._rows, self._cols, self._values = rows, cols, values
        self._units, self._words = units, words
        # COO entries are sorted by row: unit i's entries are [row_starts[i], row_starts[i+1]).
        self._row_starts = np.searchsorted(rows, np.arange(units + 1))

    def __call__(self, unit: int) -> _Floats:
        start, end = self._row_starts[unit], self._row_starts[unit + 1]
        dense = np.zeros(self._words)
        dense[self._cols[start:end]] = self._values[start:end]
        weights = self._values * dense[self._cols]
        return np.bincount(self._rows, weights=weights, minlength=self._units).astype(np.float64)


def _similarities(texts: list[str]) -> tuple[_Floats, _SimilarityTo]:
    """Each unit's cosine to the centroid of all units, and a unit-to-units similarity."""
    vocabulary: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    for index, text in enumerate(texts):
        for word in _WORD.findall(text.lower()):
            if word in STOP_WORDS or (len(word) == 1 and word.isascii()):
                continue
            rows.append(index)
            cols.append(vocabulary.setdefault(word, len(vocabulary)))
    units, words = len(texts), max(len(vocabulary), 1)
    keys, term_counts = np.unique(
        np.array(rows, dtype=np.int64) * words + np.array(cols, dtype=np.int64),
        return_counts=True,
    )
    row, col = keys // words, keys % words
    document_frequency = np.bincount(col, minlength=words)
    idf = np.log((1.0 + units) / (1.0 + document_frequency)) + 1.0
    values = (1.0 + np.log(term_counts)) * idf[col]
    norms = np.sqrt(np.bincount(row, weights=values * values, minlength=units))
    values = values / norms[row]
    centroid = np.bincount(col, weights=values, minlength=words) / units
    centroid_norm = math.sqrt(float(centroid @ centroid))
    if centroid_norm > 0:
        centroid = centroid / centroid_norm
    relevance = np.bincount(row, weights=values * centroid[col], minlength=units)
    return relevance.astype(np.float64), _SimilarityTo(row, col, values, units, words)


def _prefix_fallback(
    units: list[_Unit], relevance: _Floats, counter: TokenCounter, target: int
) -> list[Excerpt]:
    """No unit fits: the longest fitting prefix of the best unit (then of the next best...)."""
    long = [i for i, unit in enumerate(units) if not _is_short(unit.text)]
    short = [i for i, unit in enumerate(units) if _is_short(unit.text)]
    # Stable sorts on -relevance: ties keep source order, as in the MMR loop.
    order = sorted(long, key=lambda i: -relevance[i]) + sorted(short, key=lambda i: -relevance[i])
    for i in order:
        unit = units[i]
        length = _fitting_prefix_length(unit.text, counter, target)
        if length:
            return [Excerpt(child=unit.child, span=Span(start=unit.start, end=unit.start + length))]
    return []


def _fitting_prefix_length(text: str, counter: TokenCounter, target: int) -> int:
    """Length of the longest token-aligned prefix of `text` that counts at most `target`,
    cut back to a word boundary if it ends mid-word; 0 if not even one character fits."""
    candidate = text
    while candidate:
        cuts = counter.cut_points(candidate, target)
        if not cuts:
            return len(candidate) if counter.count(candidate) <= target else 0
        end = cuts[0]
        if not (candidate[end].isspace() or candidate[end - 1].isspace()):
            space = next((k for k in range(end - 1, 0, -1) if candidate[k].isspace()), 0)
            end = space or end
        candidate = candidate[:end].rstrip()
    return 0
