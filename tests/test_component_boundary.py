"""Each component is used through its package's public names only; every package says what it owns.

A component is a package directly under `windowpack/` (`index`, `pack`, ...). Outside it, code
imports `windowpack.<component>` and only names in its `__all__`; its modules are its own
business, so a module can move or split without touching any caller. Inside a component,
modules import their siblings by full path.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from package_tree import COMPONENTS, PACKAGE, boundary_offences

SOURCES = sorted(PACKAGE.rglob("*.py"))


def _component_of(path: Path) -> str | None:
    """The component a source file belongs to, None for top-level modules."""
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else None


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
