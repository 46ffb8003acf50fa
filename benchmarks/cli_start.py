"""Cold `windowpack pack`, `windowpack search` and `windowpack mcp` processes over an existing
store.

    .venv/bin/python benchmarks/cli_start.py                     # the demo store, built by
                                                                 # `windowpack demo` (real model)
    .venv/bin/python benchmarks/cli_start.py --store /tmp/wp-demo            # kept: built once
    .venv/bin/python benchmarks/cli_start.py --essays --store /tmp/wp-essays # NIAH's essays

Each run is a new process running the console script's code, as a user's shell starts it:
nothing of windowpack loaded, the page cache warm (a first, untimed run of each command reads
the files, writes the byte code, and makes the ONNX query model if none is kept). Per run:
the wall seconds from spawn to exit and the child's user+sys CPU seconds (a loaded machine
moves wall times far more than CPU times: the load average is printed at start and end).
One more run of each under `python -X importtime` gives the seconds spent importing and
whether torch, transformers, sentence-transformers or another heavy package was imported.
Also `windowpack --help`; `windowpack mcp` on stdio with its stdin at end of file (the whole
start of the server, then its exit: a run fails if the exit prints a traceback or "Exception
in thread"); and `pack --questions` over a file of questions: one process, so the start is
paid once. The store is `--store` (built there by `windowpack demo`, or with
`--essays` by `windowpack ingest` of ../shared/data's 48 NIAH essays, when the folder holds
none), else a temporary demo store. Figures go to `benchmarks/results/cli_start.json`.
`--smoke` builds a demo store with the hash embedder and runs each command twice: a check.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_common import NIAH_ESSAYS, add_smoke_option, need, write_results

# The console script's own code (`windowpack = windowpack.cli:main`), run by this Python.
CONSOLE_SCRIPT = "import sys; from windowpack.cli import main; sys.argv[0] = 'windowpack'; main()"
HEAVY = (
    "torch",
    "transformers",
    "sentence_transformers",
    "llama_index",
    "langchain",
    "ray",
    "pandas",
    "sklearn",
    "scipy",
    "matplotlib",
    "fastapi",
    "uvicorn",
    "alembic",
)
"""Packages a question's path need not import (alembic: only when a migration is due; scipy:
only to write BM25 segments)."""
DEMO_QUESTIONS = (
    "Which frequency does the Cinder Bay emergency beacon use?",
    "Who services the generator?",
    "What did the night crew inventory?",
    "When is the supply ship due?",
    "What is the handbook's rule for radio checks?",
)
ESSAY_QUESTIONS = (
    "Why should founders do things that don't scale?",
    "What makes a good startup idea?",
    "How did the essays describe the role of investors?",
    "What does the author say about programming languages?",
    "What is the advice about hiring early employees?",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="the store (built there when missing)")
    parser.add_argument("--essays", action="store_true", help="a store of NIAH's essays")
    parser.add_argument("--collection", default="default")
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each command")
    parser.add_argument(
        "--budget",
        type=int,
        help="the pack's budget (default: 1,000 for the demo's ~3K tokens, which a budget "
        "past them would pack whole without embedding the question; 8,192 for the essays)",
    )
    parser.add_argument("--questions", type=int, default=20, help="questions of the batch")
    parser.add_argument(
        "--only",
        default="pack,search,mcp,help,questions",
        help="what to run, of pack, search, mcp, help, questions (pack --questions): an older "
        "checkout (PYTHONPATH) has no --questions",
    )
    add_smoke_option(parser)
    args = parser.parse_args()
    embedder = ["--embedder", "hash"] if args.smoke else []
    args.budget = args.budget or (8_192 if args.essays else 1_000)
    if args.smoke:
        args.runs, args.questions = 1, 3
    print(f"load average at start: {_load()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="wp-cli-start-") as temporary:
        store = args.store or Path(temporary) / "store"
        build_seconds = _built(store, args, embedder)
        base = ["--store", str(store), "-c", args.collection, *embedder]
        asked = ESSAY_QUESTIONS if args.essays else DEMO_QUESTIONS
        commands = {
            "pack": ["pack", asked[0], "--budget", str(args.budget), *base],
            "search": ["search", asked[0], *base],
            "mcp": ["mcp", "--store", str(store), *embedder],
            "help": ["--help"],
        }
        chosen = args.only.split(",")
        figures: dict[str, Any] = {
            name: _measured(command, args.runs)
            for name, command in commands.items()
            if name in chosen
        }
        if "questions" in chosen:
            figures["pack_questions"] = _batch(asked, args, base, Path(temporary))
    _report(figures)
    figures |= {
        "store": "essays" if args.essays else "demo",
        "build_seconds": build_seconds,
        "budget": args.budget,
        "runs": args.runs,
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "load_average_at_end": list(os.getloadavg()),
    }
    print(f"load average at end: {_load()}")
    print(f"Figures written to {write_results('cli_start', figures)}")


def _built(store: Path, args: argparse.Namespace, embedder: list[str]) -> float | None:
    """Build the store when `store` holds none: the seconds it took, else None."""
    if (store / "windowpack.db").exists():
        return None
    if args.essays:
        need([NIAH_ESSAYS], what="the NIAH essays in ../shared/data")
        command = ["ingest", str(NIAH_ESSAYS), "--store", str(store), "-c", args.collection]
    else:
        command = ["demo", "--store", str(store), "-c", args.collection]
    print(f"building the store: windowpack {' '.join(command + embedder)}", flush=True)
    started = time.perf_counter()
    done = _run([*command, *embedder])
    if done.returncode != 0:
        raise SystemExit(f"building the store failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - started


def _measured(command: list[str], runs: int) -> dict[str, Any]:
    """A first run (the page cache, byte code, the kept query model), `runs` timed ones and
    one under -X importtime."""
    first = _timed(command)
    timed = [_timed(command) for _ in range(runs)]
    walls = [wall for wall, _ in timed]
    cpus = [cpu for _, cpu in timed]
    imports = _imports(command)
    return {
        "command": "windowpack " + " ".join(command),
        "first_wall_s": first[0],
        "wall_s": {"p50": statistics.median(walls), "min": min(walls), "max": max(walls)},
        "cpu_s": {"p50": statistics.median(cpus), "min": min(cpus), "max": max(cpus)},
        **imports,
    }


def _batch(
    asked: tuple[str, ...], args: argparse.Namespace, base: list[str], folder: Path
) -> dict[str, Any]:
    """`pack --questions` over `args.questions` questions (the list repeated with a number,
    so that no two hit the window cache): one process against one a question."""
    file = folder / "questions.txt"
    lines = [f"{asked[i % len(asked)]} ({i + 1})" for i in range(args.questions)]
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    command = ["pack", "--questions", str(file), "--budget", str(args.budget), *base]
    _timed(command)
    wall, cpu = _timed(command)
    return {"questions": args.questions, "wall_s": wall, "cpu_s": cpu}


def _timed(command: list[str]) -> tuple[float, float]:
    """Wall seconds of one run and the child's user+sys CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = _run(command)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"windowpack {' '.join(command)} failed:\n{done.stderr[-3000:]}")
    if "Traceback" in done.stderr or "Exception in thread" in done.stderr:
        raise SystemExit(f"windowpack {' '.join(command)} was noisy:\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _imports(command: list[str]) -> dict[str, Any]:
    """The seconds a run spends importing (the top-level imports' cumulative times, threads
    included) and the heavy packages it imports."""
    done = _run(command, "-X", "importtime")
    total_us = 0
    packages = set()
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "[us]" in line:
            continue
        _, cumulative, name = line.split("|", 2)
        packages.add(name.strip().split(".")[0])
        if not name.startswith("  "):  # one space after the bar: a top-level import
            total_us += int(cumulative)
    heavy = sorted(packages & set(HEAVY))
    return {"import_s": total_us / 1e6, "heavy_imported": heavy, "torch": "torch" in heavy}


def _run(command: list[str], *python_options: str) -> subprocess.CompletedProcess[str]:
    # Byte code written and used, as after a pip install (a shell may forbid writing it).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return subprocess.run(
        [sys.executable, *python_options, "-c", CONSOLE_SCRIPT, *command],
        stdin=subprocess.DEVNULL,  # `mcp` on stdio: at end of input at once, it exits
        capture_output=True,
        text=True,
        env=env | {"COLUMNS": "120"},
        check=False,
    )


def _report(figures: dict[str, Any]) -> None:
    print(f"{'command':<8} {'wall p50':>9} {'min':>6} {'max':>6} {'first':>6} "
          f"{'cpu p50':>8} {'imports':>8}  heavy imports")  # fmt: skip
    for name in ("pack", "search", "mcp", "help"):
        if name not in figures:
            continue
        shown = figures[name]
        wall, cpu = shown["wall_s"], shown["cpu_s"]
        print(
            f"{name:<8} {wall['p50']:>8.2f}s {wall['min']:>5.2f}s {wall['max']:>5.2f}s "
            f"{shown['first_wall_s']:>5.2f}s {cpu['p50']:>7.2f}s {shown['import_s']:>7.2f}s  "
            f"{', '.join(shown['heavy_imported']) or 'none'}"
        )
    batch = figures.get("pack_questions")
    if batch is None or "pack" not in figures:
        return
    # From CPU seconds: the wall times of two processes differ by more than a pack under load.
    single = figures["pack"]["cpu_s"]["p50"]
    batch["cpu_after_the_first_s"] = (batch["cpu_s"] - single) / max(1, batch["questions"] - 1)
    print(
        f"pack --questions ({batch['questions']} questions): {batch['wall_s']:.2f} s wall, "
        f"{batch['cpu_s']:.2f} s CPU: {batch['cpu_after_the_first_s'] * 1000:.0f} ms of CPU a "
        "question after the first"
    )


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


if __name__ == "__main__":
    main()
