"""A packing state's load reads indexes, not the tables that hold the texts (SQLite)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, inspect

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.pack.loading import load_state
from windowpack.storage import repository
from windowpack.text.tokens import get_token_counter


def _store(tmp_path: Path) -> wp.Store:
    store = wp.open(tmp_path / "store", config=StoreConfig(embedder="hash", chunk_tokens=32))
    notes = [
        wp.Document(
            id=f"doc-{i}",
            text="\n\n".join(f"Paragraph {j} of note {i}, on tides and gulls." for j in range(12)),
            metadata={"n": i},
        )
        for i in range(5)
    ]
    store.collection("notes").add(notes)
    return store


def test_the_load_reads_chunks_and_documents_from_covering_indexes(tmp_path: Path) -> None:
    with _store(tmp_path) as store:
        context = store._context
        with context.sessions() as session:
            row = repository.get_collection(session, "notes")
            assert row is not None
        counter = get_token_counter("cl100k_base")
        # As a server's load: texts read from the index folder, which a first load wrote.
        assert context.packer._state(row.id, row.name, row.index_version, counter) is not None
        texts = context.packer._document_texts(row.id)
        statements: list[str] = []

        def trace(connection: Any, _: Any) -> None:
            # Every statement the driver runs, raw cursors included, with its values.
            connection.set_trace_callback(statements.append)

        context.engine.dispose()  # new connections, each traced
        event.listen(context.engine, "connect", trace)
        try:
            state = load_state(
                context.sessions, row.id, row.name, row.index_version, counter, texts=texts
            )
        finally:
            event.remove(context.engine, "connect", trace)
            context.engine.dispose()
        assert len(state.documents) == 5 and state.corpus.nodes > 0
        reads = [s for s in statements if re.search(r"FROM (chunks|documents)\b", s)]
        assert any("FROM chunks" in s for s in reads)
        assert any("FROM documents" in s for s in reads)
        with context.engine.connect() as connection:
            cursor = connection.connection.driver_connection.cursor()  # type: ignore[union-attr]
            for statement in reads:
                details = cursor.execute(f"EXPLAIN QUERY PLAN {statement}").fetchall()
                plan = " | ".join(str(detail[-1]) for detail in details)
                # Every row from the index alone: no page of the chunks' or documents' texts,
                # and in the index's order (no sort).
                assert "COVERING INDEX" in plan, (statement, plan)
                assert "TEMP B-TREE" not in plan, (statement, plan)


@pytest.mark.parametrize(
    ("table", "index"),
    [("chunks", "ix_chunks_pack_spans"), ("documents", "ix_documents_pack_fields")],
)
def test_the_migration_creates_the_pack_indexes(tmp_path: Path, table: str, index: str) -> None:
    with _store(tmp_path) as store:
        names = {found["name"] for found in inspect(store._context.engine).get_indexes(table)}
    assert index in names
