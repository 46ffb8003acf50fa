"""The evals: callables that run every system at every budget on generated cases and return
metric dicts (sentence-transformers' evaluator habit).

    result = NiahEval(haystack, budgets=(2048, 8192), lengths=(8192,), depths=(0.0, 0.5))(store)
    result["summary"]["windowpack"]["8192"]["needle_recall"]

An eval is a grid of cells (NIAH: length x depth; RULER: task x length; MRCR: shape x needles
x length); each cell draws `samples` cases with seeds `seed`, `seed + 1`, ... The cases of an
eval take turns in one collection of `store` (`eval-{task}-{tokenizer}`): a case's documents
are upserted by id over the previous case's, whose other documents are deleted, and the last
case's are deleted at the end, so the store keeps no case (`keep_collections` gives each case
a collection of its own and keeps it). Upserts make a case that shares passages with the one
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

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from windowpack.errors import InvalidArgumentError
from windowpack.evals.cases import Case
from windowpack.evals.haystack import Haystack
from windowpack.evals.mrcr import NEEDLE_COUNTS, mrcr_case
from windowpack.evals.mrcr_gdm import gdm_mrcr_case
from windowpack.evals.needles import RULER_TASKS, niah_case, ruler_case
from windowpack.evals.options import size_label
from windowpack.evals.readers import DeterministicReader, Reader, score_reply
from windowpack.evals.summary import summarise, summarise_cells
from windowpack.evals.systems import SYSTEMS, System, Target, make_system
from windowpack.evals.timing import StageClock
from windowpack.text.tokens import TokenCounter, get_token_counter

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
    """One point of an eval's grid; `build(seed=...)` draws one of its cases."""

    label: str
    build: Callable[..., Case]


@dataclass(kw_only=True)
class _Eval:
    """What every eval shares: the haystack, the grid of budgets, the systems, the samples."""

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
        cases: list[dict[str, Any]] = []
        place = _CasePlace(store, self.task, self.tokenizer, keep=self.keep_collections)
        for cell in cells:
            for seed in range(self.seed, self.seed + self.samples):
                run = _Run(cell=cell.label, seed=seed, counter=counter, clock=clock)
                with clock("generate"):
                    case = cell.build(seed=seed)
                with clock("ingest"):
                    collection, embedded = place.holding(case, clock)
                rows += self._run_case(store, collection, case, run, progress)
                cases.append({**run.record(case), "embedded": embedded})
        with clock("delete"):
            place.empty()
        return {
            "task": self.task,
            "settings": self.settings(counter),
            "rows": rows,
            "summary": summarise(rows),
            "cells": summarise_cells(rows),
            "cases": cases,
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

    def _run_case(
        self,
        store: Store,
        collection: Collection,
        case: Case,
        run: _Run,
        progress: Progress | None,
    ) -> list[dict[str, Any]]:
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
            for budget in self.budgets:
                with run.clock(f"contexts {name_of_system}"):
                    rows.append(self._row(case, run, system, budget))
                if progress is not None:
                    progress.advance(f"{case.name} · {name_of_system} · {budget:,}")
        return rows

    def _row(self, case: Case, run: _Run, system: System, budget: int) -> dict[str, Any]:
        context = system.context(case.question, budget)
        reply = DeterministicReader().answer(case, context.text)
        row: dict[str, Any] = {
            "task": case.task,
            "case": case.name,
            "cell": run.cell,
            "seed": run.seed,
            "length": case.length,
            "haystack_tokens": case.tokens,
            "depth": case.depth,
            "system": system.name,
            "budget": budget,
            "needle_recall": case.needle_recall(context.text),
            "score": score_reply(case, reply),
            "tokens": context.tokens,
            "latency_ms": context.seconds * 1000.0,
        }
        complete = case.ordinal_complete(context.text)
        if complete is not None:
            row["ordinal_complete"] = float(complete)
        if self.reader is not None:
            row["llm_score"] = score_reply(case, self.reader.answer(case, context.text))
        return row


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

    def holding(self, case: Case, clock: StageClock) -> tuple[Collection, int]:
        """A collection holding exactly `case.documents`, and how many texts were embedded
        afresh (the rest came from the embedding cache)."""
        if self._shared is None:
            collection = self._store.collection(f"eval-{case.name}", tokenizer=self._tokenizer)
        else:
            collection = self._shared
            wanted = {document.id for document in case.documents}
            for info in collection.documents():
                if info.id not in wanted:
                    collection.delete(info.id)
        report = collection.add(case.documents, progress=clock.ingest_stages())
        return collection, report.embedded

    def empty(self) -> None:
        """Delete the last case's documents (unless every case keeps its collection)."""
        if self._shared is not None:
            for info in self._shared.documents():
                self._shared.delete(info.id)


@dataclass(frozen=True, kw_only=True)
class _Run:
    """What the rows of one case share: its cell, its seed, the counter and the clock."""

    cell: str
    seed: int
    counter: TokenCounter
    clock: StageClock

    def record(self, case: Case) -> dict[str, Any]:
        """The case's line of the report: its size and the seconds of each stage."""
        seconds = self.clock.take_case()
        return {
            "case": case.name,
            "cell": self.cell,
            "seed": self.seed,
            "tokens": case.tokens,
            "seconds": seconds,
        }


@dataclass(kw_only=True)
class NiahEval(_Eval):
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
class RulerEval(_Eval):
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
class MrcrEval(_Eval):
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
                for needles in self.needles:
                    build = functools.partial(
                        MRCR_SHAPES[shape], self.haystack, counter, length=tokens, needles=needles
                    )
                    label = f"mrcr-{shape}-{needles} · {size_label(tokens)}"
                    cells.append(Cell(label=label, build=build))
        return cells

    def settings(self, counter: TokenCounter) -> dict[str, Any]:
        extra = {"shapes": list(self.shapes), "needles": list(self.needles)}
        return {**super().settings(counter), **extra}

    def _check(self) -> None:
        super()._check()
        unknown = [shape for shape in self.shapes if shape not in MRCR_SHAPES]
        if unknown or not self.shapes:
            raise InvalidArgumentError("mrcr-shapes", f"choose from {', '.join(MRCR_SHAPES)}")


EVALS: dict[str, type[_Eval]] = {"niah": NiahEval, "ruler": RulerEval, "mrcr": MrcrEval}
