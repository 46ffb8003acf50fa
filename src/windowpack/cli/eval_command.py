"""`windowpack eval`: the evals over a store, reported as JSON, markdown and plots."""

from __future__ import annotations

import contextlib
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from windowpack.cli.options import EmbedderOption, IndexDirOption, open_store
from windowpack.cli.output import console

if TYPE_CHECKING:
    from windowpack.service import Store


def eval_(
    tasks: Annotated[
        list[str],
        typer.Argument(
            help="niah, ruler, mrcr, associative, multihop, aggregation and/or docs (real "
            "documents: --corpus, --questions); or `load FILE...` to run benchmark files "
            "(LOFT prompt, OpenAI MRCR JSONL, GDM MRCR v2 CSV, RULER JSONL)."
        ),
    ],
    budgets: Annotated[
        str | None,
        typer.Option(
            help="Budgets, e.g. 2k,8k,32k,128k (K = 1024); required, except for docs alone "
            "(default 2000,4000,8000)."
        ),
    ] = None,
    haystack: Annotated[
        Path | None, typer.Option(help="Folder of .txt, JSON {text}, JSONL; generated if none.")
    ] = None,
    lengths: Annotated[str, typer.Option(help="Haystack lengths, e.g. 8k,32k,full.")] = "8k",
    ruler_lengths: Annotated[
        str | None, typer.Option(help="RULER lengths (default: --lengths).")
    ] = None,
    mrcr_lengths: Annotated[
        str | None, typer.Option(help="MRCR conversation lengths (default: --lengths).")
    ] = None,
    associative_lengths: Annotated[
        str | None, typer.Option(help="Associative haystack lengths (default: --lengths).")
    ] = None,
    multihop_lengths: Annotated[
        str | None, typer.Option(help="Multi-hop haystack lengths (default: --lengths).")
    ] = None,
    aggregation_lengths: Annotated[
        str | None, typer.Option(help="Aggregation haystack lengths (default: --lengths).")
    ] = None,
    aggregation_facts: Annotated[
        int, typer.Option(help="Office openings planted per aggregation case.")
    ] = 16,
    load: Annotated[
        list[Path] | None, typer.Option(help="A benchmark file to run beside the tasks.")
    ] = None,
    load_format: Annotated[
        str | None,
        typer.Option("--format", help="Format of the loaded files (default: detected)."),
    ] = None,
    load_limit: Annotated[
        int | None, typer.Option(help="At most this many rows of each loaded file.")
    ] = None,
    corpus: Annotated[
        Path | None,
        typer.Option(help="docs: the folder of documents (parsed as `windowpack ingest` does)."),
    ] = None,
    questions: Annotated[
        Path | None,
        typer.Option(
            help='docs: JSONL of {"question", "answer" or "answers", "page" or "pages", "kind"} '
            "(all but question and answer optional)."
        ),
    ] = None,
    pages: Annotated[
        Path | None,
        typer.Option(help="docs: a file listing the pages of --corpus to use, one a line."),
    ] = None,
    manual: Annotated[
        list[Path] | None,
        typer.Option(
            help="docs: a manual folder (manual.json, pages.txt, questions.jsonl), e.g. "
            "examples/manuals/postgresql; repeat it to run several, each its own report section."
        ),
    ] = None,
    depths: Annotated[str, typer.Option(help="NIAH needle depths in %.")] = "0,25,50,75,100",
    systems: Annotated[str, typer.Option(help="Systems compared side by side.")] = (
        "windowpack,truncation,dense,dos-rag,bm25,llama-index,llama-index-reorder,raptor,hybrid,"
        "windowpack-ranking"
    ),
    out: Annotated[Path, typer.Option(help="Folder for the report and plots.")] = Path(
        "eval-results"
    ),
    store: Annotated[
        str | None,
        typer.Option("--store", help="Store folder or URL to reuse (default: a temporary one)."),
    ] = None,
    index_dir: IndexDirOption = None,
    seed: Annotated[int, typer.Option(help="Seed of every generator.")] = 0,
    samples: Annotated[
        int, typer.Option(help="Cases per cell (seeds seed, seed+1, ...): mean and 95% interval.")
    ] = 1,
    mrcr_shapes: Annotated[
        str, typer.Option(help="MRCR conversation shapes: gdm (MRCR v2 transcripts), openai.")
    ] = "gdm",
    mrcr_needles: Annotated[
        str, typer.Option(help="Instances of the asked MRCR request, e.g. 2,4,8.")
    ] = "2,4,8",
    keep_collections: Annotated[
        bool, typer.Option(help="Keep each case's collection in the store (default: deleted).")
    ] = False,
    tokenizer: Annotated[str, typer.Option(help="Tokenizer of every count.")] = "o200k_base",
    reader: Annotated[
        str | None,
        typer.Option(
            help="A local LLM reader scored beside the deterministic one: llama-cpp (the "
            "bundled SmolLM2-135M-Instruct, or the .gguf file --reader-model names; needs "
            "windowpack[reader])."
        ),
    ] = None,
    reader_url: Annotated[
        str | None, typer.Option(help="OpenAI-compatible endpoint of an LLM reader.")
    ] = None,
    reader_model: Annotated[
        str | None,
        typer.Option(help="Model name of the LLM reader (with --reader llama-cpp: a .gguf file)."),
    ] = None,
    reader_key: Annotated[
        str | None, typer.Option(envvar="WINDOWPACK_READER_API_KEY", help="Its API key.")
    ] = None,
    embedder: EmbedderOption = None,
) -> None:
    """Run NIAH, RULER-style, MRCR-style, associative, multi-hop, aggregation and
    real-document evals; write JSON, markdown and PNG plots."""
    from windowpack.evals import EvalRequest, run_evals

    # `eval load FILE...` runs benchmark files alone; `--load FILE` runs one beside tasks.
    loading = tasks[0] == "load"
    files = [Path(name) for name in tasks[1:]] if loading else []
    if loading and not files:
        raise typer.BadParameter("name the file(s) to load", param_hint="tasks")
    request = EvalRequest(
        tasks=[] if loading else tasks,
        budgets=budgets,
        haystack=haystack,
        lengths=lengths,
        task_lengths={
            "ruler": ruler_lengths,
            "mrcr": mrcr_lengths,
            "associative": associative_lengths,
            "multihop": multihop_lengths,
            "aggregation": aggregation_lengths,
        },
        depths=depths,
        systems=systems,
        seed=seed,
        samples=samples,
        mrcr_shapes=mrcr_shapes,
        mrcr_needles=mrcr_needles,
        aggregation_facts=aggregation_facts,
        loads=[*files, *(load or [])],
        load_format=load_format,
        load_limit=load_limit,
        corpus=corpus,
        questions=questions,
        pages=pages,
        manuals=tuple(manual or ()),
        keep_collections=keep_collections,
        tokenizer=tokenizer,
        reader=reader,
        reader_url=reader_url,
        reader_model=reader_model,
        reader_key=reader_key,
    )
    with _eval_store(store, index_dir, embedder) as opened:
        paths = run_evals(request, opened, out, command=" ".join(["windowpack", *sys.argv[1:]]))
    print(Path(paths[1]).read_text(encoding="utf-8"))
    console.print(f"Report written to {out}: " + ", ".join(path.name for path in paths))


@contextlib.contextmanager
def _eval_store(store: str | None, index_dir: str | None, embedder: str | None) -> Iterator[Store]:
    """The given store, or a temporary one removed afterwards (one store per run, so the
    embedding cache serves every case of the run)."""
    with contextlib.ExitStack() as stack:
        folder = store or stack.enter_context(tempfile.TemporaryDirectory(prefix="wp-eval-"))
        opened = stack.enter_context(open_store(folder, index_dir, embedder))
        yield opened
