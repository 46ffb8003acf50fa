"""The evals: callables that run every system at every budget on generated cases and return
metric dicts (sentence-transformers' evaluator habit).

    result = NiahEval(haystack, budgets=(2048, 8192), lengths=(8192,), depths=(0.0, 0.5))(store)
    result["summary"]["windowpack"]["8192"]["needle_recall"]

An eval is a grid of cells (NIAH: length x depth; RULER: task x length; MRCR: shape x needles
x length); each cell draws `samples` cases with seeds `seed`, `seed + 1`, ... The cases of an
eval take turns in one collection of `store` (`eval-{task}-{tokenizer}`): a case's documents
are upserted by id over the previous case's, whose other documents are deleted, and the
collection is deleted at the end, so the store keeps no case (`keep_collections` gives each
case a collection of its own and keeps it). Upserts make a case that shares passages with the one
before (NIAH at one length) re-index only what changed, and the store's embedding cache
(keyed by content hash) makes every text shared by several cases cost one embedding per run;
the baselines reuse the vectors windowpack stored. Per case,
system and budget a row records the needle recall (asked needles verbatim in the context),
for MRCR whether the window is ordinal-complete, the deterministic reader's score (and the
LLM reader's, when one is given), the exact tokens used and the seconds the system took to
build the context (after one untimed warm-up call, so loading a collection's indexes is not
charged to the first budget). Where the run's time went is kept per case and in total.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from windowpack.errors import CollectionNotFoundError, InvalidArgumentError
from windowpack.evals.cases import Case
from windowpack.evals.contexts import Context, Target
from windowpack.evals.haystack import Haystack
from windowpack.evals.mrcr import NEEDLE_COUNTS, mrcr_case
from windowpack.evals.mrcr_gdm import gdm_mrcr_case
from windowpack.evals.needles import RULER_TASKS, niah_case, ruler_case
from windowpack.evals.options import size_label
from windowpack.evals.readers import DeterministicReader, Reader, llm_reply, score_reply
from windowpack.evals.summary import summarise, summarise_cells
from windowpack.evals.systems import SYSTEMS, System, make_system
from windowpack.evals.timing import StageClock
from windowpack.text import TokenCounter, get_token_counter
from windowpack.types import Document

if TYPE_CHECKING:
    from windowpack.evals.chunk_view import ChunkView
    from windowpack.service import Collection, Store

_WARM_UP_QUESTION = "What is this text about?"
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
# The MRCR shapes: GDM's MRCR v2 transcripts and OpenAI's MRCR message lists.
MRCR_SHAPES: dict[str, Callable[..., Case]] = {"gdm": gdm_mrcr_case, "openai": mrcr_case}


class Progress(Protocol):
    """Where a run reports its progress (the CLI draws a rich progress bar)."""

    def start(self, total: int) -> None: ...

    def advance(self, description: str) -> None: ...


@dataclass(frozen=True, kw_only=True)
class Cell:
    """One point of an eval's grid; `build(seed=...)` draws one of its cases. Cells with
    the same `shares` draw cases over the same documents for a seed (one MRCR conversation
    for 2, 4 and 8 needles): those cases are run together on one ingest."""

    label: str
    build: Callable[..., Case]
    shares: str | None = None


@dataclass(frozen=True, kw_only=True)
class _Draw:
    """Cases of one seed over the same documents, each with its cell's label."""

    seed: int
    cases: list[tuple[str, Case]]

    @property
    def documents(self) -> tuple[Document, ...]:
        documents = self.cases[0][1].documents
        if any(case.documents != documents for _, case in self.cases):
            raise AssertionError("cells that share documents built different ones")
        return documents

    def record(self, clock: StageClock, embedded: int) -> dict[str, Any]:
        """The draw's line of the report: its cases, size, fresh embeddings and seconds."""
        return {
            "cases": [case.name for _, case in self.cases],
            "cells": [cell for cell, _ in self.cases],
            "seed": self.seed,
            "tokens": self.cases[0][1].tokens,
            "embedded": embedded,
            "seconds": clock.take_case(),
        }


@dataclass(kw_only=True)
class GridEval:
    """The base of every eval (subclasses give `task` and `cells`): the haystack, the grid
    of budgets, the systems, the samples."""

    haystack: Haystack
    budgets: Sequence[int]
    lengths: Sequence[int | None] = (None,)  # None: the whole haystack
    systems: Sequence[str] = SYSTEMS
    tokenizer: str = "o200k_base"
    seed: int = 0
    samples: int = 1  # cases per cell, seeds seed .. seed + samples - 1
    reader: Reader | None = None  # a real reader, scored beside the deterministic one
    keep_collections: bool = False

    task = "eval"

    def cells(self, counter: TokenCounter) -> list[Cell]:
        raise NotImplementedError

    def __call__(self, store: Store, *, progress: Progress | None = None) -> dict[str, Any]:
        """Run the grid over `store` and return the settings, one row per (case, system,
        budget), the per-system, per-budget figures over all cases and per cell, and where
        the time went."""
        self._check()
        counter = get_token_counter(self.tokenizer)
        cells = self.cells(counter)
        if progress is not None:
            progress.start(len(cells) * self.samples * len(self.systems) * len(self.budgets))
        clock = StageClock()
        rows: list[dict[str, Any]] = []
        draws: list[dict[str, Any]] = []
        place = _CasePlace(store, self.task, self.tokenizer, keep=self.keep_collections)
        for cells_of_draw, seed in self._draws(cells):
            with clock("generate"):
                draw = _Draw(
                    seed=seed, cases=[(cell.label, cell.build(seed=seed)) for cell in cells_of_draw]
                )
            with clock("ingest"):
                collection, embedded = place.holding(draw.cases[0][1], draw.documents, clock)
            rows += self._run_draw(store, collection, draw, _Run(counter, clock, progress))
            draws.append(draw.record(clock, embedded))
        with clock("delete"):
            place.empty()
        return {
            "task": self.task,
            "settings": self.settings(counter),
            "rows": rows,
            "summary": summarise(rows),
            "cells": summarise_cells(rows),
            "cases": draws,
            "timing": clock.total,
            "cpu_timing": clock.total_cpu,
        }

    def settings(self, counter: TokenCounter) -> dict[str, Any]:
        return {
            "haystack": self.haystack.source,
            "haystack_tokens": self.haystack.total_tokens(counter),
            "budgets": list(self.budgets),
            "lengths": [self._length(length, counter) for length in self.lengths],
            "systems": list(self.systems),
            "tokenizer": self.tokenizer,
            "seed": self.seed,
            "samples": self.samples,
            "reader": "deterministic" + (f" + {self.reader.name}" if self.reader else ""),
        }

    def _length(self, length: int | None, counter: TokenCounter) -> int:
        return self.haystack.total_tokens(counter) if length is None else length

    def _check(self) -> None:
        if not self.budgets or any(budget < 1 for budget in self.budgets):
            raise InvalidArgumentError("budgets", "give at least one positive budget")
        unknown = [name for name in self.systems if name not in SYSTEMS]
        if unknown or not self.systems:
            raise InvalidArgumentError("systems", f"choose from {', '.join(SYSTEMS)}")
        if self.samples < 1:
            raise InvalidArgumentError("samples", f"must be at least 1, got {self.samples}")

    def _draws(self, cells: Sequence[Cell]) -> Iterator[tuple[list[Cell], int]]:
        """The cells to draw together and their seed: every cell alone, seed after seed,
        except cells sharing documents, drawn together for each seed."""
        together: dict[str, list[Cell]] = {}
        for cell in cells:
            together.setdefault(cell.shares or f"alone: {cell.label}", []).append(cell)
        for group in together.values():
            for seed in range(self.seed, self.seed + self.samples):
                yield group, seed

    def _run_draw(
        self, store: Store, collection: Collection, draw: _Draw, run: _Run
    ) -> list[dict[str, Any]]:
        """Every system prepared once over the draw's collection, then asked each case's
        question at every budget."""
        chunks: list[ChunkView] = []

        def chunk_view() -> ChunkView:
            if not chunks:
                from windowpack.evals.chunk_view import chunk_view as load

                with run.clock("chunk vectors"):
                    chunks.append(load(store, collection))
            return chunks[0]

        target = Target(store=store, collection=collection, counter=run.counter, chunks=chunk_view)
        rows: list[dict[str, Any]] = []
        for name_of_system in self.systems:
            system = make_system(name_of_system)
            with run.clock(f"prepare {name_of_system}"):
                system.prepare(target)
                system.context(_WARM_UP_QUESTION, min(self.budgets))
            for cell, case in draw.cases:
                for budget in self.budgets:
                    with run.clock(f"contexts {name_of_system}"):
                        row, text = self._row(case, (cell, draw.seed), system, budget, target)
                    if self.reader is not None:
                        # A stage of its own: a model's answer can take far longer than the
                        # window it reads.
                        with run.clock(f"reader {name_of_system}"):
                            row |= llm_reply(self.reader, case, text)
                    rows.append(row)
                    run.advance(f"{case.name} · {name_of_system} · {budget:,}")
        return rows

    def _row(
        self, case: Case, drawn: tuple[str, int], system: System, budget: int, target: Target
    ) -> tuple[dict[str, Any], str]:
        """The row of `system`'s window for `case` at `budget` (the real reader's score is
        added by the caller), and the window's text."""
        context = system.context(case.question, budget)
        row: dict[str, Any] = {
            "task": case.task,
            "case": case.name,
            "cell": drawn[0],
            "seed": drawn[1],
            "length": case.length,
            "haystack_tokens": case.tokens,
            "depth": case.depth,
            "system": system.name,
            "budget": budget,
            **self.measures(case, context, budget, target),
            "tokens": context.tokens,
            "latency_ms": context.seconds * 1000.0,
        }
        return row, context.text

    def measures(self, case: Case, context: Context, budget: int, target: Target) -> dict[str, Any]:
        """What a row says of one context: needle recall, the deterministic reader's score
        and, for MRCR, whether the window is ordinal-complete."""
        reply = DeterministicReader().answer(case, context.text)
        measured: dict[str, Any] = {
            "needle_recall": case.needle_recall(context.text),
            "score": score_reply(case, reply),
        }
        complete = case.ordinal_complete(context.text)
        if complete is not None:
            measured["ordinal_complete"] = float(complete)
        return measured


class _CasePlace:
    """The collection the cases of one eval take turns in (see the module docstring).

    Why not a collection per case, deleted after it: SQLite hands a deleted collection's id
    to the next one created, whose index versions then start again at those the store's
    packer has cached for the deleted one.
    """

    def __init__(self, store: Store, task: str, tokenizer: str, *, keep: bool) -> None:
        self._store, self._tokenizer, self._keep = store, tokenizer, keep
        suffix = _NAME_UNSAFE.sub("-", tokenizer)[-40:]
        self._shared = (
            None if keep else store.collection(f"eval-{task}-{suffix}", tokenizer=tokenizer)
        )

    def holding(
        self, case: Case, documents: Sequence[Document], clock: StageClock
    ) -> tuple[Collection, int]:
        """A collection holding exactly `documents` (named for `case` when each case keeps
        its own), and how many texts were embedded afresh (the rest came from the cache)."""
        if self._shared is None:
            collection = self._store.collection(f"eval-{case.name}", tokenizer=self._tokenizer)
        else:
            collection = self._shared
            wanted = {document.id for document in documents}
            for document_id in self._stored_ids():
                if document_id not in wanted:
                    collection.delete(document_id)
        report = collection.add(documents, progress=clock.ingest_stages())
        return collection, report.embedded

    def empty(self) -> None:
        """Delete the shared collection, the last case's documents with it (unless every
        case keeps its collection). One statement, where deleting a full-essays case's
        passages one by one took ~0.7 s each; the embedding cache is the store's, not the
        collection's, so the next run still finds every vector."""
        if self._shared is not None:
            with contextlib.suppress(CollectionNotFoundError):
                self._store.delete_collection(self._shared.name)

    def _stored_ids(self) -> list[str]:
        """What the shared collection holds: nothing before its first write creates it."""
        assert self._shared is not None
        try:
            return [info.id for info in self._shared.documents()]
        except CollectionNotFoundError:
            return []


@dataclass(frozen=True)
class _Run:
    """What every draw of a run shares: the counter, the clock and the progress bar."""

    counter: TokenCounter
    clock: StageClock
    progress: Progress | None

    def advance(self, description: str) -> None:
        if self.progress is not None:
            self.progress.advance(description)


@dataclass(kw_only=True)
class NiahEval(GridEval):
    """Needle in a haystack: one needle per (length, depth) cell of the grid."""

    depths: Sequence[float] = (0.0, 0.25, 0.5, 0.75, 1.0)
    task = "niah"

    def cells(self, counter: TokenCounter) -> list[Cell]:
        cells = []
        for length in self.lengths:
            tokens = self._length(length, counter)
            for depth in self.depths:
                build = functools.partial(
                    niah_case, self.haystack, counter, length=tokens, depth=depth
                )
                label = f"niah · {size_label(tokens)} · depth {depth * 100:.0f}%"
                cells.append(Cell(label=label, build=build))
        return cells

    def settings(self, counter: TokenCounter) -> dict[str, Any]:
        return {**super().settings(counter), "depths": list(self.depths)}


@dataclass(kw_only=True)
class RulerEval(GridEval):
    """RULER-style multi-key (number and uuid keys), multi-value and multi-query needles."""

    tasks: Sequence[str] = RULER_TASKS
    task = "ruler"

    def cells(self, counter: TokenCounter) -> list[Cell]:
        cells = []
        for length in self.lengths:
            tokens = self._length(length, counter)
            for task in self.tasks:
                build = functools.partial(
                    ruler_case, self.haystack, counter, task=task, length=tokens
                )
                cells.append(Cell(label=f"{task} · {size_label(tokens)}", build=build))
        return cells


@dataclass(kw_only=True)
class MrcrEval(GridEval):
    """MRCR conversations with 2, 4 and 8 instances of the asked request, in GDM's MRCR v2
    shape (one transcript text, `format`/`topic`/`style` keys) and/or OpenAI's."""

    needles: Sequence[int] = NEEDLE_COUNTS
    shapes: Sequence[str] = ("gdm",)
    task = "mrcr"

    def cells(self, counter: TokenCounter) -> list[Cell]:
        cells = []
        for shape in self.shapes:
            for length in self.lengths:
                tokens = self._length(length, counter)
                # A GDM conversation holds an asked key per needle count (one ingest for the
                # cases of all counts); an OpenAI one is drawn per count.
                shares = f"{shape} · {tokens}" if shape == "gdm" else None
                together = {"together": tuple(self.needles)} if shares else {}
                for needles in self.needles:
                    build = functools.partial(
                        MRCR_SHAPES[shape],
                        self.haystack,
                        counter,
                        length=tokens,
                        needles=needles,
                        **together,
                    )
                    label = f"mrcr-{shape}-{needles} · {size_label(tokens)}"
                    cells.append(Cell(label=label, build=build, shares=shares))
        return cells

    def settings(self, counter: TokenCounter) -> dict[str, Any]:
        extra = {"shapes": list(self.shapes), "needles": list(self.needles)}
        return {**super().settings(counter), **extra}

    def _check(self) -> None:
        super()._check()
        unknown = [shape for shape in self.shapes if shape not in MRCR_SHAPES]
        if unknown or not self.shapes:
            raise InvalidArgumentError("mrcr-shapes", f"choose from {', '.join(MRCR_SHAPES)}")
