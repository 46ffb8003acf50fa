"""The evals over prose facts (associative, multi-hop, aggregation) and over benchmark
files, on the grid machinery of `evals.runner`; see `evals.facts` and `evals.loaders` for
what their cases plant and how they are graded."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from windowpack.errors import InvalidArgumentError
from windowpack.evals.cases import Case
from windowpack.evals.facts import (
    AGGREGATION_FACTS,
    MAX_AGGREGATION_FACTS,
    aggregation_case,
    associative_case,
    multihop_case,
)
from windowpack.evals.haystack import Haystack
from windowpack.evals.loaders import LoadedSet, loaded_cell
from windowpack.evals.options import size_label
from windowpack.evals.runner import Cell, GridEval
from windowpack.text import TokenCounter


@dataclass(kw_only=True)
class AssociativeEval(GridEval):
    """NoLiMa-style needles asked by association, beside the control asked in the needle's
    words: per length, an `associative` and a `control` cell over the same documents."""

    task = "associative"

    def cells(self, counter: TokenCounter) -> list[Cell]:
        cells = []
        for length in self.lengths:
            tokens = self._length(length, counter)
            for variant in ("associative", "control"):
                build = functools.partial(
                    associative_case,
                    self.haystack,
                    counter,
                    length=tokens,
                    control=variant == "control",
                )
                label = f"{variant} · {size_label(tokens)}"
                cells.append(Cell(label=label, build=build, shares=f"associative · {tokens}"))
        return cells


@dataclass(kw_only=True)
class MultiHopEval(GridEval):
    """Two planted facts that must be chained; a cell per length."""

    task = "multihop"

    def cells(self, counter: TokenCounter) -> list[Cell]:
        cells = []
        for length in self.lengths:
            tokens = self._length(length, counter)
            build = functools.partial(multihop_case, self.haystack, counter, length=tokens)
            cells.append(Cell(label=f"multihop · {size_label(tokens)}", build=build))
        return cells


@dataclass(kw_only=True)
class AggregationEval(GridEval):
    """`facts` office openings of one firm spread over the haystack; a cell per length."""

    facts: int = AGGREGATION_FACTS
    task = "aggregation"

    def cells(self, counter: TokenCounter) -> list[Cell]:
        cells = []
        for length in self.lengths:
            tokens = self._length(length, counter)
            build = functools.partial(
                aggregation_case, self.haystack, counter, length=tokens, facts=self.facts
            )
            label = f"aggregation-{self.facts} · {size_label(tokens)}"
            cells.append(Cell(label=label, build=build))
        return cells

    def settings(self, counter: TokenCounter) -> dict[str, Any]:
        return {**super().settings(counter), "facts": self.facts}

    def _check(self) -> None:
        super()._check()
        if not 1 <= self.facts <= MAX_AGGREGATION_FACTS:
            raise InvalidArgumentError(
                "aggregation-facts", f"must be 1 to {MAX_AGGREGATION_FACTS}, got {self.facts}"
            )


@dataclass(kw_only=True)
class LoadedEval(GridEval):
    """The cases of a benchmark file (`evals.loaders`), each run once: the file fixes them,
    so `seed` and `samples` draw nothing. Cases over the same documents (a LOFT prompt's
    queries) share one ingest; the report's task is the file's format."""

    loaded: LoadedSet
    task: str = "loaded"
    # The file is the haystack: no text of its own to plant in.
    haystack: Haystack = dataclasses.field(
        default_factory=lambda: Haystack(passages=(), source="loaded")
    )

    def __post_init__(self) -> None:
        self.task = self.loaded.format
        self.haystack = Haystack(passages=(), source=self.loaded.source)

    def cells(self, counter: TokenCounter) -> list[Cell]:
        return [
            Cell(
                label=loaded_cell(case),
                build=functools.partial(_fixed, case),
                shares=f"documents {id(case.documents[0])}",  # cases built on one corpus
            )
            for case in self.loaded.cases
        ]

    def settings(self, counter: TokenCounter) -> dict[str, Any]:
        cases = self.loaded.cases
        return {
            **super().settings(counter),
            "haystack_tokens": max(case.tokens for case in cases),
            "format": self.loaded.format,
            "cases": len(cases),
            "lengths": sorted({case.tokens for case in cases}),
        }

    def _draws(self, cells: Sequence[Cell]) -> Iterator[tuple[list[Cell], int]]:
        together: dict[str, list[Cell]] = {}
        for cell in cells:
            together.setdefault(cell.shares or cell.label, []).append(cell)
        for group in together.values():
            yield group, self.seed


def _fixed(case: Case, *, seed: int) -> Case:
    return case
