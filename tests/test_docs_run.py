"""The code blocks of README.md and docs/ run as written.

Every ```python and ```bash block runs, top to bottom, unless the line just above it says why
not (`<!-- not run: the reason -->`: a server that runs until stopped, an install, a cluster,
an LLM of the reader's own); a block without one is run by `test_the_blocks_run_as_written`,
and fails it if it fails.

The blocks run in one temporary folder that holds what they name (`notes/`, `report.pdf`),
README's first (it makes the store the pages use: `./wp-store` with `docs` and `mail`), then
the pages in name order. Python blocks share one namespace, as a reader's session would (a page
goes on from README's `store` and `col`); shell blocks run in bash with this interpreter's
`windowpack` first on the PATH. Each runs with the bundled model, as a reader's would.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```(python|bash|sh)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_NOT_RUN = re.compile(r"<!-- not run: (\S.*?) -->\s*$")
RUN_TIMEOUT_S = 900  # a bound that only catches a hang: a block takes seconds


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    language: str
    code: str
    not_run: str | None  # why not, from the line above; None: it runs

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The python and shell blocks of `page`, in order, each with the reason it is not run."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in _BLOCK.finditer(text):
        before = text[: match.start()].removesuffix("\n").rsplit("\n", 1)[-1]
        reason = _NOT_RUN.search(before)
        found.append(
            Block(
                page=page,
                line=text.count("\n", 0, match.start()) + 1,
                language=match[1],
                code=match[2],
                not_run=reason[1] if reason else None,
            )
        )
    return found


ALL_BLOCKS = [block for page in PAGES for block in blocks(page)]


def test_readmes_library_and_command_blocks_are_among_those_run() -> None:
    # A block not run says why; every other one is run by `test_the_blocks_run_as_written`.
    assert len(ALL_BLOCKS) > 30  # the parser found the pages' blocks
    assert all(block.not_run is None or block.not_run.strip() for block in ALL_BLOCKS)
    readme = [block for block in ALL_BLOCKS if block.page.name == "README.md"]
    library = next(block for block in readme if "wp.open(" in block.code)
    assert library.not_run is None, "README's library block must run as written"
    assert any(block.language == "bash" and block.not_run is None for block in readme)


def test_a_marker_is_read_only_from_the_line_just_above(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- not run: a server -->\n```bash\nwindowpack serve\n```\n\n"
        "<!-- not run: too far -->\n\n```python\nx = 1\n```\n",
        encoding="utf-8",
    )
    first, second = blocks(page)
    assert (first.language, first.not_run, first.line) == ("bash", "a server", 2)
    assert (second.language, second.not_run, second.code) == ("python", None, "x = 1\n")


@contextlib.contextmanager
def _inside(folder: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _make_inputs(folder: Path, text_pdf: Callable[..., bytes]) -> None:
    """The files the blocks name: a folder of notes and a report."""
    notes = folder / "notes"
    notes.mkdir()
    (notes / "ops.md").write_text(
        "# Ops meeting\n\nThe ops team decided to service the generator every May.\n\n"
        "## On call\n\nDana is on call this week; Lee takes the next.\n",
        encoding="utf-8",
    )
    (notes / "outage.txt").write_text(
        "The outage on 3 March lasted two hours. The team moved the backups to a new disk.",
        encoding="utf-8",
    )
    (folder / "report.pdf").write_bytes(
        text_pdf(["Quarterly report: the generator passed its service."], title="Report")
    )


def _run_python(block: Block, namespace: dict[str, Any]) -> None:
    code = compile(block.code, block.where, "exec")
    exec(code, namespace)  # the documentation's own code, run as a reader would


def _run_shell(block: Block) -> None:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.code],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    told = textwrap.indent(done.stderr[-3000:], "  ")
    assert done.returncode == 0, f"{block.where} failed (exit {done.returncode}):\n{told}"


@pytest.mark.model
def test_the_blocks_run_as_written(tmp_path: Path, text_pdf: Callable[..., bytes]) -> None:
    _make_inputs(tmp_path, text_pdf)
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    ran = []
    with _inside(tmp_path):
        for block in ALL_BLOCKS:
            if block.not_run is not None:
                continue
            try:
                if block.language == "python":
                    _run_python(block, namespace)
                else:
                    _run_shell(block)
            except Exception as error:
                raise AssertionError(f"{block.where}: {type(error).__name__}: {error}") from error
            ran.append(block.where)
        store = namespace["store"]
        names = set(store.collections())
    assert {"docs", "mail"} <= names
    assert any(where.startswith("README.md") for where in ran)
    assert len(ran) >= 5, ran
