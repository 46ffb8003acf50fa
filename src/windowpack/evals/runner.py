"""The evals: callables that run every system at every budget on generated cases and return
metric dicts (sentence-transformers' evaluator habit).

    result = NiahEval(haystack, budgets=(2048, 8192), lengths=(8192,), depths=(0.0, 0.5))(store)
    result["summary"]["windowpack"]["8192"]["needle_recall"]

Each case becomes one collection of `store`; the store's embedding cache (keyed by content
hash) makes every passage shared by several cases cost one embedding per run. Per case,
system and budget a row records the needle recall (asked needles verbatim in the context),
the deterministic reader's score (and the LLM reader's, when one is given), the exact tokens
used and the seconds the system took to build the context (after one untimed warm-up call,
so loading a collection's indexes is not charged to the first budget).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from windowpack.errors import InvalidArgumentError
from windowpack.evals.cases import Case
from windowpack.evals.haystack import Haystack
from windowpack.evals.mrcr import NEEDLE_COUNTS, mrcr_case
from windowpack.evals.needles import RULER_TASKS, niah_case, ruler_case
from windowpack.evals.readers import DeterministicReader, Reader, score_reply
from windowpack.evals.systems import SYSTEMS, System, Target, make_system
from windowpack.text.tokens import TokenCounter, get_token_counter

if TYPE_CHECKING:
    from windowpack.evals.chunk_view import ChunkView
    from windowpack.service import Store

_WARM_UP_QUESTION = "What is this text about?"


class Progress(Protocol):
    """Where a run reports its progress (the CLI draws a rich progress bar)."""

    def start(self, total: int) -> None: ...

    def advance(self, description: str) -> None: ...


@dataclass(kw_only=True)
class _Eval:
    """What every eval shares: the haystack, the grid of budgets and the systems."""

    haystack: Haystack
    budgets: Sequence[int]
    lengths: Sequence[int | None] = (None,)  # None: the whole haystack
    systems: Sequence[str] = SYSTEMS
    tokenizer: str = "o200k_base"
    seed: int = 0
    reader: Reader | None = None  # a real reader, scored beside the deterministic one

    task = "eval"

    def cases(self, counter: TokenCounter) -> Iterator[Case]:
        raise NotImplementedError

    def __call__(self, store: Store, *, progress: Progress | None = None) -> dict[str, Any]:
        """Run the grid over `store` and return the settings, one row per (case, system,
        budget) and the per-system, per-budget means."""
        self._check()
        counter = get_token_counter(self.tokenizer)
        cases = list(self.cases(counter))
        if progress is not None:
            progress.start(len(cases) * len(self.systems) * len(self.budgets))
        rows = [row for case in cases for row in self._run_case(store, case, counter, progress)]
        return {
            "task": self.task,
            "settings": self.settings(counter),
            "rows": rows,
            "summary": summarise(rows),
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

    def _run_case(
        self, store: Store, case: Case, counter: TokenCounter, progress: Progress | None
    ) -> list[dict[str, Any]]:
        collection = store.collection(f"eval-{case.name}", tokenizer=self.tokenizer)
        collection.add(case.documents)
        chunks: list[ChunkView] = []

        def chunk_view() -> ChunkView:
            if not chunks:
                from windowpack.evals.chunk_view import chunk_view as load

                chunks.append(load(store, collection))
            return chunks[0]

        target = Target(store=store, collection=collection, counter=counter, chunks=chunk_view)
        rows: list[dict[str, Any]] = []
        for name in self.systems:
            system = make_system(name)
            system.prepare(target)
            system.context(_WARM_UP_QUESTION, min(self.budgets))
            for budget in self.budgets:
                rows.append(self._row(case, system, budget))
                if progress is not None:
                    progress.advance(f"{case.name} · {name} · {budget:,}")
        return rows

    def _row(self, case: Case, system: System, budget: int) -> dict[str, Any]:
        context = system.context(case.question, budget)
        reply = DeterministicReader().answer(case, context.text)
        row: dict[str, Any] = {
            "task": case.task,
            "case": case.name,
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
        if self.reader is not None:
            row["llm_score"] = score_reply(case, self.reader.answer(case, context.text))
        return row


@dataclass(kw_only=True)
class NiahEval(_Eval):
    """Needle in a haystack: one needle per (length, depth) cell of the grid."""

    depths: Sequence[float] = (0.0, 0.25, 0.5, 0.75, 1.0)
    task = "niah"

    def cases(self, counter: TokenCounter) -> Iterator[Case]:
        for length in self.lengths:
            for depth in self.depths:
                yield niah_case(
                    self.haystack,
                    counter,
                    length=self._length(length, counter),
                    depth=depth,
                    seed=self.seed,
                )

    def settings(self, counter: TokenCounter) -> dict[str, Any]:
        return {**super().settings(counter), "depths": list(self.depths)}


@dataclass(kw_only=True)
class RulerEval(_Eval):
    """RULER-style multi-key (number and uuid keys), multi-value and multi-query needles."""

    tasks: Sequence[str] = RULER_TASKS
    task = "ruler"

    def cases(self, counter: TokenCounter) -> Iterator[Case]:
        for length in self.lengths:
            for task in self.tasks:
                yield ruler_case(
                    self.haystack,
                    counter,
                    task=task,
                    length=self._length(length, counter),
                    seed=self.seed,
                )


@dataclass(kw_only=True)
class MrcrEval(_Eval):
    """MRCR-style conversations with 2, 4 and 8 identical requests."""

    needles: Sequence[int] = NEEDLE_COUNTS
    task = "mrcr"

    def cases(self, counter: TokenCounter) -> Iterator[Case]:
        for length in self.lengths:
            for needles in self.needles:
                yield mrcr_case(
                    self.haystack,
                    counter,
                    length=self._length(length, counter),
                    needles=needles,
                    seed=self.seed,
                )


EVALS: dict[str, type[_Eval]] = {"niah": NiahEval, "ruler": RulerEval, "mrcr": MrcrEval}


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """Per system and budget: mean recall, score and tokens, median and p95 latency."""
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["system"], row["budget"]), []).append(row)
    summary: dict[str, dict[str, dict[str, float]]] = {}
    for (system, budget), group in groups.items():
        latencies = sorted(row["latency_ms"] for row in group)
        cell = {
            "cases": float(len(group)),
            "needle_recall": statistics.fmean(row["needle_recall"] for row in group),
            "score": statistics.fmean(row["score"] for row in group),
            "tokens": statistics.fmean(row["tokens"] for row in group),
            "max_tokens": float(max(row["tokens"] for row in group)),
            "latency_p50_ms": statistics.median(latencies),
            "latency_p95_ms": latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))],
        }
        if "llm_score" in group[0]:
            cell["llm_score"] = statistics.fmean(row["llm_score"] for row in group)
        summary.setdefault(system, {})[str(budget)] = cell
    return summary
