"""Each component is used through its package's public names only; every package says what it owns.

A component is a package directly under `windowpack/` (`index`, `pack`, ...). Outside it, code
imports `windowpack.<component>` and only names in its `__all__`; its modules are its own
business, so a module can move or split without touching any caller. Inside a component,
modules import their siblings by full path.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

import windowpack

PACKAGE = Path(windowpack.__file__).resolve().parent
COMPONENTS = sorted(path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file())
SOURCES = sorted(PACKAGE.rglob("*.py"))


def _component_of(path: Path) -> str | None:
    """The component a source file belongs to, None for top-level modules."""
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else None


def _imports(path: Path) -> Iterator[tuple[int, str, list[str]]]:
    """(line, module, names) of every `from X import names` and `import X` in a file."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []


def boundary_offences(path: Path, owner: str | None) -> list[str]:
    """Imports in `path` (which belongs to component `owner`) that reach past a component."""
    offences = []
    for line, module, names in _imports(path):
        parts = module.split(".")
        if parts[0] != "windowpack" or len(parts) < 2 or parts[1] not in COMPONENTS:
            continue
        component = parts[1]
        if component == owner:
            continue
        shown = path.relative_to(PACKAGE.parent) if path.is_relative_to(PACKAGE) else path
        where = f"{shown}:{line}"
        if len(parts) > 2:
            offences.append(f"{where}: imports {module}, a module of {component}")
            continue
        public = set(importlib.import_module(module).__all__)
        offences.extend(
            f"{where}: imports {name}, not in windowpack.{component}.__all__"
            for name in names
            if name not in public
        )
    return offences


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_no_module_reaches_into_another_component(path: Path) -> None:
    assert boundary_offences(path, _component_of(path)) == []


@pytest.mark.parametrize("component", COMPONENTS)
def test_every_public_name_of_a_component_resolves(component: str) -> None:
    package = importlib.import_module(f"windowpack.{component}")
    exported = package.__all__
    assert exported, f"windowpack.{component} exports nothing"
    assert len(set(exported)) == len(exported)
    for name in exported:
        assert not name.startswith("_"), name
        assert getattr(package, name) is not None, name


@pytest.mark.parametrize(
    "init",
    sorted(PACKAGE.rglob("__init__.py")),
    ids=lambda path: str(path.relative_to(PACKAGE)),
)
def test_every_package_says_what_it_owns(init: Path) -> None:
    tree = ast.parse(init.read_text(encoding="utf-8"))
    docstring = ast.get_docstring(tree)
    assert docstring, f"{init.relative_to(PACKAGE)} has no docstring"


def test_a_reach_into_a_module_is_caught(tmp_path: Path) -> None:
    caller = tmp_path / "caller.py"
    caller.write_text(
        "from windowpack.index.store import IndexStore\n"
        "from windowpack.index import IndexStore as Public\n"
        "from windowpack.pack import _private\n",
        encoding="utf-8",
    )
    offences = boundary_offences(caller, owner=None)
    assert len(offences) == 2
    assert "windowpack.index.store, a module of index" in offences[0]
    assert "_private, not in windowpack.pack.__all__" in offences[1]
