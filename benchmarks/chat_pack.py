"""Packing ordinal questions over a 1M-token MRCR conversation: latency, ordinal-complete,
MRCR grade, at B = 4K, 8K and 32K.

Run from the repository root with the project virtualenv. Building the store embeds the
conversation once (minutes with the bundled model), so keep it with `--store` and reuse it:

    .venv/bin/python benchmarks/chat_pack.py --store /tmp/wp-chat-1m
    .venv/bin/python benchmarks/chat_pack.py --store /tmp/wp-chat-1m --questions 40 --profile 5

The conversation is `windowpack.evals.mrcr_gdm.gdm_mrcr_case` over the RULER essays
(`--length`, default 1M = 1,048,576 o200k tokens; `--needles` instances of the asked key,
default 8; `--seed`), added as one transcript document to collection `chat`. The questions
are MRCR's, about every planted key (the asked key, the other repeated groups, the near
misses), one per instance of each: "Prepend {random} to the {k-th} {format} about {topic}
in a {style} style. ..." Each instance's reply is read from the transcript, so every
question is graded: ordinal-complete (every instance up to the k-th verbatim in the window,
in order) and the MRCR v2 grade of the deterministic reader's reply
(`windowpack.evals.DeterministicReader`).

Per budget, after one untimed pack that loads the packing state:
- "warm": distinct questions whose query vector is already cached (a search embedded each
  one first, untimed): state loaded, vector cached, the window not cached — the pack itself;
- "cold": distinct questions never asked before: the pack with the query embedding;
- "cached": one question repeated (window-cache hits), for reference.
Every window is re-counted with o200k_base: at most B tokens.

Target: warm p50 <= 100 ms at B = 8K. Figures go to `benchmarks/results/chat_pack.json`.
`--smoke` runs it in seconds (a 12K-token conversation, 2 needles, the hash embedder).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import re
import statistics
import string
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_common import (
    ESSAYS_JSON,
    add_smoke_option,
    latency_stats,
    machine_info,
    need,
    profile_text,
    reusable_store_folder,
    write_results,
)
from rich.console import Console
from rich.table import Table

import windowpack as wp
from windowpack.evals import (
    FEW_SHOT,
    INDEX_NAMES,
    Case,
    DeterministicReader,
    gdm_mrcr_case,
    load_haystack,
    score_reply,
)
from windowpack.text import get_token_counter

BUDGETS = (4_096, 8_192, 32_768)
TOKENIZER = "o200k_base"
TARGET_BUDGET, TARGET_P50_MS = 8_192, 100.0
COLLECTION = "chat"
_TURN = re.compile(
    r"(?:^|\n\n)User: Write a ([^\n]+) about ([^\n]+) in ([^\n]+) style\.\n\n"
    r"Assistant: "
)
_NEXT_TURN = re.compile(r"\n\nUser: ")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    console = Console(width=140)
    counter = get_token_counter(TOKENIZER)
    need([ESSAYS_JSON])
    haystack = load_haystack(ESSAYS_JSON)
    started = time.perf_counter()
    case = gdm_mrcr_case(
        haystack, counter, length=args.length, needles=args.needles, seed=args.seed
    )
    generate_seconds = time.perf_counter() - started
    questions = _questions(case, random.Random(args.seed))
    console.print(
        f"Conversation: {case.tokens:,} tokens, {case.params['turns']:,} turns, generated in "
        f"{generate_seconds:.1f} s; {len(questions)} ordinal questions over "
        f"{len(case.params['planted'])} planted keys"
    )
    figures: dict[str, Any] = {
        "command": " ".join(sys.argv),
        "conversation": {
            "tokens": case.tokens,
            "turns": case.params["turns"],
            "planted": case.params["planted"],
            "seed": args.seed,
        },
    }
    config = wp.StoreConfig(embedder="hash") if args.hash_embedder else wp.StoreConfig()
    with (
        reusable_store_folder(args.store, "wp-chat-bench-") as folder,
        wp.open(folder, config=config) as store,
    ):
        collection = store.collection(COLLECTION, tokenizer=TOKENIZER)
        figures["build"] = _build(console, collection, case)
        figures["budgets"] = {
            str(budget): _measure(console, collection, questions, budget, args)
            for budget in BUDGETS
        }
        if args.profile:
            console.print(_profile(collection, questions, args))
    figures["target"] = _verdict(figures)
    figures["machine"] = machine_info()
    _print(console, figures)
    console.print(f"Figures written to {write_results('chat_pack', figures)}")
    return 0


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Pack latency and ordinal completeness over a 1M-token MRCR conversation.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--store", type=Path, help="store folder to build or reuse")
    parser.add_argument("--length", type=int, default=1 << 20, help="conversation tokens")
    parser.add_argument("--needles", type=int, default=8, help="instances of the asked key")
    parser.add_argument("--seed", type=int, default=0, help="seed of the conversation")
    parser.add_argument("--questions", type=int, default=30, help="questions per budget/regime")
    parser.add_argument("--repeats", type=int, default=20, help="packs of the cached question")
    parser.add_argument("--profile", type=int, default=0, help="cProfile N warm packs at 8K")
    parser.add_argument(
        "--hash-embedder", action="store_true", help="model-free vectors (quick, not realistic)"
    )
    add_smoke_option(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        args.length, args.needles, args.hash_embedder = 12_000, 2, True
        args.questions, args.repeats, args.profile = 2, 1, min(args.profile, 1)
    if args.questions < 2 or args.repeats < 1 or args.profile < 0:
        parser.error("--questions must be at least 2, --repeats positive, --profile >= 0")
    return args


@dataclasses.dataclass(frozen=True)
class _Asked:
    """One planted key and one of its instances, as a question the reader can be graded on."""

    case: Case
    key: tuple[str, str, str]
    k: int

    def with_code(self, rng: random.Random) -> Case:
        """This question under a fresh random string: a text never asked before."""
        code = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(12))
        fmt, topic, style = self.key
        question = (
            f"Prepend {code} to the {INDEX_NAMES[self.k - 1]} {fmt} about {topic} in a {style} "
            "style. Do not include any other text in your response."
        )
        needles = self.case.needles
        params = {**self.case.params, "k": self.k, "prefix": code}
        return dataclasses.replace(
            self.case,
            question=question,
            answers=(f"{code} {needles[self.k - 1]}",),
            params=params,
        )


def _questions(case: Case, rng: random.Random) -> list[_Asked]:
    """A question per instance of every planted key, in a shuffled order."""
    text = case.documents[0].text
    replies: dict[tuple[str, str, str], list[str]] = {}
    for match in _TURN.finditer(text, len(FEW_SHOT)):
        end = _NEXT_TURN.search(text, match.end())
        reply = text[match.end() : end.start() if end else len(text)]
        replies.setdefault((match.group(1), match.group(2), match.group(3)), []).append(reply)
    asked: list[_Asked] = []
    for label in case.params["planted"]:
        key = tuple(part.strip() for part in label.split("|"))
        assert len(key) == 3
        fmt, topic, style = key
        instances = tuple(replies[(fmt, topic, style)])
        params = {
            **case.params,
            "format": fmt,
            "topic": topic,
            "style": style,
            "request": f"Write a {fmt} about {topic} in {style} style.",
        }
        keyed = dataclasses.replace(case, needles=instances, params=params)
        asked += [_Asked(keyed, (fmt, topic, style), k) for k in range(1, len(instances) + 1)]
    rng.shuffle(asked)
    return asked


def _build(console: Console, collection: wp.Collection, case: Case) -> dict[str, Any]:
    started = time.perf_counter()
    report = collection.add(case.documents)
    seconds = time.perf_counter() - started
    stats = collection.stats()
    built = report.added + report.replaced > 0
    console.print(
        f"Store {'built' if built else 'reused'} in {seconds:.1f} s: {stats.chunks:,} chunks, "
        f"{stats.tokens:,} tokens, {report.embedded:,} texts embedded"
    )
    return {
        "built_now": built,
        "add_seconds": seconds,
        "chunks": stats.chunks,
        "tokens": stats.tokens,
        "embedded": report.embedded,
    }


def _measure(
    console: Console,
    collection: wp.Collection,
    questions: Sequence[_Asked],
    budget: int,
    args: argparse.Namespace,
) -> dict[str, Any]:
    rng = random.Random(f"{args.seed}:{budget}")
    started = time.perf_counter()
    collection.pack("What was asked first?", budget=budget, tokenizer=TOKENIZER)
    first = time.perf_counter() - started
    picked = [questions[i % len(questions)] for i in range(args.questions)]
    warm_cases = [asked.with_code(rng) for asked in picked]
    for case in warm_cases:
        collection.search(case.question, k=1)  # embeds the question: its vector is cached
    warm = [_pack(collection, case, budget) for case in warm_cases]
    cold = [_pack(collection, asked.with_code(rng), budget) for asked in picked]
    repeated = warm_cases[0]
    cached = [_pack(collection, repeated, budget)[0] for _ in range(args.repeats)]
    graded = warm + cold
    figures: dict[str, Any] = {
        "first_pack_seconds": first,
        "warm": latency_stats([seconds for seconds, _, _, _ in warm]),
        "cold": latency_stats([seconds for seconds, _, _, _ in cold]),
        "cached": latency_stats(cached),
        "ordinal_complete": statistics.fmean(complete for _, complete, _, _ in graded),
        "mrcr_grade": statistics.fmean(grade for _, _, grade, _ in graded),
        "max_tokens": max(tokens for _, _, _, tokens in graded),
        "questions": len(graded),
    }
    assert figures["max_tokens"] <= budget, f"a window over its budget {budget}"
    console.print(
        f"B={budget:,}: first pack {first * 1000:.0f} ms; warm p50 "
        f"{figures['warm']['p50_ms']:.1f} ms, cold p50 {figures['cold']['p50_ms']:.1f} ms; "
        f"ordinal-complete {figures['ordinal_complete']:.2f}, grade {figures['mrcr_grade']:.2f}"
    )
    return figures


def _pack(collection: wp.Collection, case: Case, budget: int) -> tuple[float, float, float, int]:
    """Seconds to pack, ordinal-complete (0/1), MRCR grade of the reader, tokens re-counted."""
    started = time.perf_counter()
    window = collection.pack(case.question, budget=budget, tokenizer=TOKENIZER)
    seconds = time.perf_counter() - started
    complete = float(bool(case.ordinal_complete(window.text)))
    grade = score_reply(case, DeterministicReader().answer(case, window.text))
    return seconds, complete, grade, get_token_counter(TOKENIZER).count(window.text)


def _profile(
    collection: wp.Collection, questions: Sequence[_Asked], args: argparse.Namespace
) -> str:
    rng = random.Random("profile")
    cases = [questions[i % len(questions)].with_code(rng) for i in range(args.profile)]
    for case in cases:
        collection.search(case.question, k=1)

    def packs() -> None:
        for case in cases:
            collection.pack(case.question, budget=TARGET_BUDGET, tokenizer=TOKENIZER)

    return profile_text(packs)


def _verdict(figures: dict[str, Any]) -> dict[str, Any]:
    p50 = figures["budgets"][str(TARGET_BUDGET)]["warm"]["p50_ms"]
    return {"warm_p50_ms_at_8k": p50, "target_ms": TARGET_P50_MS, "met": p50 <= TARGET_P50_MS}


def _print(console: Console, figures: dict[str, Any]) -> None:
    table = Table(title="Pack over the MRCR conversation (ms; o200k_base)")
    for column in (
        "budget",
        "first",
        "warm p50",
        "warm p95",
        "cold p50",
        "cold p95",
        "cached p50",
        "ordinal-complete",
        "MRCR grade",
        "max tokens",
    ):
        table.add_column(column, justify="right")
    for budget, cell in figures["budgets"].items():
        table.add_row(
            f"{int(budget):,}",
            f"{cell['first_pack_seconds'] * 1000:.0f}",
            f"{cell['warm']['p50_ms']:.1f}",
            f"{cell['warm']['p95_ms']:.1f}",
            f"{cell['cold']['p50_ms']:.1f}",
            f"{cell['cold']['p95_ms']:.1f}",
            f"{cell['cached']['p50_ms']:.2f}",
            f"{cell['ordinal_complete']:.2f}",
            f"{cell['mrcr_grade']:.2f}",
            f"{cell['max_tokens']:,}",
        )
    console.print(table)
    target = figures["target"]
    verdict = "met" if target["met"] else "NOT met"
    console.print(
        f"Target warm p50 <= {target['target_ms']:.0f} ms at B=8K: "
        f"{target['warm_p50_ms_at_8k']:.1f} ms, {verdict}. "
        f"Load average at the end: {figures['machine']['load_average_at_end']}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
