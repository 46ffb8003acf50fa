"""The PostgreSQL 15 manual's pages the real-document checks read: 85 of Debian's
postgresql-doc-15 HTML pages (60 SQL commands, 17 server-configuration chapters, 8 tutorial
pages; 146K tokens as html2text writes them). Tests skip with a message where it is not
installed (`apt-get install postgresql-doc-15`; `make test` installs it)."""

from __future__ import annotations

from pathlib import Path

import pytest

MANUAL = Path("/usr/share/doc/postgresql-doc-15/html")

_SQL = [
    "abort",
    "alterconversion",
    "alterdomain",
    "alterforeigndatawrapper",
    "altergroup",
    "alterlargeobject",
    "alteroperator",
    "alterpublication",
    "alterrule",
    "alterserver",
    "altersystem",
    "altertrigger",
    "altertsparser",
    "alteruser",
    "begin",
    "close",
    "comment",
    "copy",
    "createcast",
    "createdatabase",
    "createforeigndatawrapper",
    "creategroup",
    "creatematerializedview",
    "createopfamily",
    "createpublication",
    "createschema",
    "createstatistics",
    "createtablespace",
    "createtsconfig",
    "createtstemplate",
    "createusermapping",
    "declare",
    "do",
    "dropaggregate",
    "dropdatabase",
    "dropextension",
    "dropfunction",
    "droplanguage",
    "dropoperator",
    "dropprocedure",
    "droprule",
    "dropserver",
    "droptable",
    "droptrigger",
    "droptsparser",
    "dropuser",
    "end",
    "fetch",
    "insert",
    "load",
    "move",
    "prepare",
    "reindex",
    "revoke",
    "savepoint",
    "selectinto",
    "set-session-authorization",
    "show",
    "syntax-lexical",
    "unlisten",
]
_RUNTIME_CONFIG = [
    "autovacuum",
    "client",
    "compatible",
    "connection",
    "custom",
    "developer",
    "error-handling",
    "file-locations",
    "locks",
    "logging",
    "preset",
    "query",
    "replication",
    "resource",
    "short",
    "statistics",
    "wal",
]
_TUTORIAL = [
    "accessdb",
    "advanced-intro",
    "advanced",
    "agg",
    "arch",
    "concepts",
    "conclusion",
    "createdb",
]
PAGES = (
    [f"sql-{name}.html" for name in _SQL]
    + [f"runtime-config-{name}.html" for name in _RUNTIME_CONFIG]
    + [f"tutorial-{name}.html" for name in _TUTORIAL]
)


def manual_pages() -> list[Path]:
    """The 85 pages' paths, or a skip saying the manual is not installed."""
    paths = [MANUAL / name for name in PAGES]
    missing = [path for path in paths if not path.is_file()]
    if missing:
        pytest.skip(
            f"the PostgreSQL 15 manual is not installed ({missing[0]} is missing): "
            "apt-get install postgresql-doc-15"
        )
    return paths
