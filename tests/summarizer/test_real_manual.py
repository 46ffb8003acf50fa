"""Summaries of a manual nobody here wrote: pages of PostgreSQL 15's HTML documentation.

Issue 26 tried windowpack on 85 of them: a configuration parameter's summary had lost the
parameter ("The default value is `off`."), every SQL page's root was the same list of
section names, the collection's root named five pages. This reads five pages from Debian's
`postgresql-doc-15` (skipped without it): two SQL command pages, two configuration
chapters and a tutorial page.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.storage import repository
from windowpack.storage.schema import TreeNodeRow

MANUAL = Path("/usr/share/doc/postgresql-doc-15/html")
SQL = [
    "sql-abort.html",
    "sql-alterconversion.html",
    "sql-alterdomain.html",
    "sql-altergroup.html",
    "sql-alteroperator.html",
    "sql-alterrule.html",
    "sql-altersystem.html",
    "sql-begin.html",
    "sql-close.html",
    "sql-createdatabase.html",
    "sql-dropdatabase.html",
    "sql-droptable.html",
]
CONFIGURATION = [
    "runtime-config-autovacuum.html",
    "runtime-config-custom.html",
    "runtime-config-locks.html",
    "runtime-config-query.html",
    "runtime-config-short.html",
]
TUTORIAL = ["tutorial-agg.html", "tutorial-arch.html", "tutorial-concepts.html"]
PAGES = SQL + CONFIGURATION + TUTORIAL
GENERIC = {"note", "tip", "warning", "synopsis", "description", "parameters", "see also"}

pytestmark = pytest.mark.skipif(
    not all((MANUAL / page).is_file() for page in PAGES),
    reason=f"needs PostgreSQL 15's HTML manual in {MANUAL} (apt-get install postgresql-doc-15)",
)


@pytest.fixture(scope="module")
def manual(tmp_path_factory: pytest.TempPathFactory) -> Iterator[wp.Collection]:
    root = tmp_path_factory.mktemp("pg")
    (root / "pgdocs").mkdir()
    for page in PAGES:
        shutil.copy(MANUAL / page, root / "pgdocs" / page)
    with wp.open(root / "store", config=StoreConfig(embedder="hash")) as store:
        col = store.collection("pg")
        col.add_files([root / "pgdocs"], root=root)
        yield col


def _nodes(col: wp.Collection, document: str | None) -> list[TreeNodeRow]:
    with col._context.sessions() as session:
        ids = {d.external_id: d.id for d in repository.list_documents(session, col.collection_id)}
        nodes = repository.tree_nodes(session, col.collection_id)
    wanted = ids[document] if document is not None else None
    return [node for node in nodes if node.document_id == wanted]


def _root(col: wp.Collection, document: str) -> str:
    return max(_nodes(col, document), key=lambda node: node.level).text


def test_a_sql_page_root_says_what_the_command_is_for(manual: wp.Collection) -> None:
    root = _root(manual, "pgdocs/sql-dropdatabase.html")
    assert root.startswith(
        "DROP DATABASE — remove a database\n`DROP DATABASE` drops a database."
    ), root
    assert "Synopsis" not in root and "See Also" not in root, root
    create = _root(manual, "pgdocs/sql-createdatabase.html")
    assert create.startswith("CREATE DATABASE — create a new database"), create


def test_every_parameter_node_names_its_parameters(manual: wp.Collection) -> None:
    """The issue's "The default value is `off`." had lost its parameter: each node of a
    configuration chapter names the parameters it holds, most with their descriptions."""
    for page in ("runtime-config-query.html", "runtime-config-autovacuum.html"):
        level_one = [node for node in _nodes(manual, f"pgdocs/{page}") if node.level == 1]
        assert level_one, page
        for node in level_one:
            assert re.search(r"`[a-z_]+`", node.text), node.text
        described = re.findall(
            r"^(?:.* › )?`[a-z_]+` \(`[a-z ]+`\): [A-Z]", _joined(level_one), re.M
        )
        assert len(described) >= len(level_one), _joined(level_one)
    query = _joined(_nodes(manual, "pgdocs/runtime-config-query.html"))
    assert "`effective_cache_size`" in query, query


def _joined(nodes: list[TreeNodeRow]) -> str:
    return "\n".join(node.text for node in nodes)


def test_the_collection_root_covers_each_kind_of_page(manual: wp.Collection) -> None:
    """The issue's 85-page root named five pages: each kind of page is there, counted, with
    more of its titles the more pages it has."""
    root = max(_nodes(manual, None), key=lambda node: node.level).text
    lines = {line.split(" (", 1)[0]: line for line in root.split("\n")}
    for group, pages in [
        ("sql-*", SQL),
        ("runtime-config-*", CONFIGURATION),
        ("tutorial-*", TUTORIAL),
    ]:
        assert f"{group} ({len(pages)})" in lines.get(group, ""), root
    titles = {group: lines[group].count(";") for group in lines}
    assert titles["sql-*"] >= titles["runtime-config-*"] >= titles["tutorial-*"], root


def test_no_node_is_a_bare_heading_a_label_or_a_lead_in(manual: wp.Collection) -> None:
    for node in _nodes(manual, None) + [
        node for page in PAGES for node in _nodes(manual, f"pgdocs/{page}")
    ]:
        for line in node.text.split("\n"):
            plain = re.sub(r"[`*_]", "", line).strip()
            last = plain.rsplit(" › ", 1)[-1].strip().lower()
            assert plain and not plain.endswith(":") and last not in GENERIC, (line, node.text)
