"""Helpers shared by the benchmarks in this folder (not a benchmark itself).

Loading a corpus the way a user would (`parse_paths`), cutting very long documents into
~20K-character parts so a single-text haystack looks like a multi-document corpus, truncating a
corpus to a token budget, timing the stages of an ingest from its progress callback
(`StageClock`) and calls inside it (`CallTimer`, over the components' `timed_calls()`), latency
statistics, writing results under `benchmarks/results/`, and what every script's `--smoke` run
shares (a tiny corpus; `SKIP_EXIT` when the data or a server it needs is not here).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import dataclasses
import functools
import io
import json
import math
import os
import platform
import pstats
import random
import re
import socket
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

import windowpack as wp
from windowpack.documents import parse_paths
from windowpack.evals import split_bounds
from windowpack.text import TokenCounter, split_sentences
from windowpack.types import Document, IngestProgress

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
ESSAYS_JSON = SHARED_DATA / "ruler" / "PaulGrahamEssays.json"
NIAH_ESSAYS = SHARED_DATA / "niah" / "paul_graham_essays"

# A parsed document longer than this is cut into parts of about `SPLIT_CHARS` characters.
SPLIT_ABOVE_CHARS = 100_000
SPLIT_CHARS = 20_000
# A built store records its build time here, so a later run that reuses it can report it.
BUILD_RECORD = "pack-bench-build.json"
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
SKIP_EXIT = 3
"""Exit status of a script that cannot run here (data or a server it needs is missing): the
smoke test (`tests/test_benchmarks_smoke.py`) skips it with the message printed last."""
SMOKE_TOKENS = 6_000
"""Corpus size of a `--smoke` run: a few seconds of ingest with the hash embedder."""


def add_smoke_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="run end to end in seconds (a tiny corpus, tiny sizes, the hash embedder, "
        "temporary stores): the check CI runs that the script still works, not a measurement",
    )


def need(paths: Sequence[Path] = (ESSAYS_JSON,), *, what: str = "../shared/data") -> None:
    """Exit with `SKIP_EXIT` and say so when any of `paths` is missing."""
    missing = [path for path in paths if not path.exists()]
    if missing:
        print(f"skipped: needs {missing[0]} ({what}), not found", flush=True)
        raise SystemExit(SKIP_EXIT)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Corpus:
    """Documents ready to add, and a one-line account of how they were made."""

    documents: list[Document]
    description: str
    parse_seconds: float
    split_seconds: float
    files: int


def load_corpus(
    paths: Sequence[Path],
    *,
    max_bytes: int,
    split_above: int = SPLIT_ABOVE_CHARS,
    split_chars: int = SPLIT_CHARS,
) -> Corpus:
    """Parse `paths` with `parse_paths`, then split any document over `split_above` chars."""
    need([path for path in paths if Path(path).resolve().is_relative_to(SHARED_DATA.resolve())])
    started = time.perf_counter()
    parsed = parse_paths(list(paths), max_bytes=max_bytes)
    parse_seconds = time.perf_counter() - started
    if parsed.skipped:
        print(f"note: {len(parsed.skipped)} file(s) skipped while parsing: {parsed.skipped}")
    started = time.perf_counter()
    documents: list[Document] = []
    notes: list[str] = []
    for document in parsed.documents:
        if split_chars > 0 and len(document.text) > split_above and not document.units:
            parts = split_document(document, split_chars)
            notes.append(
                f"{document.id} ({len(document.text):,} chars) split into {len(parts)} documents "
                f"of ~{split_chars:,} chars at blank-line/sentence boundaries"
            )
            documents.extend(parts)
        else:
            documents.append(document)
    split_seconds = time.perf_counter() - started
    names = ", ".join(os.fspath(path) for path in paths)
    description = f"{names}: {len(parsed.documents)} parsed document(s)"
    if notes:
        description += "; " + "; ".join(notes)
    return Corpus(
        documents=documents,
        description=description,
        parse_seconds=parse_seconds,
        split_seconds=split_seconds,
        files=len(parsed.documents),
    )


def split_document(document: Document, target: int) -> list[Document]:
    """`document` as parts of about `target` chars; ids `<id>#part-NNNN`."""
    bounds = [
        (start, end)
        for start, end in split_bounds(document.text, target)
        if document.text[start:end].strip()
    ]
    base_id = document.id or "document"
    base_title = document.title or base_id
    return [
        dataclasses.replace(
            document,
            text=document.text[start:end].strip(),
            id=f"{base_id}#part-{index:04d}",
            title=f"{base_title} (part {index + 1}/{len(bounds)})",
            metadata={**document.metadata, "part": index},
        )
        for index, (start, end) in enumerate(bounds)
    ]


def limit_tokens(
    documents: Sequence[Document], counter: TokenCounter, limit: int
) -> list[Document]:
    """The leading documents holding at most `limit` tokens; the last one is cut to fit."""
    kept: list[Document] = []
    total = 0
    for document, count in zip(
        documents, counter.count_many([d.text for d in documents]), strict=True
    ):
        if total + count <= limit:
            kept.append(document)
            total += count
            continue
        remaining = limit - total
        if remaining > 0:
            cuts = counter.cut_points(document.text, remaining)
            text = (document.text[: cuts[0]] if cuts else document.text).rstrip()
            if text.strip():
                kept.append(dataclasses.replace(document, text=text))
        break
    return kept


def count_tokens(documents: Sequence[Document], counter: TokenCounter) -> int:
    return sum(counter.count_many([document.text for document in documents]))


def latency_stats(seconds: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99/mean/min/max of wall times, in milliseconds."""
    if not seconds:
        return {}
    ms = np.asarray(seconds, dtype=np.float64) * 1000.0
    return {
        "count": float(len(ms)),
        "p50_ms": float(np.percentile(ms, 50)),
        "p95_ms": float(np.percentile(ms, 95)),
        "p99_ms": float(np.percentile(ms, 99)),
        "mean_ms": float(ms.mean()),
        "min_ms": float(ms.min()),
        "max_ms": float(ms.max()),
    }


def spread(values: Sequence[float]) -> dict[str, float]:
    return {"min": min(values), "mean": sum(values) / len(values), "max": max(values)}


def profile_text(call: Callable[[], object], lines: int = 30) -> str:
    """cProfile of `call()`, the top `lines` functions by cumulative time, as text."""
    profiler = cProfile.Profile()
    profiler.enable()
    call()
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(lines)
    return out.getvalue()


def machine_info() -> dict[str, Any]:
    import torch

    return {
        "cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average_at_end": list(os.getloadavg()),
    }


def write_results(name: str, figures: dict[str, Any]) -> Path:
    """Write `figures` as `benchmarks/results/<name>.json` (the folder is git-ignored), or
    under `$WINDOWPACK_BENCH_RESULTS` when set (the smoke test's own folder)."""
    folder = Path(os.environ.get("WINDOWPACK_BENCH_RESULTS") or RESULTS_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    stamped = {"benchmark": name, "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **figures}
    path.write_text(json.dumps(stamped, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return path


def rate(tokens: int, seconds: float) -> float | None:
    """Tokens per second, or None for a stage too quick to time."""
    return tokens / seconds if seconds > 0 else None


def fmt_rate(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _now() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


class StageClock:
    """Progress callback noting when (wall and process CPU time) each stage was reported.

    `Collection.add` reports "chunk" per document, "summarize" once and then per summary node
    built afresh, "embed" once and then per committed embedding batch, then "index" and "done";
    `Collection.rebuild_tree` the same without "chunk". `stages()` cuts the call at:
    chunk = start → last "chunk" (→ first "summarize" when there is no "chunk"),
    summarize = → first "embed", embed = → last "embed", index = → first "done".
    """

    def __init__(self) -> None:
        self.started = self.returned = (0.0, 0.0)
        self.first: dict[str, tuple[float, float]] = {}
        self.last: dict[str, tuple[float, float]] = {}
        self.events = 0
        self.embedded = 0  # texts embedded in the embed stage (progress.embedded)
        self.summaries = 0  # nodes summarised afresh (progress.summaries)

    def start(self) -> None:
        self.started = _now()

    def finish(self) -> None:
        self.returned = _now()

    def __call__(self, progress: IngestProgress) -> None:
        now = _now()
        self.events += 1
        self.first.setdefault(progress.stage, now)
        self.last[progress.stage] = now
        self.embedded, self.summaries = progress.embedded, progress.summaries

    def stages(self, clock: int = 0) -> dict[str, float]:
        """Seconds per stage; `clock` 0 is wall time, 1 the process's CPU time (all threads)."""
        started, returned = self.started[clock], self.returned[clock]
        first = {stage: times[clock] for stage, times in self.first.items()}
        last = {stage: times[clock] for stage, times in self.last.items()}
        chunk_end = last.get("chunk", first.get("summarize", started))
        embed_start = first.get("embed", chunk_end)
        embed_end = last.get("embed", embed_start)
        done = first.get("done", returned)
        return {
            "chunk": chunk_end - started,
            "summarize": embed_start - chunk_end,
            "embed": embed_end - embed_start,
            "index": done - embed_end,
            "after_done": returned - done,
            "total": returned - started,
        }


class CallTimer:
    """Wall seconds and calls spent in chosen functions while the `with` block runs.

    `targets` maps a name to (owner, attribute): a module global or a class attribute that the
    code under test looks up at call time (the components' `timed_calls()` name theirs); it is
    wrapped on entry and restored on exit.
    """

    def __init__(self, targets: Mapping[str, tuple[object, str]]) -> None:
        self._targets = dict(targets)
        self._originals: dict[str, Any] = {}
        self.seconds = dict.fromkeys(self._targets, 0.0)
        self.calls = dict.fromkeys(self._targets, 0)

    def __enter__(self) -> CallTimer:
        for name, (owner, attribute) in self._targets.items():
            original = getattr(owner, attribute)
            self._originals[name] = original
            setattr(owner, attribute, self._wrapped(name, original))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for name, (owner, attribute) in self._targets.items():
            setattr(owner, attribute, self._originals[name])

    def _wrapped(self, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - started
                self.calls[name] += 1

        return timed


@contextlib.contextmanager
def store_folder(given: Path | None, prefix: str) -> Iterator[Path]:
    """`given` (which must be new or empty: a fresh store), else a temporary folder."""
    if given is not None:
        if given.exists() and any(given.iterdir()):
            raise SystemExit(f"--store {given}: must be a new or empty folder (a fresh store)")
        yield given
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as temporary:
        yield Path(temporary) / "store"


@contextlib.contextmanager
def reusable_store_folder(given: Path | None, prefix: str) -> Iterator[Path]:
    """`given` as it is (new, or a store built by an earlier run to reuse), else a temporary
    folder removed afterwards."""
    if given is not None:
        yield given
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as temporary:
        yield Path(temporary) / "store"


@dataclasses.dataclass(frozen=True, kw_only=True)
class EssayCorpus:
    """The default ~1M-token corpus; `sources` are the documents before any copy."""

    documents: list[Document]
    description: str
    tokens: int
    sources: list[tuple[Document, int]]


def essay_corpus(
    counter: TokenCounter,
    *,
    target_tokens: int,
    max_bytes: int,
    paths: Sequence[Path] = (ESSAYS_JSON, NIAH_ESSAYS),
    source_tokens: int | None = None,
) -> EssayCorpus:
    """`paths` (default: the RULER essays JSON, split into ~20K-char documents, plus the NIAH
    essay folder), plus the first path's documents again under ids `copy-N/...` until the
    corpus passes `target_tokens` (re-used text hits the embedding cache). `source_tokens`
    keeps only the leading documents of each path holding that many tokens (a smoke run)."""
    need(paths)
    sources: list[tuple[Document, int]] = []
    parts: list[str] = []
    essays: list[tuple[Document, int]] = []
    for path in paths:
        loaded = load_corpus([path], max_bytes=max_bytes)
        if source_tokens is not None:
            kept = limit_tokens(loaded.documents, counter, source_tokens)
            loaded = dataclasses.replace(loaded, documents=kept)
        counts = counter.count_many([doc.text for doc in loaded.documents])
        sources += zip(loaded.documents, counts, strict=True)
        essays = essays or list(zip(loaded.documents, counts, strict=True))
        parts.append(f"{loaded.description} = {sum(counts):,} tokens")
    documents = [doc for doc, _ in sources]
    total = sum(count for _, count in sources)
    copies, copied_docs, copied_tokens = 0, 0, 0
    while total < target_tokens and essays:
        copies += 1
        for doc, count in essays:
            if total >= target_tokens:
                break
            documents.append(
                dataclasses.replace(
                    doc,
                    id=f"copy-{copies}/{(doc.id or '').lstrip('/')}",
                    title=f"{doc.title} (copy)",
                )
            )
            total += count
            copied_docs += 1
            copied_tokens += count
    if copied_docs:
        parts.append(
            f"plus {copied_docs} documents of the first source again under ids 'copy-N/...' = "
            f"{copied_tokens:,} tokens (embedding-cache hits)"
        )
    description = " | ".join(parts) + f" | total {len(documents):,} documents, {total:,} tokens"
    return EssayCorpus(documents=documents, description=description, tokens=total, sources=sources)


def large_plan(
    folder: Path, *, tokens: int, questions: int, seed: int, smoke: bool, counter: TokenCounter
) -> tuple[list[tuple[list[Document], str]], list[str]]:
    """What `large.py` (and `filtered_pack.py`) build: the essay variants up to `tokens`, in
    batches (none when `folder` holds a finished build, which is reused), and `questions`
    distinct questions drawn from the corpus's sentences."""
    corpus = essay_corpus(
        counter,
        target_tokens=0,
        max_bytes=64 << 20,
        source_tokens=SMOKE_TOKENS // 2 if smoke else None,
    )
    sentences = corpus_sentences([doc.text for doc, _ in corpus.sources])
    asked = make_questions(sentences, questions, seed)
    finished = (folder / BUILD_RECORD).exists()
    batches = [] if finished else variant_batches(corpus, sentences, tokens, counter)
    return batches, asked


def variant_batches(
    corpus: EssayCorpus, sentences: list[str], target: int, counter: TokenCounter
) -> list[tuple[list[Document], str]]:
    """Copies of the source documents (copy 0 as is), one batch per copy, until `target`:
    copy c has ids `variant-c/...` and a corpus sentence picked per (copy, paragraph) before
    every paragraph, so no two copies share chunk text."""
    batches: list[tuple[list[Document], str]] = []
    total, copy = 0, 0
    while total < target:
        rng = random.Random(copy)
        docs = [variant_of(doc, copy, rng, sentences) for doc, _ in corpus.sources]
        tokens = sum(counter.count_many([doc.text for doc in docs]))
        batches.append((docs, f"copy {copy}: {len(docs)} documents, {tokens:,} tokens"))
        total, copy = total + tokens, copy + 1
    return batches


def variant_of(doc: Document, copy: int, rng: random.Random, sentences: list[str]) -> Document:
    if copy == 0:
        return doc
    paragraphs = _PARAGRAPH.split(doc.text)
    text = "\n\n".join(f"{rng.choice(sentences)} {paragraph}" for paragraph in paragraphs)
    return dataclasses.replace(doc, text=text, id=f"variant-{copy}/{(doc.id or '').lstrip('/')}")


def _has_documents(collection: wp.Collection) -> bool:
    """Whether a reused store already holds some of the build (a new one has no collection)."""
    try:
        return len(collection) > 0
    except wp.CollectionNotFoundError:  # read paths create nothing: the first add creates it
        return False


def stored_totals(collection: wp.Collection) -> dict[str, int]:
    """Documents, chunks and tokens the collection holds now."""
    stored = collection.documents()
    return {
        "documents": len(stored),
        "chunks": sum(doc.chunks for doc in stored),
        "tokens": sum(doc.tokens for doc in stored),
    }


def build_collection(
    say: Callable[[str], object],
    folder: Path,
    batches: list[tuple[list[Document], str]],
    collection: wp.Collection,
    limit_s: float = math.inf,
) -> dict[str, Any]:
    """Add the batches (no-ops on a reused store), say how long building took (`say` prints a
    line), and record it in the store folder so that a reuse reports the first build's time."""
    record_path = folder / BUILD_RECORD
    record = json.loads(record_path.read_text("utf-8")) if record_path.exists() else {}
    earlier = record.get("build_seconds", 0.0) if _has_documents(collection) else 0.0  # resumed
    started = time.perf_counter()
    built_now, added, notes, slowest = False, 0, [], 0.0
    for documents, note in batches:
        elapsed = time.perf_counter() - started
        if elapsed + slowest > limit_s:
            notes.append(f"stopped before {note}: {elapsed:.0f} s + {slowest:.0f} s > limit")
            break
        batch_started = time.perf_counter()
        report = collection.add(documents)
        seconds = time.perf_counter() - batch_started
        slowest = max(slowest, seconds)
        built_now |= report.added + report.replaced > 0
        added += 1
        say(f"  add {note}: {seconds:.1f} s, {report.embedded:,} texts embedded")
    seconds = time.perf_counter() - started
    totals = {
        **stored_totals(collection),
        "batches_added": added,
        "batches_planned": len(batches),
        "notes": notes,
    }
    if built_now:
        record = {"build_seconds": earlier + seconds, **totals, "built_at": time.strftime("%F %T")}
        record_path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    build = record.get("build_seconds")
    say(
        f"Store {folder} ({'built now' if built_now else 'reused'}): {totals['documents']:,} "
        f"documents, {totals['chunks']:,} chunks, {totals['tokens']:,} tokens; build "
        + (f"{build:.1f} s" if build else "time unknown")
        + ("" if built_now else f" (reuse check {seconds:.1f} s)")
        + "".join(f"; {note}" for note in notes)
    )
    return {"built_now": built_now, "build_seconds": build, "add_seconds": seconds, **totals}


_STOP_WORD_LIST = """
    a an the and or but if of to in on at by for with from as is are was were be been being
    it its it's this that these those i you he she we they them his her our their my your me us
    what which who whom when where why how not no so do does did done have has had can could
    would should will just than then there here also very more most much many some any all one
    two into about over out up down only even such like get got make made way thing things
    really because said says say don't didn't isn't that's there's you're they're"""
_STOP_WORDS = frozenset(_STOP_WORD_LIST.split())
_QUESTION_TEMPLATES = (
    "what does the author say about {}",
    "why {}",
    "how do {} relate",
    "{}",
    "explain {}",
    "is it true that {}",
    "examples of {}",
    "{} according to paul graham",
    "what is the connection between {}",
    "advice on {}",
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]")


def corpus_sentences(texts: Sequence[str]) -> list[str]:
    return [text[span.start : span.end] for text in texts for span in split_sentences(text)]


def make_questions(sentences: Sequence[str], count: int, seed: int) -> list[str]:
    """`count` distinct questions: a few content words of a random corpus sentence set in one of
    several question templates (the generator of `search.py`)."""
    rng = random.Random(seed)
    questions: list[str] = []
    seen: set[str] = set()
    for _ in range(count * 100):
        if len(questions) == count:
            break
        words = [w.lower() for w in _WORD.findall(rng.choice(sentences))]
        words = [word for word in words if word not in _STOP_WORDS]
        if len(words) < 3:
            continue
        size = rng.randint(3, min(7, len(words)))
        first = rng.randint(0, len(words) - size)
        question = rng.choice(_QUESTION_TEMPLATES).format(" ".join(words[first : first + size]))
        if question not in seen:
            seen.add(question)
            questions.append(question)
    if len(questions) < count:
        raise SystemExit(f"could only make {len(questions)} distinct questions from the corpus")
    return questions


@contextlib.contextmanager
def windowpack_server(folder: Path | str, *options: str) -> Iterator[str]:
    """`windowpack serve --store folder [options]` on a free loopback port, as a separate
    process; its URL once /healthz answers (its pid is last in `SERVER_PIDS`)."""
    import subprocess
    import sys

    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-c", "from windowpack.cli import main; main()", "serve"]
    command += ["--store", str(folder), "--port", str(port), *options]
    process = subprocess.Popen(command, env=dict(os.environ))
    SERVER_PIDS.append(process.pid)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            raise SystemExit("the server did not answer /healthz within a minute")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=60)


SERVER_PIDS: list[int] = []
"""Process ids of the servers `windowpack_server` started, latest last."""


@contextlib.contextmanager
def windowpack_worker(store: Path | str, *options: str) -> Iterator[int]:
    """`windowpack worker --store store [options]` as a separate process: its pid once it says
    it is running jobs; stopped with SIGTERM (it finishes the job in hand) when the block ends.
    Its output goes to a temporary log, shown when it fails to start."""
    import subprocess
    import sys

    command = [sys.executable, "-c", "from windowpack.cli import main; main()", "worker"]
    command += ["--store", str(store), *options]
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, env=dict(os.environ), stdout=log, stderr=log)
        try:
            _wait_for_output(process, log, b"running jobs")
            yield process.pid
        finally:
            process.terminate()
            process.wait(timeout=300)


def _wait_for_output(process: Any, log: Any, expected: bytes, timeout_s: float = 60) -> None:
    """Until `expected` is in the file `log` that `process` writes; SystemExit with the log's
    end when the process exits first or `timeout_s` passes."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None:
        log.seek(0)
        if expected in log.read():
            return
        time.sleep(0.05)
    log.seek(0)
    tail = log.read()[-2000:].decode("utf-8", "replace")
    raise SystemExit(f"{' '.join(process.args[3:])} did not say {expected!r}: {tail}")


POSTGRES_ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
"""Where benchmarks create their scratch PostgreSQL databases from (CI's and ours)."""


@contextlib.contextmanager
def scratch_postgres(admin_url: str, prefix: str) -> Iterator[str]:
    """A new, empty PostgreSQL database created on `admin_url`'s server: its URL; dropped
    (connections and all) when the block ends."""
    import uuid

    import sqlalchemy

    name = f"{prefix}{uuid.uuid4().hex[:12]}"
    admin = sqlalchemy.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(sqlalchemy.text(f'CREATE DATABASE "{name}"'))
    except sqlalchemy.exc.OperationalError as error:
        print(f"skipped: needs a PostgreSQL server at {admin_url}: {error}", flush=True)
        raise SystemExit(SKIP_EXIT) from error
    try:
        yield f"{admin_url.rsplit('/', 1)[0]}/{name}"
    finally:
        with admin.connect() as connection:
            connection.execute(sqlalchemy.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
