"""The test tiers: which tests are `slow` (left out of `make test-fast`), read from what each
test uses, so that nobody has to remember to mark one.

A test is slow when its body, its fixtures or the test-side helpers they call (anything
defined under tests/, followed name by name) use one of `SLOW_NAMES`: a live uvicorn server,
a subprocess (the MCP client's too), forked processes and kill -9, Ray, Chromium, the real
embedding model, llama.cpp with a GGUF model (`Llama`, `LlamaEngine`, `LlamaCppReader`), a
whole eval grid (a `GridEval`, or the `windowpack eval` command); when its module drives
schemathesis or playwright; when it reaches PostgreSQL; or when it carries `model` or
`shared` or reads the real essays (`essays_text`: hundreds of thousands of tokens).

PostgreSQL is reached through the `postgres_url` fixture (requested, or fetched with
`getfixturevalue`) or a fixture parameter "postgres"; such a test is marked `postgres` too,
so that `-m "not postgres"` leaves it out. A test about the migrations (its name says
"migrat", or it names `migrate`, `current_revision` or alembic) is marked `real_migrations`:
its stores run them instead of copying the template (tests/template_store.py).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent

SLOW_NAMES = frozenset(
    {
        "uvicorn",  # a live server on a loopback port
        "subprocess",  # a child interpreter: the CLI, a server process, an import check
        "StdioServerParameters",  # the MCP client's child process (`windowpack mcp` on stdio)
        "multiprocessing",  # forked writers, and the kill -9 crash rounds
        "SIGKILL",
        "ray",
        "sync_playwright",  # Chromium
        "SentenceTransformer",  # the real bundled model
        "SentenceTransformerEmbedder",
        "GridEval",  # a whole eval grid: every system on each budget, length and depth
        "Llama",  # llama.cpp loading a GGUF model (the reader extra's engine)
        "LlamaEngine",
        "LlamaCppReader",
    }
)
"""Names whose use makes a test slow; a class counts by its bases' names too."""

EVAL_COMMAND = "eval"
"""A test that runs `windowpack eval` (its arguments start with "eval") runs a whole grid."""

SLOW_MODULES = ("schemathesis", "playwright")
"""Libraries that every test of a module importing them drives."""

MIGRATION_NAMES = frozenset({"migrate", "current_revision", "alembic", "MIGRATIONS_DIR"})
"""Names of a test about the migrations themselves: its stores run them for real."""

POSTGRES_FIXTURE = "postgres_url"
SIGNALS = SLOW_NAMES | MIGRATION_NAMES | {POSTGRES_FIXTURE}


def mark_tiers(items: Iterable[pytest.Item]) -> None:
    """Add `slow`, `postgres` and `real_migrations` to the items that need them."""
    for item in items:
        if not isinstance(item, pytest.Function):
            continue
        used = _signals_of(item)
        reaches_postgres = POSTGRES_FIXTURE in used or _has_postgres_param(item)
        if reaches_postgres and item.get_closest_marker("postgres") is None:
            item.add_marker(pytest.mark.postgres)
        slow = (
            used & SLOW_NAMES
            or _drives_a_slow_module(item.module)
            or item.get_closest_marker("postgres") is not None
            or item.get_closest_marker("model") is not None
            or item.get_closest_marker("shared") is not None
            or "essays_text" in item.fixturenames
        )
        if slow and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)
        if used & MIGRATION_NAMES or "migrat" in item.originalname:
            item.add_marker(pytest.mark.real_migrations)


def _signals_of(item: pytest.Function) -> frozenset[str]:
    """The `SIGNALS` named by the test and by every fixture it uses."""
    found = set(_signals_in(item.function))
    for name in item.fixturenames:
        if name == POSTGRES_FIXTURE:
            found.add(POSTGRES_FIXTURE)
        for definition in item._fixtureinfo.name2fixturedefs.get(name, ()):
            found |= _signals_in(definition.func)
    return frozenset(found)


def _has_postgres_param(item: pytest.Function) -> bool:
    callspec = getattr(item, "callspec", None)
    return callspec is not None and "postgres" in callspec.params.values()


@cache
def _drives_a_slow_module(module: types.ModuleType | None) -> bool:
    if module is None:
        return False
    for value in vars(module).values():
        name = value.__name__ if isinstance(value, types.ModuleType) else None
        name = name or getattr(value, "__module__", None)
        if isinstance(name, str) and name.split(".")[0] in SLOW_MODULES:
            return True
    return False


@cache
def _signals_in(function: object) -> frozenset[str]:
    """The `SIGNALS` a test-side function names, following the test-side functions and
    classes it names in turn (library code is not followed)."""
    found: set[str] = set()
    seen: set[types.CodeType] = set()
    pending = [inspect.unwrap(function)]  # type: ignore[arg-type]
    while pending:
        current = pending.pop()
        code = getattr(current, "__code__", None)
        if not isinstance(code, types.CodeType) or not _is_test_side(code) or code in seen:
            continue
        seen.add(code)
        names, constants = _names_in(code)
        found |= names & SIGNALS
        if POSTGRES_FIXTURE in constants:  # request.getfixturevalue("postgres_url")
            found.add(POSTGRES_FIXTURE)
        if any(text.split(" ")[0] == EVAL_COMMAND for text in constants):
            found.add("GridEval")
        namespace = getattr(current, "__globals__", {})
        for name in names:
            value = namespace.get(name)
            if isinstance(value, type):
                found |= {base.__name__ for base in value.__mro__} & SIGNALS
            pending.extend(_test_side_functions(value))
    return frozenset(found)


def _test_side_functions(value: object) -> list[object]:
    if isinstance(value, type):
        return [inspect.unwrap(member) for member in vars(value).values() if callable(member)]
    if callable(value):
        return [inspect.unwrap(value)]
    return []


@cache
def _names_in(code: types.CodeType) -> tuple[frozenset[str], frozenset[str]]:
    """The global and attribute names, and the string constants, of `code` and the
    functions, lambdas and comprehensions nested in it."""
    names, constants = set(code.co_names), set()
    for constant in code.co_consts:
        if isinstance(constant, str):
            constants.add(constant)
        elif isinstance(constant, tuple | frozenset):  # a literal list of strings
            constants |= {part for part in constant if isinstance(part, str)}
        elif isinstance(constant, types.CodeType):
            inner_names, inner_constants = _names_in(constant)
            names |= inner_names
            constants |= inner_constants
    return frozenset(names), frozenset(constants)


@cache
def _is_test_side(code: types.CodeType) -> bool:
    return Path(code.co_filename).resolve().is_relative_to(TESTS_DIR)
