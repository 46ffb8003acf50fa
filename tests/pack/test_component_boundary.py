"""The pack component is used through `windowpack.pack` only: its modules are its own."""

from __future__ import annotations

import ast
from pathlib import Path

import windowpack.pack

PACKAGE = Path(windowpack.pack.__file__).resolve().parents[1]


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) of every `from X import names` and `import X` in a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found.extend((alias.name, []) for alias in node.names)
    return found


def test_no_module_outside_pack_reaches_into_it() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.is_relative_to(PACKAGE / "pack"):
            continue
        for module, names in _imports(path):
            if module.startswith("windowpack.pack."):
                offenders.append(f"{path.relative_to(PACKAGE)}: imports {module}")
            if module == "windowpack.pack":
                private = [name for name in names if name.startswith("_")]
                offenders.extend(f"{path.relative_to(PACKAGE)}: imports {n}" for n in private)
                unknown = [name for name in names if name not in windowpack.pack.__all__]
                offenders.extend(f"{path.relative_to(PACKAGE)}: imports {n}" for n in unknown)
    assert offenders == []


def test_the_public_surface_resolves() -> None:
    for name in windowpack.pack.__all__:
        assert getattr(windowpack.pack, name) is not None, name
