"""docs/operations.md's table is true: every method, command and route it names exists, with the
options and keyword arguments it names; a cell without one says why; and every public method
of the library's `Store`, `Collection` and `WindowSession` and of the client, every command
and every `/v1` route is in some row.

Each column is a surface with two functions here: one that tells whether a name exists
(`_exists`), one that lists what the surface has (`_inventory`). A new surface (an MCP
server's tools, say) is a column in the table and an entry in each of `CHECKS` and
`INVENTORIES`; a new operation is one row.
"""

from __future__ import annotations

import importlib
import inspect
import re
import typing
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import typer

import windowpack
from windowpack import client as client_module
from windowpack.cli import app as cli_app
from windowpack.service import WindowSession

TABLE = Path(__file__).resolve().parents[1] / "docs" / "operations.md"
NONE = "—"
"""What a cell without a name starts with, followed by its reason in parentheses."""

LIBRARY_CLASSES = (windowpack.Store, windowpack.Collection, WindowSession)
CLIENT_CLASSES = (
    client_module.Client,
    client_module.RemoteCollection,
    client_module.RemoteJob,
    client_module.RemoteSession,
)
ASYNC_MIRRORS = {
    client_module.Client: client_module.AsyncClient,
    client_module.RemoteCollection: client_module.AsyncRemoteCollection,
    client_module.RemoteJob: client_module.AsyncRemoteJob,
    client_module.RemoteSession: client_module.AsyncRemoteSession,
}


# The table


def _cells(line: str) -> list[str]:
    """A table row's cells; a `|` inside a code span is part of the cell."""
    cells, current, in_code = [], "", False
    for char in line.strip().strip("|"):
        if char == "`":
            in_code = not in_code
        if char == "|" and not in_code:
            cells.append(current.strip())
            current = ""
        else:
            current += char
    return [*cells, current.strip()]


@cache
def _table() -> tuple[list[str], list[list[str]]]:
    """The header and rows of the one table of operations.md."""
    lines = [
        line for line in TABLE.read_text(encoding="utf-8").splitlines() if line.startswith("|")
    ]
    header = _cells(lines[0])
    assert set(_cells(lines[1])) == {"---"}, "the second line is the table's rule"
    return header, [_cells(line) for line in lines[2:]]


def _names(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def _named(column: str) -> list[tuple[str, str]]:
    """(operation, name) for every name in `column`'s cells that are not reasons."""
    header, rows = _table()
    index = header.index(column)
    return [
        (row[0], name)
        for row in rows
        if not row[index].startswith(NONE)
        for name in _names(row[index])
    ]


# Whether a name exists, per surface


def _library_object(dotted: str) -> Any:
    """`Store.pack`, `Store.api_keys.create` (through the property's type),
    `windowpack.api.create_app` (through modules)."""
    parts = dotted.split(".")
    if parts[0] == "windowpack":
        target: Any = windowpack
        for index in range(2, len(parts) + 1):
            try:
                target = importlib.import_module(".".join(parts[:index]))
            except ModuleNotFoundError:
                return _attribute_path(target, parts[index - 1 :])
        return target
    return _attribute_path(windowpack, parts)


def _client_object(dotted: str) -> Any:
    return _attribute_path(client_module, dotted.split("."))


def _attribute_path(target: Any, parts: list[str]) -> Any:
    for part in parts:
        found = inspect.getattr_static(target, part) if inspect.isclass(target) else None
        if isinstance(found, property):  # a property: go on in the type it returns
            target = typing.get_type_hints(found.fget)["return"]
            continue
        target = getattr(target, part)
    return target


def _callable_exists(name: str, resolve: Callable[[str], Any]) -> str | None:
    """`Collection.search(k=, include_summaries=)`: the callable, and each keyword it names."""
    match = re.fullmatch(r"([\w.]+)(?:\((.*)\))?", name)
    if match is None:
        return f"{name!r} is not a dotted name"
    try:
        target = resolve(match.group(1))
    except AttributeError as error:
        return f"{name!r} does not exist ({error})"
    if not callable(target):
        return f"{name!r} is not callable"
    keywords = re.findall(r"(\w+)=", match.group(2) or "")
    parameters = inspect.signature(target).parameters
    missing = [keyword for keyword in keywords if keyword not in parameters]
    return f"{name!r} takes no {missing}" if missing else None


@cache
def _cli_root() -> Any:
    return typer.main.get_command(cli_app)


def _cli_exists(name: str) -> str | None:
    """`windowpack pack --budget --json`: the command, and each option it names."""
    words = name.split()
    if words[0] != "windowpack":
        return f"{name!r} is not a windowpack command"
    command = _cli_root()
    index = 1
    while index < len(words) and words[index] in getattr(command, "commands", {}):
        command = command.commands[words[index]]
        index += 1
    if index == 1:
        return f"{name!r} names no command"
    options = {opt for param in command.params for opt in [*param.opts, *param.secondary_opts]}
    unknown = [word for word in words[index:] if word.startswith("-") and word not in options]
    if getattr(command, "commands", None):
        return f"{name!r} is a group, not a command"
    return f"{name!r} has no option {unknown}" if unknown else None


@cache
def _openapi(tmp: str) -> dict[str, Any]:
    from windowpack.api import ApiSettings, create_app
    from windowpack.config import StoreConfig

    store = windowpack.open(Path(tmp) / "store", config=StoreConfig(embedder="hash"))
    settings = ApiSettings(upload_dir=str(Path(tmp) / "uploads"))
    schema: dict[str, Any] = create_app(settings, store=store).openapi()
    store.close()
    return schema


@pytest.fixture(scope="module")
def routes(tmp_path_factory: pytest.TempPathFactory) -> set[tuple[str, str]]:
    """(method, path) of every route the REST app documents."""
    paths = _openapi(str(tmp_path_factory.mktemp("openapi")))["paths"]
    return {(method.upper(), path) for path, item in paths.items() for method in item}


def _rest_exists(name: str, routes: set[tuple[str, str]]) -> str | None:
    method, _, path = name.partition(" ")
    if (method, path.split("?")[0]) not in routes:
        return f"{name!r} is no route of the REST app"
    return None


CHECKS: dict[str, Callable[[str, set[tuple[str, str]]], str | None]] = {
    "library": lambda name, _routes: _callable_exists(name, _library_object),
    "CLI": lambda name, _routes: _cli_exists(name),
    "REST": _rest_exists,
    "client": lambda name, _routes: _callable_exists(name, _client_object),
}


# What each surface has


def _public_methods(cls: type) -> Iterator[str]:
    """`Class.method` for each public method (not property, not alternate constructor) the
    class or a windowpack base defines."""
    seen = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("windowpack"):
            continue
        for name, value in vars(klass).items():
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            if callable(value) and not isinstance(value, classmethod | staticmethod):
                yield f"{cls.__name__}.{name}"


def _cli_commands(command: Any, path: tuple[str, ...] = ("windowpack",)) -> Iterator[str]:
    subcommands = getattr(command, "commands", None)
    if not subcommands:
        yield " ".join(path)
        return
    for name, sub in subcommands.items():
        yield from _cli_commands(sub, (*path, name))


def _bare(name: str) -> str:
    """A name without its keywords, options or query: what the inventory lists."""
    name = name.split("(")[0].split("?")[0]
    return " ".join(word for word in name.split() if not word.startswith("-"))


INVENTORIES: dict[str, Callable[[set[tuple[str, str]]], set[str]]] = {
    "library": lambda _routes: {
        method for cls in LIBRARY_CLASSES for method in _public_methods(cls)
    },
    "CLI": lambda _routes: set(_cli_commands(_cli_root())),
    "REST": lambda routes: {
        f"{method} {path}" for method, path in routes if path.startswith("/v1/")
    },
    "client": lambda _routes: {method for cls in CLIENT_CLASSES for method in _public_methods(cls)},
}


# The tests

LOCAL_ONLY = {
    "progress": "a callback runs in the process that holds the store",
    "evidence": "a server runs the query-time stages of its store's StoreConfig.evidence",
    "only_if_unwritten": "a job worker's clean-up after a first write it gave up",
    "scope": "a server signs a session's tokens for the caller's API key itself",
}
"""Library parameters a client method does not take, and why."""


def test_the_table_has_a_column_per_surface_and_a_cell_per_column() -> None:
    header, rows = _table()
    assert header == ["operation", *CHECKS], "each column has its checks here"
    assert set(CHECKS) == set(INVENTORIES)
    for row in rows:
        assert len(row) == len(header), row[0]
        assert row[0] and NONE not in row[0], row


def test_a_cell_names_something_or_says_why_not() -> None:
    header, rows = _table()
    for row in rows:
        for column, cell in zip(header[1:], row[1:], strict=True):
            if cell.startswith(NONE):
                reason = re.fullmatch(rf"{NONE} \((.+)\)", cell)
                assert reason and len(reason.group(1).split()) >= 3, (row[0], column, cell)
            else:
                assert _names(cell), f"{row[0]} / {column}: {cell!r} names nothing"


@pytest.mark.parametrize("column", list(CHECKS))
def test_every_name_exists(column: str, routes: set[tuple[str, str]]) -> None:
    problems = [
        f"{operation}: {problem}"
        for operation, name in _named(column)
        if (problem := CHECKS[column](name, routes)) is not None
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("column", list(INVENTORIES))
def test_everything_a_surface_has_is_in_a_row(column: str, routes: set[tuple[str, str]]) -> None:
    named = {_bare(name) for _, name in _named(column)}
    missing = sorted(INVENTORIES[column](routes) - named)
    assert not missing, f"in no row of docs/operations.md ({column}): {missing}"


def test_the_async_client_has_the_sync_ones_methods() -> None:
    awaited = {"aclose": "close"}  # asyncio's name for closing
    for sync, mirror in ASYNC_MIRRORS.items():
        sync_names = {name.split(".")[1] for name in _public_methods(sync)}
        async_names = {
            awaited.get(n, n) for n in (m.split(".")[1] for m in _public_methods(mirror))
        }
        assert sync_names == async_names, sync.__name__


def test_the_client_methods_take_the_librarys_arguments() -> None:
    """Each client method the table pairs with a library method takes the library's
    parameters by name, less `LOCAL_ONLY` (said in docs/operations.md too)."""
    header, rows = _table()
    library, client = header.index("library"), header.index("client")
    local_only = set(LOCAL_ONLY)
    for row in rows:
        local = [_bare(name) for name in _names(row[library]) if not row[library].startswith(NONE)]
        remote = [_bare(name) for name in _names(row[client]) if not row[client].startswith(NONE)]
        for local_name, remote_name in zip(local, remote, strict=False):
            if local_name.split(".")[-1] != remote_name.split(".")[-1]:
                continue
            wanted = set(inspect.signature(_library_object(local_name)).parameters) - local_only
            given = set(inspect.signature(_client_object(remote_name)).parameters)
            assert wanted <= given, f"{remote_name} lacks {sorted(wanted - given)}"
