"""The order-preserving summary tree (design §3), as pure computation over texts.

Level 0 is the chunks. Level 1 summarises runs of consecutive chunks of one document, level 2
runs of level-1 nodes, and so on up to one root per document. Document roots are then grouped
the same way, in collection order, up to one collection root. Runs are as even as possible
(9 children at fan-out 8 make runs of 5 and 4, not 8 and 1), and each summary is asked for
about 1/fan-out of its children's tokens, so the whole tree costs ~1/(fan-out - 1) of the
corpus (about 14% at the default 8).

A node is identified by the hash of its children (their own hashes, the summarizer id and the
tokenizer, and what the document's outline says of them): a node whose children did not
change is looked up in the summary cache, never summarised again. A summarizer failure on
one node falls back to the extractive summary of that node and is reported, not raised.

In a document with an outline (`outline`), a node in which entries start is their outline
(the root's led by what the document is for), and a node in which none starts is the
summarizer's summary led by its subject, the heading path and term it lies under
(`Memory › `work_mem` (`integer`): …`): its sentences alone ("The default value is `off`.")
do not say what they are about.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from windowpack.documents import PATH_SEPARATOR
from windowpack.summarizer.base import Summarizer
from windowpack.summarizer.outline import DocumentOutline
from windowpack.text import TokenCounter
from windowpack.types import Span

DEFAULT_FANOUT = 8
# Below this a summary cannot say anything useful; a node's target never goes lower.
_MIN_TARGET_TOKENS = 32
# Versions the outline rendering in node identities: a change to it recomputes the nodes.
_OUTLINE_ID = "outline-v2"
# Versions how a subject leads a summary, in the identities of nodes that have one.
_SUBJECT_ID = "subject-v1"
# A subject takes at most this share of its node's target; past it, its outer headings go.
_SUBJECT_SHARE = 2
_SUBJECT_SEPARATOR = ": "


@dataclass(frozen=True, kw_only=True)
class TreeItem:
    """A child in the tree: a chunk (level 0) or a built node."""

    text: str
    tokens: int
    content_hash: str
    level: int
    leaf_start: int
    leaf_end: int
    char_start: int | None = None
    char_end: int | None = None


class KnownNode(NamedTuple):
    """A node built before (a stored one), by the hash of its children: what a build over the
    same children would make again, so it is taken as it is."""

    text: str
    tokens: int


@dataclass(frozen=True, kw_only=True)
class BuiltNode(TreeItem):
    """A summary node: a TreeItem plus where its children sit in the level below."""

    position: int
    child_start: int
    child_end: int


class SummaryCache(Protocol):
    """Summaries by children hash; `put` may be called with new ones at any time."""

    def get_many(self, children_hashes: Sequence[str]) -> dict[str, str]: ...

    def put_many(self, summaries: Mapping[str, str]) -> None: ...


@dataclass
class TreeStats:
    """What a build did: nodes summarised afresh, taken from cache, rendered from the
    document's outline, and failures by node."""

    summarised: int = 0
    cached: int = 0
    outlined: int = 0
    failures: dict[str, str] = field(default_factory=dict)


class TreeBuilder:
    """Builds the levels above a list of items with one summarizer, a cache and a fallback."""

    def __init__(
        self,
        summarizer: Summarizer,
        counter: TokenCounter,
        cache: SummaryCache,
        *,
        fallback: Summarizer,
        fanout: int = DEFAULT_FANOUT,
        on_node: Callable[[int], None] | None = None,
    ) -> None:
        self._summarizer = summarizer
        self._counter = counter
        self._cache = cache
        self._fallback = fallback
        self._fanout = fanout
        self._on_node = on_node
        self.stats = TreeStats()

    def levels_above(
        self,
        items: Sequence[TreeItem],
        *,
        label: str,
        balanced: bool = True,
        outline: DocumentOutline | None = None,
        known: Mapping[str, KnownNode] | None = None,
    ) -> list[list[BuiltNode]]:
        """Levels built over `items` (bottom first) until one item remains; [] for 0 or 1.

        `balanced=False` groups in fixed runs of the fan-out from the start, so appending an
        item changes only the last run of each level: the collection levels use it, since
        documents are mostly appended. With the document's `outline` (its request index or
        table of contents), a node in which an outline entry starts is that outline of its
        chunks, and the summarizer summarizes only the others.

        A node whose children hash is in `known` is that node again: it is neither summarised,
        nor rendered, nor counted (the levels come out as without `known`, at the cost of
        hashing each node's children).
        """
        levels: list[list[BuiltNode]] = []
        current: Sequence[TreeItem] = items
        below = _TokensBelow(items, self._fanout)
        if outline is not None and items and all(_has_span(item) for item in items):
            outline = outline.placed([_span(item) for item in items])
        while len(current) > 1:
            level = self._build_level(
                current,
                label=f"{label} level {len(levels) + 1}",
                balanced=balanced,
                outline=_LevelOutline(outline, below, len(levels) + 1) if outline else None,
                known=known or {},
            )
            levels.append(level)
            current = level
        return levels

    def _build_level(
        self,
        items: Sequence[TreeItem],
        *,
        label: str,
        balanced: bool,
        outline: _LevelOutline | None,
        known: Mapping[str, KnownNode],
    ) -> list[BuiltNode]:
        grouping = even_groups if balanced else fixed_groups
        groups = grouping(len(items), self._fanout)
        spans = [(items[start].leaf_start, items[end - 1].leaf_end) for start, end in groups]
        # The one node of a level is the root: a document's root says what it is for.
        root = len(groups) == 1
        keys = [
            outline.outline.key(*span, root=root) if outline is not None else None for span in spans
        ]
        subjects = [
            outline.outline.subject(*span) if outline is not None and key is None else None
            for span, key in zip(spans, keys, strict=True)
        ]
        hashes = [
            self.children_hash(items[start:end], outline_key=key, subject=subject)
            for (start, end), key, subject in zip(groups, keys, subjects, strict=True)
        ]
        reused = [known.get(h) for h in hashes]
        # A node with an outline is not summarized: an LLM would be paid for nothing.
        to_summarize = [
            None if key or again else h for h, key, again in zip(hashes, keys, reused, strict=True)
        ]
        texts = self._summaries(items, groups, to_summarize, label, subjects)
        if outline is not None:
            fresh_keys = [None if again else key for key, again in zip(keys, reused, strict=True)]
            texts = self._outlined(items, groups, texts, outline, fresh_keys, root=root)
        texts, counts = self._counted(texts, reused)
        level = 1 + max(item.level for item in items)
        nodes = []
        for position, ((start, end), children_hash) in enumerate(zip(groups, hashes, strict=True)):
            children = items[start:end]
            nodes.append(
                BuiltNode(
                    text=texts[position],
                    tokens=counts[position],
                    content_hash=children_hash,
                    level=level,
                    leaf_start=children[0].leaf_start,
                    leaf_end=children[-1].leaf_end,
                    char_start=children[0].char_start,
                    char_end=children[-1].char_end,
                    position=position,
                    child_start=start,
                    child_end=end,
                )
            )
        return nodes

    def _counted(
        self, texts: list[str], reused: Sequence[KnownNode | None]
    ) -> tuple[list[str], list[int]]:
        """Each node's text and token count: a known node's as it was, the others counted."""
        fresh = [position for position, again in enumerate(reused) if again is None]
        counts = dict(zip(fresh, self._counter.count_many([texts[p] for p in fresh]), strict=True))
        return (
            [texts[p] if again is None else again.text for p, again in enumerate(reused)],
            [counts[p] if again is None else again.tokens for p, again in enumerate(reused)],
        )

    def children_hash(
        self,
        children: Sequence[TreeItem],
        *,
        outline_key: str | None = None,
        subject: str | None = None,
    ) -> str:
        """A node's identity: its children's hashes, the summarizer and tokenizer, and what
        the outline says of it (its entries, or the subject that leads its summary)."""
        key = [self._summarizer.summarizer_id, self._counter.name, self._fanout]
        key.extend(child.content_hash for child in children)
        if outline_key is not None:
            key.append(f"{_OUTLINE_ID}:{outline_key}")
        if subject is not None:
            key.append(f"{_SUBJECT_ID}:{subject}")
        return hashlib.sha256(json.dumps(key).encode("utf-8")).hexdigest()

    def _outlined(
        self,
        items: Sequence[TreeItem],
        groups: Sequence[tuple[int, int]],
        texts: list[str],
        outline: _LevelOutline,
        keys: Sequence[str | None],
        *,
        root: bool,
    ) -> list[str]:
        """`texts` with each node that has outline entries replaced by its outline."""
        outlined = list(texts)
        for position, ((start, end), key) in enumerate(zip(groups, keys, strict=True)):
            if key is None:
                continue
            first, last = items[start].leaf_start, items[end - 1].leaf_end
            target = outline.target(first, last)
            rendered = outline.outline.render(
                first, last, target=target, counter=self._counter, root=root
            )
            if rendered is not None:
                # Not a summary: the report's `summaries` counts the summarizer's work.
                outlined[position] = rendered
                self.stats.outlined += 1
        return outlined

    def _target(self, children: Sequence[TreeItem]) -> int:
        return max(_MIN_TARGET_TOKENS, math.ceil(sum(c.tokens for c in children) / self._fanout))

    def _summaries(
        self,
        items: Sequence[TreeItem],
        groups: Sequence[tuple[int, int]],
        hashes: Sequence[str | None],
        label: str,
        subjects: Sequence[str | None],
    ) -> list[str]:
        """The summarizer's text of each group, led by its subject if it has one; "" for a
        group whose hash is None (it has an outline instead)."""
        wanted = [h for h in hashes if h is not None]
        cached = self._cache.get_many(wanted)
        jobs: dict[str, _Job] = {}
        for position, ((start, end), children_hash, subject) in enumerate(
            zip(groups, hashes, subjects, strict=True)
        ):
            if children_hash is None:
                continue
            if children_hash in cached or children_hash in jobs:
                self.stats.cached += 1
                continue
            children = items[start:end]
            target = self._target(children)
            lead = self._subject_lead(subject, target)
            jobs[children_hash] = _Job(
                texts=[child.text for child in children],
                target=target - (self._counter.count(lead) if lead else 0),
                label=f"{label} node {position}",
                lead=lead,
                full_target=target,
            )
        fresh = self._run(jobs)
        if fresh:
            self._cache.put_many(fresh)
        return ["" if h is None else cached.get(h) or fresh[h] for h in hashes]

    def _run(self, jobs: dict[str, _Job]) -> dict[str, str]:
        """Summarise every job; a summarizer with `summarize_many` gets them as one batch."""
        many = getattr(self._summarizer, "summarize_many", None)
        if many is not None and jobs:
            results = many(
                [(job.texts, job.target) for job in jobs.values()], counter=self._counter
            )
        else:
            results = [self._attempt(job) for job in jobs.values()]
        fresh = {}
        for (children_hash, job), result in zip(jobs.items(), results, strict=True):
            summary = result if isinstance(result, str) else self._fall_back(job, result)
            fresh[children_hash] = self._led(job, summary)
            self.stats.summarised += 1
            if self._on_node is not None:
                self._on_node(1)
        return fresh

    def _attempt(self, job: _Job) -> str | BaseException:
        try:
            return self._summarizer.summarize(
                job.texts, target_tokens=job.target, counter=self._counter
            )
        except Exception as error:  # any summarizer fault falls back below, and is reported
            return error

    def _subject_lead(self, subject: str | None, target: int) -> str | None:
        """`subject: ` as it leads a summary of `target` tokens: in at most half of it, its
        outer headings dropped as needed (the term or last heading at least); None if even
        that does not fit."""
        if not subject:
            return None
        parts = subject.split(PATH_SEPARATOR)
        for first in range(len(parts)):
            lead = PATH_SEPARATOR.join(parts[first:]) + _SUBJECT_SEPARATOR
            if self._counter.count(lead) * _SUBJECT_SHARE <= target:
                return lead
        return None

    def _led(self, job: _Job, summary: str) -> str:
        """The summary led by the job's subject, within the node's target: the summary's last
        lines go (then its end) if the two count more together than apart; a summary that
        is empty stays empty (a subject alone says nothing)."""
        if job.lead is None or not summary.strip():
            return summary
        subject = job.lead.removesuffix(_SUBJECT_SEPARATOR).split(PATH_SEPARATOR)[-1]
        if summary.lstrip().startswith(subject):  # it names its subject already
            return summary
        text = job.lead + summary
        while self._counter.count(text) > job.full_target:
            lines = text.rsplit("\n", 1)
            if len(lines) == 2 and lines[0] != job.lead.rstrip():
                text = lines[0]
                continue
            cuts = self._counter.cut_points(text, job.full_target)
            cut = text[: cuts[0]].rstrip() if cuts else text
            return cut if self._counter.count(cut) <= job.full_target else summary
        return text

    def _fall_back(self, job: _Job, error: BaseException) -> str:
        self.stats.failures[job.label] = f"{type(error).__name__}: {error}"
        return self._fallback.summarize(job.texts, target_tokens=job.target, counter=self._counter)


class _TokensBelow:
    """Tokens of the items a tree is built over, summed over any run of them."""

    def __init__(self, items: Sequence[TreeItem], fanout: int) -> None:
        self.fanout = fanout
        self._first = items[0].leaf_start if items else 0
        self._prefix = [0, *itertools.accumulate(item.tokens for item in items)]

    def between(self, leaf_start: int, leaf_end: int) -> int:
        return self._prefix[leaf_end - self._first] - self._prefix[leaf_start - self._first]


@dataclass(frozen=True)
class _LevelOutline:
    """A document's outline at one level of its tree, with that level's targets."""

    outline: DocumentOutline
    below: _TokensBelow
    depth: int

    def target(self, leaf_start: int, leaf_end: int) -> int:
        """The nominal target of a node at this depth: its leaves' tokens / fan-out^depth.
        An outline is usually shorter than its target, so a target taken from the children
        (as for summaries) would shrink level by level far faster than the fan-out; the
        tree still costs no more than its nominal ~1/(fan-out - 1) of the corpus."""
        tokens = self.below.between(leaf_start, leaf_end)
        nominal = math.ceil(tokens / float(self.below.fanout) ** self.depth)
        if self.outline.grows_with_children:
            # A collection node, whatever its depth, says as much as one of its documents'
            # roots does on average: nominally the root of 85 pages would get 32 tokens.
            nominal = max(nominal, math.ceil(tokens / max(leaf_end - leaf_start, 1)))
        return max(_MIN_TARGET_TOKENS, nominal)


@dataclass(frozen=True, kw_only=True)
class _Job:
    texts: list[str]
    target: int  # the summary's: the node's less its lead
    label: str
    lead: str | None = None  # "subject: ", which leads the summary
    full_target: int = 0


def _has_span(item: TreeItem) -> bool:
    return item.char_start is not None and item.char_end is not None


def _span(item: TreeItem) -> Span:
    return Span(start=item.char_start or 0, end=item.char_end or 0)


@dataclass(frozen=True, kw_only=True)
class TreeCost:
    """An upper bound on what summarising a tree costs: calls and tokens in and out."""

    calls: int
    input_tokens: int
    output_tokens: int

    def __str__(self) -> str:
        return (
            f"{self.calls:,} summarizer calls, ~{self.input_tokens:,} input tokens, "
            f"<= {self.output_tokens:,} output tokens"
        )


def estimate_tree_cost(
    documents: Sequence[Sequence[int]], *, fanout: int, overhead_per_call: int = 0
) -> TreeCost:
    """Simulate the build from chunk token counts, one list per document.

    Upper levels are assumed to receive the full target of the level below, so this bounds
    the cost; the collection levels above the document roots are included, and so is a fixed
    prompt overhead per call (the prompt template of an LLM summarizer).
    """
    document_costs = [_cost_above(list(tokens), fanout, overhead_per_call) for tokens in documents]
    roots = [root for *_, root in document_costs if root is not None]
    costs = [*document_costs, _cost_above(roots, fanout, overhead_per_call, balanced=False)]
    return TreeCost(
        calls=sum(cost[0] for cost in costs),
        input_tokens=sum(cost[1] for cost in costs),
        output_tokens=sum(cost[2] for cost in costs),
    )


def _cost_above(
    tokens: list[int], fanout: int, overhead: int, *, balanced: bool = True
) -> tuple[int, int, int, int | None]:
    """(calls, input tokens, output tokens, root tokens) of the levels above `tokens`."""
    grouping = even_groups if balanced else fixed_groups
    calls = input_tokens = output_tokens = 0
    while len(tokens) > 1:
        level = []
        for start, end in grouping(len(tokens), fanout):
            children = sum(tokens[start:end])
            level.append(max(_MIN_TARGET_TOKENS, math.ceil(children / fanout)))
            calls += 1
            input_tokens += children + overhead
        output_tokens += sum(level)
        tokens = level
    return calls, input_tokens, output_tokens, tokens[0] if tokens else None


def even_groups(count: int, fanout: int) -> list[tuple[int, int]]:
    """Split `count` consecutive items into ceil(count / fanout) runs of near-equal size."""
    if count <= 0:
        return []
    groups = math.ceil(count / fanout)
    base, extra = divmod(count, groups)
    bounds, start = [], 0
    for index in range(groups):
        end = start + base + (1 if index < extra else 0)
        bounds.append((start, end))
        start = end
    return bounds


def fixed_groups(count: int, fanout: int) -> list[tuple[int, int]]:
    """Split `count` consecutive items into runs of `fanout` from the start (the last shorter)."""
    return [(start, min(start + fanout, count)) for start in range(0, count, fanout)]
