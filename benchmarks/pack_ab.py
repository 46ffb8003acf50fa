"""Pack cost of one checkout against another on the same store: wall and process-CPU p50.

Run it once per checkout, each on its own copy of one store (a checkout may rebuild index
files in its own format), and compare the printed JSON lines:

    cp -r /tmp/wp-pack-1m /tmp/ab-old && cp -r /tmp/wp-pack-1m /tmp/ab-new
    PYTHONPATH=<old checkout>/src .venv/bin/python benchmarks/pack_ab.py /tmp/ab-old old
    PYTHONPATH=<new checkout>/src .venv/bin/python benchmarks/pack_ab.py /tmp/ab-new new

The store is `benchmarks/pack.py`'s (collection `pack-bench`). Per budget (8K, 128K, 1M), 20
questions never asked before (seeded random essay words, so every pack misses the window
cache) after one warm-up pack that loads state and indexes. Process CPU time is reported
beside wall time because it moves less when the machine is shared; only the public API is
used, so the script runs against older checkouts too (it was used for the issue-11 re-cut).
`--settle S` waits S seconds after the warm-up pack: a load counts the lines of a small
collection in a background thread, whose CPU time the first timed packs would otherwise share
(on a loaded machine it runs for seconds).
`--smoke` packs 2 questions a budget over a temporary store of a few essay parts (hash
embedder) instead: a check, not figures.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import tempfile
import time
from pathlib import Path

import windowpack as wp

ESSAYS = Path(__file__).resolve().parents[2] / "shared/data/ruler/PaulGrahamEssays.json"
BUDGETS = (8_192, 131_072, 1_048_576)
QUESTIONS = 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", nargs="?", help="a copy of pack.py's store")
    parser.add_argument("label", nargs="?", default="", help="names the checkout in the output")
    parser.add_argument("--smoke", action="store_true", help="a check in seconds (see above)")
    parser.add_argument(
        "--settle",
        type=float,
        default=0.0,
        help="seconds to wait after the warm-up pack, for the work a load starts in the "
        "background (counting lines ahead) to end before the timed packs",
    )
    args = parser.parse_args()
    if not ESSAYS.exists():
        print(f"skipped: needs {ESSAYS} (../shared/data), not found", flush=True)
        raise SystemExit(3)  # bench_common.SKIP_EXIT (this script imports nothing of it)
    if args.smoke:
        with tempfile.TemporaryDirectory(prefix="wp-pack-ab-") as folder:
            config = wp.StoreConfig(embedder="hash")
            with wp.open(folder, config=config) as store:
                text = ESSAYS.read_text("utf-8")[:40_000]
                store.collection("pack-bench").add([wp.Document(id="essays", text=text)])
            _measure(folder, args.label or "smoke", 2, config, args.settle)
    elif args.store is None:
        parser.error("the store to pack from is required")
    else:
        _measure(args.store, args.label, QUESTIONS, None, args.settle)


def _measure(
    store_path: str, label: str, count: int, config: wp.StoreConfig | None, settle: float
) -> None:
    vocabulary = sorted(set(re.findall(r"[a-z]{6,}", ESSAYS.read_text("utf-8").lower())))
    rng = random.Random(7)
    questions = [" ".join(rng.sample(vocabulary, 4)) + "?" for _ in range(count)]
    figures: dict[str, object] = {"label": label}
    with wp.open(store_path, config=config) as store:
        collection = store.collection("pack-bench")
        collection.pack("warm up the state", budget=BUDGETS[0])
        time.sleep(settle)
        for budget in BUDGETS:
            cpu, wall = [], []
            for question in questions:
                cpu_start, wall_start = time.process_time(), time.perf_counter()
                window = collection.pack(f"{question} ({budget})", budget=budget)
                cpu.append((time.process_time() - cpu_start) * 1000)
                wall.append((time.perf_counter() - wall_start) * 1000)
                assert window.tokens <= budget
            figures[str(budget)] = {
                "cpu_p50_ms": round(statistics.median(cpu), 1),
                "wall_p50_ms": round(statistics.median(wall), 1),
            }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
