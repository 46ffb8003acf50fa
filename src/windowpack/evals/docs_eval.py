"""The docs eval: real documents, questions with answer strings, every system at each budget.

    docs = load_docs_set(corpus, questions, pages=pages, max_bytes=store.config.max_file_bytes)
    result = DocsEval(docs=docs, budgets=(2000, 4000, 8000))(store)
    result["summary"]["windowpack"]["4000"]["needle_recall"]   # window recall
    result["summary"]["windowpack"]["4000"]["headers_share"]   # of the budget

The corpus is ingested once (one draw: every question is a case over the same documents);
each system answers every question at every budget on the grid machinery of
`evals.runner`. A row holds the **window recall** (`needle_recall`: the answer in the
window's text, matched as `evals.docs_set` normalises), whether the window is **within
budget** (its text recounted in the run's tokenizer), and the share of the budget that is
content, summaries, headers, markers and unused (`evals.composition`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from windowpack.evals.cases import Case
from windowpack.evals.composition import DocumentText, context_composition
from windowpack.evals.contexts import Context, Target
from windowpack.evals.docs_set import DocsSet, answer_found
from windowpack.evals.haystack import Haystack
from windowpack.evals.runner import Cell, GridEval, Progress
from windowpack.text import TokenCounter

if TYPE_CHECKING:
    from windowpack.service import Store

DOCS_BUDGETS = (2000, 4000, 8000)
MATCHING = (
    "answer in the window's text, case-insensitive, whitespace runs as one space, Markdown "
    "emphasis, code backticks, escapes and link targets ignored, typographic quotes as plain"
)


@dataclass(kw_only=True)
class DocsEval(GridEval):
    """The questions of a `DocsSet` over its corpus: a cell per question, one ingest."""

    docs: DocsSet
    budgets: Sequence[int] = DOCS_BUDGETS
    task = "docs"
    # The corpus is the haystack: nothing is planted.
    haystack: Haystack = dataclasses.field(
        default_factory=lambda: Haystack(passages=(), source="docs")
    )
    _texts: dict[tuple[str, str], str | None] = dataclasses.field(
        default_factory=dict, init=False, repr=False
    )

    def __call__(self, store: Store, *, progress: Progress | None = None) -> dict[str, Any]:
        """The grid's result (`GridEval.__call__`) with each case's question, answer, page
        and line under `questions`."""
        result = super().__call__(store, progress=progress)
        result["questions"] = [
            {"case": f"docs-q{q.line}", **dataclasses.asdict(q)} for q in self.docs.questions
        ]
        return result

    def cells(self, counter: TokenCounter) -> list[Cell]:
        return [
            Cell(
                label=f"q{case.params['line']} · {case.params['page'] or 'any page'}",
                build=functools.partial(_fixed, case),
                shares="corpus",
            )
            for case in self.docs.cases(counter)
        ]

    def measures(self, case: Case, context: Context, budget: int, target: Target) -> dict[str, Any]:
        return {
            "line": case.params["line"],
            "page": case.params["page"],
            "kind": case.params["kind"],
            **window_measures(
                case.answers, context, budget, target.counter, self._stored_text(target)
            ),
        }

    def settings(self, counter: TokenCounter) -> dict[str, Any]:
        docs = self.docs
        tokens = sum(counter.count_many([document.text for document in docs.documents]))
        return {
            **super().settings(counter),
            "haystack": docs.corpus,
            "haystack_tokens": tokens,
            "lengths": [tokens],
            "corpus": docs.corpus,
            "pages": docs.pages,
            "questions_file": docs.questions_file,
            "documents": len(docs.documents),
            "questions": len(docs.questions),
            "unanswerable": [dataclasses.asdict(q) for q in docs.unanswerable()],
            "matching": MATCHING,
        }

    def _draws(self, cells: Sequence[Cell]) -> Iterator[tuple[list[Cell], int]]:
        # The file fixes the cases: one draw of them all, whatever `samples` says.
        yield list(cells), self.seed

    def _stored_text(self, target: Target) -> DocumentText:
        """A document's text as the collection stores it (the spans of window items point
        into it), read once per document."""
        collection = target.collection

        def text_of(document_id: str) -> str | None:
            key = (collection.name, document_id)
            if key not in self._texts:
                self._texts[key] = collection.get(document_id).text
            return self._texts[key]

        return text_of


def window_measures(
    answers: Sequence[str],
    context: Context,
    budget: int,
    counter: TokenCounter,
    document_text: DocumentText,
) -> dict[str, Any]:
    """One context's figures: window recall (the share of `answers` in the window), within
    budget (and the recount), and the shares of the budget (`Composition.shares`)."""
    counted = counter.count(context.text)
    composition = context_composition(context, budget, counter, document_text)
    return {
        "needle_recall": sum(answer_found(answer, context.text) for answer in answers)
        / len(answers),
        "within_budget": float(counted <= budget),
        "counted_tokens": counted,
        **composition.shares(),
    }


def _fixed(case: Case, *, seed: int) -> Case:
    return case
