"""The package's tree as the tests read it: its folder, its components, and the imports that
reach past a component's public names (tests/test_component_boundary.py, the benchmarks'
check in tests/test_benchmarks_smoke.py, the layer table in tests/test_architecture_doc.py).

A component is a package directly under `windowpack/` (`index`, `pack`, ...). Outside it, code
imports `windowpack.<component>` and only names in its `__all__`.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import windowpack

PACKAGE = Path(windowpack.__file__).resolve().parent
COMPONENTS = sorted(path.name for path in PACKAGE.iterdir() if (path / "__init__.py").is_file())


def imports(path: Path) -> Iterator[tuple[int, str, list[str]]]:
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
    for line, module, names in imports(path):
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
