"""The same bad documents given to the library itself (`Collection.add`, `get`, `delete`), on
SQLite and PostgreSQL: the library refuses what the REST schemas refuse, naming the field, so
a program that never goes through HTTP cannot store a poison document either (issue 14, D1)."""

from __future__ import annotations

from typing import Any

import pytest
from reliability_helpers import FilledServer, snapshot

import windowpack as wp
from windowpack.errors import InvalidInputError

KITES = "A harmless sentence about kites."


def _deep(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


BAD_DOCUMENTS = {
    "metadata-deep": (wp.Document(text=KITES, metadata=_deep(300)), "metadata.a.a"),
    "metadata-surrogate": (wp.Document(text=KITES, metadata={"x": "\ud800"}), "metadata.x"),
    "metadata-nul": (wp.Document(text=KITES, metadata={"x": ["\x00"]}), "metadata.x[0]"),
    "metadata-nan": (wp.Document(text=KITES, metadata={"x": float("nan")}), "metadata.x"),
    "metadata-infinity": (wp.Document(text=KITES, metadata={"x": float("inf")}), "metadata.x"),
    "metadata-int-key": (wp.Document(text=KITES, metadata={1: "one"}), "metadata"),
    "metadata-set": (wp.Document(text=KITES, metadata={"x": {1, 2}}), "metadata.x"),
    "metadata-too-large": (wp.Document(text=KITES, metadata={"x": "y" * 70_000}), "metadata"),
    "metadata-none": (wp.Document(text=KITES, metadata=None), "metadata"),  # type: ignore[arg-type]
    "text-nul": (wp.Document(text=KITES + "\x00"), "text"),
    "text-surrogate": (wp.Document(text=KITES + "\udc00"), "text"),
    "title-nul": (wp.Document(text=KITES, title="\x00"), "title"),
    "title-too-long": (wp.Document(text=KITES, title="t" * 1025), "title"),
    "id-dot": (wp.Document(text=KITES, id="."), "id"),
    "id-dot-dot-segment": (wp.Document(text=KITES, id="notes/../seals"), "id"),
    "id-nul": (wp.Document(text=KITES, id="a\x00"), "id"),
    "id-newline": (wp.Document(text=KITES, id="a\nb"), "id"),
    "id-blank": (wp.Document(text=KITES, id="  "), "id"),
    "id-empty": (wp.Document(text=KITES, id=""), "id"),
    "id-not-a-string": (wp.Document(text=KITES, id=7), "id"),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("name", sorted(BAD_DOCUMENTS))
def test_the_library_refuses_a_bad_document_naming_the_field(
    filled_server: FilledServer, name: str
) -> None:
    document, field = BAD_DOCUMENTS[name]
    good = wp.Document(id="kites", text=KITES)
    with pytest.raises(InvalidInputError) as caught:
        filled_server.store.collection("docs").add([good, document])
    assert f"documents[1].{field}" in str(caught.value), str(caught.value)
    # The good document of the same call is not stored either: one add, one transaction.
    assert snapshot(filled_server.store) == filled_server.before


@pytest.mark.parametrize("document_id", ["a\x00b", "\ud800", ""])
def test_looking_up_an_id_no_document_can_have_is_a_clear_error(
    filled_server: FilledServer, document_id: str
) -> None:
    collection = filled_server.store.collection("docs")
    for call in (collection.get, collection.delete):
        with pytest.raises(InvalidInputError, match="document_id"):
            call(document_id)
    assert snapshot(filled_server.store) == filled_server.before
