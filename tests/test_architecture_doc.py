"""docs/architecture.md names the package as it is.

Its layer table names every component (each package and top-level module under
src/windowpack) and nothing that does not exist; every backticked dotted reference to a
component (`index.IndexStore.publish`, `pack.loading`) resolves to a module, or a name in
one, that exists. Nothing is skipped: a reference whose first part is not a component fails.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from package_tree import COMPONENTS as PACKAGES
from package_tree import PACKAGE

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"

_BACKTICKED = re.compile(r"`([^`\n]+)`")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
# Backticked names that are files, not modules: `pyproject.toml`, `__init__.py`.
_FILE_SUFFIXES = (".py", ".toml", ".md", ".json", ".txt", ".html", ".npy")


def _components() -> set[str]:
    """Every package (`index/`) and top-level module (`cli.py`) under src/windowpack."""
    packages = {f"{name}/" for name in PACKAGES}
    modules = {path.name for path in PACKAGE.glob("*.py") if path.name != "__init__.py"}
    return packages | modules


def _table_components() -> list[str]:
    """The components named in the second column of architecture.md's layer table (its
    first table)."""
    named: list[str] = []
    in_table = False
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            if in_table:
                break
            continue
        in_table = True
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 2 or cells[1] == "component" or set(cells[1]) <= {"-", ":"}:
            continue
        named.extend(_BACKTICKED.findall(cells[1]))
    return named


def _references() -> list[str]:
    """Every backticked dotted name in architecture.md that is not a file name."""
    found = []
    for token in _BACKTICKED.findall(DOC.read_text(encoding="utf-8")):
        token = token.removeprefix("windowpack.")
        if _DOTTED.match(token) and not token.endswith(_FILE_SUFFIXES):
            found.append(token)
    return sorted(set(found))


COMPONENTS = sorted(_components())
TABLE = _table_components()
REFERENCES = _references()


def _module_names() -> set[str]:
    """The component names a dotted reference may start with: `index`, `cli`, `config`."""
    return {name.removesuffix("/").removesuffix(".py") for name in COMPONENTS}


def test_the_doc_is_read() -> None:
    # Guards the parsing: an empty table or no references would make the tests vacuous.
    assert {"index/", "cli/", "config.py"} <= set(TABLE)
    assert "index.IndexStore.publish" in REFERENCES


@pytest.mark.parametrize("component", COMPONENTS)
def test_every_component_is_in_the_table(component: str) -> None:
    assert component in TABLE, f"docs/architecture.md's table does not name `{component}`"


@pytest.mark.parametrize("named", sorted(set(TABLE)))
def test_every_component_in_the_table_exists(named: str) -> None:
    assert named in COMPONENTS, f"`{named}` in docs/architecture.md is no package or module"


@pytest.mark.parametrize("reference", REFERENCES)
def test_reference_resolves(reference: str) -> None:
    first, *rest = reference.split(".")
    assert first in _module_names(), f"`{reference}` names no component of windowpack"
    module_name = f"windowpack.{first}"
    module = importlib.import_module(module_name)
    # The longest prefix that is a module, then attributes of it down the rest.
    remaining = list(rest)
    while remaining:
        candidate = f"{module_name}.{remaining[0]}"
        if (PACKAGE / Path(*candidate.split(".")[1:])).with_suffix(".py").exists() or (
            PACKAGE / Path(*candidate.split(".")[1:]) / "__init__.py"
        ).exists():
            module_name = candidate
            module = importlib.import_module(module_name)
            remaining.pop(0)
        else:
            break
    target: object = module
    for name in remaining:
        assert hasattr(target, name), f"`{reference}`: {target!r} has no `{name}`"
        target = getattr(target, name)


def test_every_test_file_the_source_cites_exists() -> None:
    # A docstring that names its test must name one that is there.
    cited = {
        (path.relative_to(PACKAGE.parent), name)
        for path in PACKAGE.rglob("*.py")
        for name in re.findall(r"tests/[\w/]+\.py", path.read_text(encoding="utf-8"))
    }
    assert cited, "no source file cites a test: the pattern is stale"
    missing = [f"{path}: {name}" for path, name in sorted(cited) if not (ROOT / name).is_file()]
    assert missing == []
