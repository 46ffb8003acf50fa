"""Every benchmark still runs: `python benchmarks/X.py --smoke`, end to end, in seconds.

The scripts are found by listing benchmarks/ (every file with a top-level `main`), so a new
benchmark without `--smoke` fails here. A smoke run uses a tiny corpus, the hash embedder and
temporary stores, and writes its figures to this test's folder; one that needs what is not
here (../shared/data, a PostgreSQL server) exits with `SKIP_EXIT` and is skipped with its
message.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from package_tree import boundary_offences, imports

REPO_ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO_ROOT / "benchmarks"
SKIP_EXIT = 3  # bench_common.SKIP_EXIT
TIMEOUT_S = 600  # a loaded 2-core machine; the slowest (Ray's start) takes about a minute

# A line each script prints once it has run to the end.
EXPECTED = {
    "ann": "recall@100=",
    "ann_vectors": "'vectors': (",
    "api": "results: ",
    "audit_probes": "results: ",
    "chat_pack": "Figures written to",
    "cli_start": "Figures written to",
    "crash": "every check passed",
    "feedback_terms": "read from rows: p50",
    "filtered_pack": "Figures written to",
    "html_sites": "Figures written to",
    "index_writes": "results: ",
    "ingest": "Figures written to",
    "ingest_cost": "Figures written to",
    "jobs": "results: ",
    "kv_session": "Figures written to",
    "large": "Figures written to",
    "load": "results: ",
    "manual_lab": "| all | windowpack |",
    "manual_tables": "Recall lower at a larger budget",
    "pack": "Figures written to",
    "pack_ab": '"label": "smoke"',
    "ray_ingest": "Overhead target",
    "replicas": "results: ",
    "search": "Figures written to",
    "sentence_signal": "Figures written to",
    "server_start": "Figures written to",
    "state_reload": "first pack after add:",
    "tree": "Figures written to",
    "under_load": "results: 1 of 1 runs passed",
    "window_scaffolding": "Figures written to",
    "write_cost": "Figures written to",
}


def _scripts() -> list[str]:
    """The benchmarks: files of benchmarks/ that define `main` at the top level."""
    found = []
    for path in sorted(BENCHMARKS.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.FunctionDef) and node.name == "main" for node in tree.body):
            found.append(path.stem)
    return found


def test_the_benchmarks_are_found() -> None:
    assert {"pack", "search", "ingest"} <= set(_scripts())
    assert "bench_common" not in _scripts()


def test_the_benchmarks_use_public_names_only() -> None:
    """`windowpack`, its top-level modules and each component's `__all__`: never a module
    inside a component, a private name or a store's `_context`."""
    offenders = []
    for path in sorted(BENCHMARKS.glob("*.py")):
        if "._context" in path.read_text(encoding="utf-8"):
            offenders.append(f"{path.name}: reaches a store's _context")
        offenders += boundary_offences(path, owner=None)
        offenders += [
            f"{path.name}:{line}: imports {module}.{name}"
            for line, module, names in imports(path)
            if module.split(".")[0] == "windowpack"
            for name in names
            if name.startswith("_")
        ]
    assert offenders == []


@pytest.mark.parametrize("script", _scripts())
def test_a_smoke_run_finishes(script: str, tmp_path: Path) -> None:
    env = dict(os.environ, WINDOWPACK_BENCH_RESULTS=str(tmp_path), COLUMNS="150")
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / f"{script}.py"), "--smoke"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    if done.returncode == SKIP_EXIT:
        pytest.skip(done.stdout.strip().splitlines()[-1])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert EXPECTED.get(script, "") in done.stdout, done.stdout[-3000:]
    assert script in EXPECTED, f"say in EXPECTED what benchmarks/{script}.py prints at its end"
