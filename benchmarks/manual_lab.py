"""Window recall on the real manuals, fast enough to compare settings: each manual is ingested
once into a kept collection of one store, then every system answers every question.

    python benchmarks/manual_lab.py --store /tmp/lab/store --manuals debian-handbook,postgresql \
        --systems windowpack,windowpack-ranking,bm25,hybrid --budgets 2000,4000,8000 \
        [--evidence '{"lexical_weight": 1.0}']

A manual is a folder of `examples/manuals/` with `manual.json` (`corpus`: the folder the
pages are read from), `pages.txt` and `questions.jsonl` (`evals.docs_set`). Prints, per
manual, window recall per system and budget overall and per question kind, and the
questions windowpack missed; `--json FILE` writes every row. This is the development loop;
`windowpack eval docs` is the report (same systems, same matching).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench_common import add_smoke_option, need

import windowpack
from windowpack.config import EvidenceSettings, StoreConfig
from windowpack.evals import Target, answer_found, chunk_view, load_manual, make_system
from windowpack.text import get_token_counter

MANUALS = Path(__file__).resolve().parent.parent / "examples" / "manuals"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path)
    parser.add_argument("--manuals", default="debian-handbook,postgresql,python,sqlite")
    parser.add_argument("--systems", default="windowpack,windowpack-ranking,bm25,hybrid,dense")
    parser.add_argument("--budgets", default="2000,4000,8000")
    parser.add_argument("--tokenizer", default="cl100k_base")
    parser.add_argument("--evidence", default="{}", help="EvidenceSettings fields, as JSON")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--misses", action="store_true", help="list windowpack's misses")
    parser.add_argument("--ingest-only", action="store_true", help="ingest, answer nothing")
    parser.add_argument("--prefix", default="manual", help="collections are PREFIX-NAME")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        help="module.CONSTANT=value to try a constant's other value (repeatable)",
    )
    add_smoke_option(parser)
    args = parser.parse_args()
    if args.smoke:
        _smoke()
        return
    if args.store is None:
        parser.error("--store is required")
    for assignment in args.set:
        _set_constant(assignment)
    evidence = EvidenceSettings(**json.loads(args.evidence))
    store = windowpack.open(args.store, config=StoreConfig(evidence=evidence))
    budgets = [int(b) for b in args.budgets.split(",")]
    counter = get_token_counter(args.tokenizer)
    rows: list[dict[str, Any]] = []
    systems = [] if args.ingest_only else args.systems.split(",")
    for name in args.manuals.split(","):
        rows += _manual(
            store,
            f"{args.prefix}-{name}",
            name,
            systems,
            budgets,
            counter,
            args.misses,
        )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


def _manual(
    store: Any,
    collection_name: str,
    name: str,
    systems: list[str],
    budgets: list[int],
    counter: Any,
    misses: bool,
) -> list[dict[str, Any]]:
    docs = load_manual(MANUALS / name, max_bytes=store.config.max_file_bytes)
    return _answer(store, collection_name, name, docs, systems, budgets, counter, misses)


def _answer(
    store: Any,
    collection_name: str,
    name: str,
    docs: Any,
    systems: list[str],
    budgets: list[int],
    counter: Any,
    misses: bool,
) -> list[dict[str, Any]]:
    collection = store.collection(collection_name, tokenizer=counter.name)
    started = time.perf_counter()
    collection.add(list(docs.documents))
    print(
        f"\n## {name}: {len(docs.documents)} pages, {len(docs.questions)} questions "
        f"(ingest {time.perf_counter() - started:.0f} s)"
    )
    target = Target(
        store=store,
        collection=collection,
        counter=counter,
        chunks=lambda: chunk_view(store, collection),
    )
    rows = []
    for system_name in systems:
        system = make_system(system_name)
        system.prepare(target)
        for question in docs.questions:
            for budget in budgets:
                context = system.context(question.question, budget)
                found = [answer_found(answer, context.text) for answer in question.answers]
                rows.append(
                    {
                        "manual": name,
                        "system": system_name,
                        "line": question.line,
                        "kind": question.kind,
                        "budget": budget,
                        "recall": sum(found) / len(found),
                        "tokens": counter.count(context.text),
                        "ms": context.seconds * 1000,
                    }
                )
    _print_tables(rows, systems, budgets)
    if misses:
        by_line = {q.line: q for q in docs.questions}
        for row in rows:
            if row["system"] == "windowpack" and row["recall"] < 1:
                q = by_line[row["line"]]
                print(f"  miss {row['budget']} [{q.kind}] {q.question} -> {q.answers}")
    return rows


def _smoke() -> None:
    """The PostgreSQL manual's first three questions over their own pages, the hash embedder,
    a temporary store: the lab still runs end to end."""
    import tempfile

    from windowpack.evals import DocsSet

    folder = MANUALS / "postgresql"
    corpus = Path(json.loads((folder / "manual.json").read_text())["corpus"])
    need([corpus], what="Debian's postgresql-doc-15")
    docs = load_manual(folder, max_bytes=StoreConfig().max_file_bytes)
    asked = docs.questions[:3]
    pages = {page for question in asked for page in question.pages}
    small = DocsSet(
        corpus=docs.corpus,
        pages=docs.pages,
        questions_file=docs.questions_file,
        documents=tuple(d for d in docs.documents if d.id in pages),
        questions=asked,
    )
    with tempfile.TemporaryDirectory() as folder_name:
        store = windowpack.open(folder_name, config=StoreConfig(embedder="hash"))
        counter = get_token_counter("cl100k_base")
        _answer(
            store,
            "smoke-postgresql",
            "postgresql",
            small,
            ["windowpack", "bm25"],
            [500, 2000],
            counter,
            False,
        )
        store.close()


def _set_constant(assignment: str) -> None:
    """Set `package.module.NAME=value` (a Python literal) for this run."""
    target, value = assignment.split("=", 1)
    module_name, name = target.rsplit(".", 1)
    module = importlib.import_module(module_name)
    if not hasattr(module, name):
        raise SystemExit(f"--set: {module_name} has no {name}")
    setattr(module, name, ast.literal_eval(value))
    print(f"set {target} = {value}")


def _print_tables(rows: list[dict[str, Any]], systems: list[str], budgets: list[int]) -> None:
    cells: dict[tuple[str, str, int], list[float]] = defaultdict(list)
    for row in rows:
        cells[(row["system"], "all", row["budget"])].append(row["recall"])
        cells[(row["system"], row["kind"], row["budget"])].append(row["recall"])
    kinds = ["all", *sorted({row["kind"] for row in rows})]
    print("| kind | system | " + " | ".join(str(b) for b in budgets) + " |")
    for kind in kinds:
        for system in systems:
            values = [cells[(system, kind, b)] for b in budgets]
            shown = " | ".join(f"{sum(v) / len(v):.2f}" if v else "-" for v in values)
            print(f"| {kind} | {system} | {shown} |")


if __name__ == "__main__":
    main()
