"""How much of a window is content: the share of headers, gap markers, summaries, verbatim
content and unused budget, per budget, over a store and a list of questions.

Run from the repository root with the project virtualenv, over a store built beforehand
(`windowpack ingest FOLDER -c NAME --store STORE`); the store is only read:

    .venv/bin/python benchmarks/window_scaffolding.py --store /tmp/pg-store -c pg \\
        --questions pg
    .venv/bin/python benchmarks/window_scaffolding.py --store /tmp/essays-store -c essays \\
        --questions essays --headers compact --headers full

`--questions` is `pg` (12 questions about PostgreSQL 15's HTML documentation: 60 `sql-*`,
17 `runtime-config-*` and 8 `tutorial-*` pages), `essays` (12 about the NIAH Paul Graham
essays, `../shared/data/niah/paul_graham_essays`), or a JSON-lines file of
`{"question": ..., "answer": ...}` (the answer optional). Each question is packed at each
`--budgets` (default 2000, 4000, 8000) with each `--headers` style asked for (none asked:
the store's default, which also runs code that has no `headers=` option).

Per window, its tokens are split by what they are:
- headers: document headers, collection titles and each passage's and summary's header
  line (the bracketed first line of an item);
- markers: gap markers (what was left out);
- summaries: the text of summary items;
- content: the verbatim text of passages;
- unused: the budget the window did not use;
and the duplicates are counted: items whose text below the header is another item's too.
An item's header line is counted on its own; the rest of an item is its own count less its
header's; what no item holds (document headers, titles, the overview's padding) is the
window's count less its items'. Printed: the mean share of each per budget and style, the
windows holding the answer (when questions have answers) and the duplicates.

Target (issue 26): headers + markers <= 6% and unused <= 1% of a 4K window. Figures go to
`benchmarks/results/window_scaffolding.json`. `--smoke` runs it in seconds over a small
generated store (hash embedder).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_common import add_smoke_option, machine_info, write_results
from rich.console import Console
from rich.table import Table

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.text import TokenCounter, get_token_counter

PARTS = ("headers", "markers", "summaries", "content", "unused")
QUESTIONS: dict[str, list[tuple[str, str]]] = {
    "pg": [
        ("What does the FORCE option of DROP DATABASE do?", "terminate all existing connections"),
        ("what's the default for effective_cache_size", "4 gigabytes"),
        ("What is the default value of max_connections?", "typically 100 connections"),
        ("What does deadlock_timeout control?", "wait on a lock before checking"),
        ("What is the maximum length of an identifier?", "maximum identifier length is 63"),
        ("Which file does ALTER SYSTEM write its settings to?", "postgresql.auto.conf"),
        ("What is the valid range of checkpoint_timeout?", "between 30 seconds and one day"),
        ("What does autovacuum_naptime specify?", "minimum delay between autovacuum runs"),
        ("What does log_min_duration_statement log?", "duration of each completed statement"),
        ("Where can a savepoint be established?", "only be established when inside a transaction"),
        ("What model do PostgreSQL clients and server follow?", "client/server model"),
        ("What does work_mem set?", "base maximum amount of memory"),
    ],
    "essays": [
        ("What calculator did Trevor Blackwell make?", "default alive or default dead"),
        ("What did Paul Graham say about the App Store approval process?", "approval process"),
        ("What kind of visa should the government create?", "visa for startup founders"),
        ("Why do news stories quote PR firms' clients?", "PR firms"),
        ("What startup did Paul Graham and Robert Morris start in 1995?", "Viaweb"),
        ("What did McCarthy discover, according to The Roots of Lisp?", "McCarthy"),
        ("What nonprofit launched an NFT?", "Noora Health"),
        ("Who made a list of the biggest regrets of the dying?", "Bronnie Ware"),
        ("When did Yahoo acquire Viaweb?", "June 1998"),
        ("What should an essay be, besides correct?", "useful"),
        ("Why aren't weird languages weird by accident?", "aren't weird by accident"),
        ("If Lisp is so great, why don't more people use it?", "more people use it"),
    ],
}


def split(window: wp.Window, counter: TokenCounter) -> dict[str, int]:
    """The window's tokens by part (`PARTS`), summing to its budget."""
    parts = dict.fromkeys(PARTS, 0)
    in_items = 0
    for item in window.items:
        in_items += item.tokens
        if item.kind == "gap":
            parts["markers"] += item.tokens
            continue
        header_end = item.text.find("\n") + 1 if item.text.startswith("[") else 0
        header = counter.count(item.text[:header_end]) if header_end else 0
        parts["headers"] += header
        parts["content" if item.kind == "chunk" else "summaries"] += item.tokens - header
    parts["headers"] += window.tokens - in_items
    parts["unused"] = window.budget - window.tokens
    return parts


def duplicates(window: wp.Window) -> int:
    """Items whose text below the header line is an earlier item's too (gaps aside)."""
    seen: set[str] = set()
    repeated = 0
    for item in window.items:
        if item.kind == "gap":
            continue
        header_end = item.text.find("\n") + 1 if item.text.startswith("[") else 0
        body = item.text[header_end:].strip()
        repeated += body in seen
        seen.add(body)
    return repeated


def load_questions(spec: str) -> list[tuple[str, str]]:
    if spec in QUESTIONS:
        return QUESTIONS[spec]
    rows = [json.loads(line) for line in Path(spec).read_text("utf-8").splitlines() if line]
    return [(row["question"], row.get("answer", "")) for row in rows]


def measure(
    col: wp.Collection,
    questions: Sequence[tuple[str, str]],
    budgets: Sequence[int],
    styles: Sequence[str | None],
    tokenizer: str,
) -> list[dict[str, Any]]:
    counter = get_token_counter(tokenizer)
    rows = []
    for style in styles:
        options: dict[str, Any] = {} if style is None else {"headers": style}
        for budget in budgets:
            totals = dict.fromkeys(PARTS, 0)
            answered = asked = repeated = with_repeats = over = 0
            for question, answer in questions:
                window = col.pack(question, budget=budget, tokenizer=tokenizer, **options)
                over += counter.count(window.text) != window.tokens or window.tokens > budget
                for part, tokens in split(window, counter).items():
                    totals[part] += tokens
                found = duplicates(window)
                repeated, with_repeats = repeated + found, with_repeats + (found > 0)
                if answer:
                    asked += 1
                    answered += answer.lower() in window.text.lower()
            spent = budget * len(questions)
            rows.append(
                {
                    "headers_style": style or "default",
                    "budget": budget,
                    "windows": len(questions),
                    **{f"{part}_share": totals[part] / spent for part in PARTS},
                    "scaffolding_share": (totals["headers"] + totals["markers"]) / spent,
                    "answered": answered,
                    "with_answers": asked,
                    "duplicate_items": repeated,
                    "windows_with_duplicates": with_repeats,
                    "miscounted_or_over": over,
                }
            )
    return rows


def _smoke_store(folder: Path) -> wp.Collection:
    """A small store of sectioned documents, one of them twice under another id."""
    rng = random.Random(7)
    words = ["harbor", "lantern", "glacier", "meadow", "falcon", "quarry", "ember", "tundra"]
    documents = []
    for number in range(6):
        sentences = [f"{rng.choice(words).capitalize()} {rng.choice(words)}." for _ in range(120)]
        sections = [
            f"## Part {part}\n\n" + " ".join(sentences[30 * part : 30 * part + 30])
            for part in range(4)
        ]
        documents.append(
            wp.Document(
                text=f"# Guide {number}\n\n" + "\n\n".join(sections),
                id=f"guides/guide-{number}.md",
                kind="markdown",
            )
        )
    documents.append(wp.Document(text=documents[0].text, id="copy/guide-0.md", kind="markdown"))
    store = wp.open(folder, config=StoreConfig(embedder="hash", chunk_tokens=64))
    col = store.collection("smoke")
    col.add(documents)
    return col


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, help="the store to read (a folder)")
    parser.add_argument("-c", "--collection", default="default")
    parser.add_argument("--questions", default="pg", help="pg, essays or a .jsonl file")
    parser.add_argument("--budgets", default="2000,4000,8000")
    parser.add_argument("--headers", action="append", help="header style(s) to compare")
    parser.add_argument("--tokenizer", default="o200k_base")
    parser.add_argument("--embedder", help="the store's embedder, if not its default")
    parser.add_argument("--label", default="", help="a name for this run in the results")
    add_smoke_option(parser)
    args = parser.parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",")]
    styles: list[str | None] = list(args.headers or [None])
    console = Console(width=150)
    with tempfile.TemporaryDirectory(prefix="wp-scaffolding-") as temporary:
        if args.smoke:
            col = _smoke_store(Path(temporary) / "store")
            questions = [("What does part 2 of guide 3 say about falcons?", "")] * 2
            budgets = [300, 800]
        else:
            if args.store is None:
                parser.error("--store is required (or --smoke)")
            config = StoreConfig() if args.embedder is None else StoreConfig(embedder=args.embedder)
            store = wp.open(args.store, config=config, create=False)
            col = store.collection(args.collection)
            questions = load_questions(args.questions)
        rows = measure(col, questions, budgets, styles, args.tokenizer)
    table = Table(title=f"window shares over {len(questions)} questions ({args.tokenizer})")
    for column in ("style", "budget", *PARTS, "hdr+mkr", "answered", "duplicates"):
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(
            str(row["headers_style"]),
            f"{row['budget']:,}",
            *(f"{100 * row[f'{part}_share']:.1f}%" for part in PARTS),
            f"{100 * row['scaffolding_share']:.1f}%",
            f"{row['answered']}/{row['with_answers']}",
            f"{row['duplicate_items']} in {row['windows_with_duplicates']} windows",
        )
    console.print(table)
    if any(row["miscounted_or_over"] for row in rows):
        console.print("[red]a window was over its budget or miscounted[/red]")
        return 1
    path = write_results(
        "window_scaffolding",
        {
            "label": args.label,
            "store": str(args.store) if args.store else "smoke",
            "collection": args.collection,
            "questions": args.questions,
            "rows": rows,
            "machine": machine_info(),
        },
    )
    print(f"Figures written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
