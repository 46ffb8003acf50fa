"""`windowpack eval`: options as text in, report files out, a rich progress bar meanwhile (plain
lines at a steady interval when stderr is not a terminal)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from windowpack.errors import InvalidArgumentError
from windowpack.evals.docs_eval import DOCS_BUDGETS, DocsEval
from windowpack.evals.docs_set import load_docs_set, load_manual
from windowpack.evals.fact_evals import AggregationEval, LoadedEval
from windowpack.evals.haystack import load_haystack
from windowpack.evals.loaders import LOAD_FORMATS, load_cases
from windowpack.evals.options import (
    parse_budgets,
    parse_counts,
    parse_depths,
    parse_names,
    parse_token_sizes,
)
from windowpack.evals.readers import OpenAIReader, Reader
from windowpack.evals.registry import EVALS
from windowpack.evals.report import write_report
from windowpack.evals.runner import MRCR_SHAPES, MrcrEval, NiahEval
from windowpack.evals.systems import SYSTEMS
from windowpack.evals.timing import is_part
from windowpack.ingest import ProgressLog
from windowpack.text import get_token_counter

if TYPE_CHECKING:
    from windowpack.service import Store


@dataclass(frozen=True, kw_only=True)
class EvalRequest:
    """The `windowpack eval` options, as typed on the command line."""

    tasks: Sequence[str]
    budgets: str | None  # None: the docs task's default budgets (no other task has one)
    haystack: Path | None
    lengths: str
    task_lengths: Mapping[str, str | None] = field(default_factory=dict)  # per-task override
    depths: str
    systems: str
    seed: int
    tokenizer: str
    samples: int = 1
    mrcr_shapes: str = "gdm"
    mrcr_needles: str = "2,4,8"
    aggregation_facts: int = 16
    loads: Sequence[Path] = ()  # benchmark files run beside the tasks (`eval load FILE`)
    load_format: str | None = None
    load_limit: int | None = None
    corpus: Path | None = None  # the docs task's corpus folder, questions and pages list
    questions: Path | None = None
    pages: Path | None = None
    manuals: tuple[Path, ...] = ()
    keep_collections: bool = False
    reader: str | None = None  # a local reader by name (READERS)
    reader_url: str | None = None
    reader_model: str | None = None
    reader_key: str | None = None


READERS = ("llama-cpp",)
"""Local LLM readers `--reader` names: llama-cpp runs a GGUF model in process (the bundled
SmolLM2-135M-Instruct, or the file `--reader-model` names)."""


def run_evals(request: EvalRequest, store: Store, out: Path, *, command: str) -> list[Path]:
    """Run each requested eval, then each loaded benchmark file, over `store` and write the
    report under `out`."""
    tasks = parse_names(",".join(request.tasks), "tasks", tuple(EVALS)) if request.tasks else []
    _check_docs_options(request, tasks)
    common: dict[str, Any] = {
        "budgets": _budgets(request, tasks),
        "systems": parse_names(request.systems, "systems", SYSTEMS),
        "tokenizer": request.tokenizer,
        "seed": request.seed,
        "samples": _samples(request.samples),
        "reader": _reader(request),
        "keep_collections": request.keep_collections,
    }
    depths = parse_depths(request.depths)
    # Every option is checked before the first case runs: a typo fails now, not an hour in.
    extras = {task: _task_options(request, task, depths, store) for task in tasks}
    planted = [task for task in tasks if task != "docs"]  # the docs task brings its corpus
    if planted:
        haystack = load_haystack(request.haystack, seed=request.seed)
        for task in planted:
            extras[task]["haystack"] = haystack
    evaluations: list[Any] = []
    for task in tasks:
        if EVALS[task] is DocsEval and request.manuals:
            evaluations += [DocsEval(**common, docs=docs) for docs in extras[task]["manuals"]]
        else:
            evaluations.append(EVALS[task](**common, **extras[task]))
    evaluations += _loaded_evals(request, common)
    if not evaluations:
        raise InvalidArgumentError("tasks", "name a task, or `load FILE`")
    results = []
    console = Console(stderr=True)
    for evaluation in evaluations:
        task = evaluation.task
        started = time.perf_counter()
        shown = _RichProgress(console, task) if console.is_terminal else _LogProgress(console, task)
        with shown as progress:
            result = evaluation(store, progress=progress)
        result["seconds"] = time.perf_counter() - started
        console.print(f"{task}: {len(result['rows'])} rows in {result['seconds']:.0f} s")
        console.print(f"  where the time went: {_stages(result['timing'])}")
        results.append(result)
    return write_report(results, out, command=command)


def _loaded_evals(request: EvalRequest, common: Mapping[str, Any]) -> list[LoadedEval]:
    """An eval per benchmark file, every file parsed before the first case runs."""
    if request.load_format is not None:
        parse_names(request.load_format, "format", LOAD_FORMATS)
    counter = get_token_counter(request.tokenizer)
    options = {key: value for key, value in common.items() if key != "haystack"}
    return [
        LoadedEval(
            loaded=load_cases(path, counter, format_=request.load_format, limit=request.load_limit),
            **options,
        )
        for path in request.loads
    ]


def _budgets(request: EvalRequest, tasks: Sequence[str]) -> list[int]:
    """The budgets given, or the docs task's own when it runs alone."""
    if request.budgets is not None:
        return parse_budgets(request.budgets)
    if tasks and all(task == "docs" for task in tasks) and not request.loads:
        return list(DOCS_BUDGETS)
    default = ",".join(str(budget) for budget in DOCS_BUDGETS)
    raise InvalidArgumentError(
        "budgets", f"give them, e.g. 2k,8k,32k (only the docs task has a default, {default})"
    )


def _check_docs_options(request: EvalRequest, tasks: Sequence[str]) -> None:
    """The docs task's options are given with it, and only with it."""
    given = {"corpus": request.corpus, "questions": request.questions, "pages": request.pages}
    if "docs" not in tasks:
        for name, value in {**given, "manual": request.manuals or None}.items():
            if value is not None:
                raise InvalidArgumentError(name, "only the docs task reads it")
        return
    if request.manuals:
        for name, value in given.items():
            if value is not None:
                raise InvalidArgumentError(name, "give --manual folders or --corpus, not both")
        return
    for name, what in (("corpus", "DIR, the documents"), ("questions", "FILE, a JSONL")):
        if given[name] is None:
            raise InvalidArgumentError(
                name, f"the docs task needs --{name} {what} (--corpus and --questions)"
            )


def _task_options(
    request: EvalRequest, task: str, depths: list[float], store: Store
) -> dict[str, Any]:
    if EVALS[task] is DocsEval and request.manuals:
        return {
            "manuals": [
                load_manual(folder, max_bytes=store.config.max_file_bytes)
                for folder in request.manuals
            ]
        }
    if EVALS[task] is DocsEval:
        assert request.corpus is not None and request.questions is not None
        docs = load_docs_set(
            request.corpus,
            request.questions,
            pages=request.pages,
            max_bytes=store.config.max_file_bytes,
        )
        return {"docs": docs}
    override = request.task_lengths.get(task)
    name = f"{task}-lengths" if override else "lengths"
    lengths = parse_token_sizes(override or request.lengths, name, allow_full=True)
    options: dict[str, Any] = {"lengths": lengths}
    if EVALS[task] is NiahEval:
        options["depths"] = depths
    if EVALS[task] is MrcrEval:
        options["shapes"] = parse_names(request.mrcr_shapes, "mrcr-shapes", tuple(MRCR_SHAPES))
        options["needles"] = parse_counts(request.mrcr_needles, "mrcr-needles", largest=8)
    if EVALS[task] is AggregationEval:
        options["facts"] = request.aggregation_facts
    return options


def _samples(samples: int) -> int:
    if samples < 1:
        raise InvalidArgumentError("samples", f"must be at least 1, got {samples}")
    return samples


def _stages(timing: Mapping[str, float]) -> str:
    stages = {stage: seconds for stage, seconds in timing.items() if not is_part(stage)}
    total = sum(stages.values()) or 1.0
    largest = sorted(stages.items(), key=lambda item: -item[1])[:6]
    return ", ".join(
        f"{stage} {seconds:.0f} s ({seconds / total:.0%})" for stage, seconds in largest
    )


def _reader(request: EvalRequest) -> Reader | None:
    if request.reader is not None:
        return _local_reader(request)
    if request.reader_url is None and request.reader_model is None:
        return None
    if request.reader_url is None or request.reader_model is None:
        raise InvalidArgumentError("reader-url", "give --reader-url and --reader-model together")
    return OpenAIReader(request.reader_url, request.reader_model, api_key=request.reader_key)


def _local_reader(request: EvalRequest) -> Reader:
    """The `--reader` named: a local model, the one `--reader-model` names or the bundled."""
    if request.reader not in READERS:
        raise InvalidArgumentError(
            "reader", f"{request.reader!r} not known; choose from {', '.join(READERS)}"
        )
    if request.reader_url is not None:
        raise InvalidArgumentError("reader", "give --reader or --reader-url, not both")
    model = request.reader_model
    if model is not None and not Path(model).expanduser().is_file():
        raise InvalidArgumentError("reader-model", f"no GGUF model file at {model}")
    from windowpack.evals.local_reader import LlamaCppReader

    return LlamaCppReader(model)


class _LogProgress:
    """The runner's `Progress` as plain lines on stderr at a steady interval (`ProgressLog`):
    what a log gets where no bar can be drawn (a file, a pipe, CI)."""

    def __init__(self, console: Console, task: str) -> None:
        def write(line: str) -> None:
            console.print(line, markup=False, highlight=False, soft_wrap=True)

        self._log = ProgressLog(write, label="eval")
        self._name, self._done = task, 0
        self._total: int | None = None

    def __enter__(self) -> _LogProgress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._log.close()

    def start(self, total: int) -> None:
        self._total = total
        self._log.update(self._name, self._done, total, "cases")

    def advance(self, description: str) -> None:
        self._done += 1
        self._log.update(self._name, self._done, self._total, "cases")


class _RichProgress:
    """The runner's `Progress` as a rich bar on stderr."""

    def __init__(self, console: Console, task: str) -> None:
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        self._bar = Progress(*columns, console=console, transient=True)
        self._task = self._bar.add_task(task, total=None)
        self._name = task

    def __enter__(self) -> _RichProgress:
        self._bar.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._bar.stop()

    def start(self, total: int) -> None:
        self._bar.update(self._task, total=total)

    def advance(self, description: str) -> None:
        self._bar.update(self._task, advance=1, description=f"{self._name}: {description}")
