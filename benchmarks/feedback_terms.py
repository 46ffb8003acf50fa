"""What the feedback hop pays for its leaders' terms: cut from their texts again, or read with
their counts from the BM25 index's rows (`LexicalIndex.term_counts`, what retrieval does).

    .venv/bin/python benchmarks/feedback_terms.py [--leaders 5] [--rounds 200]

The essays (../shared/data) cut into ~1,000-character chunks (about the 256 tokens of a
chunk) and indexed whole (`index.build_lexical_index`) in a few writes, as a collection
grows; then, per round, the terms of `--leaders` chunks picked at random, both ways,
checked equal. Prints the p50 and p95 of each way in ms and the load average. `--smoke`:
the first 40,000 characters.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from collections import Counter

import numpy as np
from bench_common import ESSAYS_JSON, add_smoke_option, need

from windowpack.index import build_lexical_index

CHUNK_CHARS = 1_000
WRITES = 8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--leaders", type=int, default=5, help="chunks a question reads")
    parser.add_argument("--rounds", type=int, default=200)
    add_smoke_option(parser)
    args = parser.parse_args()
    need()
    text = json.loads(ESSAYS_JSON.read_text("utf-8"))["text"]
    if args.smoke:
        text, args.rounds = text[:40_000], 5
    chunks = [text[i : i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS)]
    index = build_lexical_index([], [])
    for part in np.array_split(np.arange(len(chunks)), WRITES):
        index.add(part.astype(np.int64), [chunks[i] for i in part])
    rng = random.Random(0)
    cut, read = [], []
    for _ in range(args.rounds):
        leaders = rng.sample(range(len(chunks)), args.leaders)
        started = time.perf_counter()
        from_texts = [dict(Counter(index.terms(chunks[i]))) for i in leaders]
        cut.append(time.perf_counter() - started)
        started = time.perf_counter()
        from_rows = index.term_counts(leaders)
        read.append(time.perf_counter() - started)
        assert from_rows == from_texts, "the rows hold other terms than the texts give"
    print(
        f"{len(chunks):,} chunks in {WRITES} writes, {args.leaders} leaders, "
        f"{args.rounds} rounds, load {os.getloadavg()[0]:.2f}"
    )
    for name, seconds in (("cut from texts", cut), ("read from rows", read)):
        ordered = sorted(seconds)
        p95 = ordered[int(0.95 * (len(ordered) - 1))]
        print(f"{name}: p50 {statistics.median(seconds) * 1e3:.3f} ms, p95 {p95 * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
