"""The import-linter contract that keeps llama-index and LangChain in the integrations must
name every other part of the package, or a new module could import them unchecked."""

from __future__ import annotations

import pkgutil
import tomllib
from pathlib import Path

import windowpack

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
ALLOWED = {"integrations", "evals"}


def test_the_forbidden_contract_covers_every_other_module() -> None:
    contracts = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]["contracts"]
    contract = next(c for c in contracts if c["type"] == "forbidden")
    modules = {info.name for info in pkgutil.iter_modules(windowpack.__path__)}

    assert set(contract["forbidden_modules"]) == {"llama_index", "langchain_core"}
    assert {m.removeprefix("windowpack.") for m in contract["source_modules"]} == modules - ALLOWED
