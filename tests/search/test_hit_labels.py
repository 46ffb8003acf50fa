"""A hit names its unit as its document's kind does (a section, a turn, a record) and a
section's hit carries its heading path, read as the packer reads it."""

from __future__ import annotations

import json
from pathlib import Path

import windowpack as wp
from windowpack.types import Span

GUIDE = """# Saffron guide

Saffron is the stigma of the crocus flower.

## Installing the grinder

Unpack the grinder and set it on a dry bench.

### On Linux

Run apt-get install saffron-grinder as root, then restart the mill daemon.

## Storing

Keep threads in a dark tin away from steam.
"""

CHAT = (
    "User: what colour is the harbour ferry?\n"
    "Assistant: The harbour ferry is painted bright red.\n"
    "User: and when does it leave?\n"
    "Assistant: It leaves at seven sharp every morning.\n"
)


def _by_document(hits: list[wp.Hit], document_id: str) -> wp.Hit:
    return next(hit for hit in hits if hit.document_id == document_id)


def test_a_section_is_a_section_with_its_heading_path(hash_store: wp.Store) -> None:
    col = hash_store.collection("docs")
    col.add([wp.Document(id="guide.md", text=GUIDE, kind="markdown")])

    hit = _by_document(col.search("apt-get install saffron-grinder mill daemon", k=3), "guide.md")

    assert "apt-get install" in hit.text
    assert hit.unit == 2 and hit.unit_name == "section"
    assert hit.heading_path == ("Saffron guide", "Installing the grinder", "On Linux")
    storing = _by_document(col.search("dark tin away from steam", k=3), "guide.md")
    assert storing.heading_path == ("Saffron guide", "Storing")  # the sibling closes "On Linux"


def test_a_turn_is_a_turn_and_a_record_a_record(hash_store: wp.Store, tmp_path: Path) -> None:
    col = hash_store.collection("docs")
    col.add_conversation(CHAT, id="chat")
    records = tmp_path / "orders.jsonl"
    lines = [{"order": 1, "item": "copper kettle"}, {"order": 2, "item": "walnut crate"}]
    records.write_text("".join(json.dumps(line) + "\n" for line in lines))
    col.add_files([records], root=tmp_path)
    col.add([wp.Document(id="plain", text="Barn owls hunt voles in the meadow at night.")])

    turn = _by_document(col.search("when does the ferry leave seven", k=5), "chat")
    record = _by_document(col.search("walnut crate order", k=5), "orders.jsonl")
    plain = _by_document(col.search("barn owls voles meadow", k=5), "plain")

    assert (turn.unit_name, turn.heading_path) == ("turn", ())
    assert turn.unit is not None
    assert (record.unit_name, record.heading_path) == ("record", ())
    assert record.unit is not None
    assert (plain.unit, plain.unit_name, plain.heading_path) == (None, None, ())


def test_units_a_caller_gives_a_plain_text_are_parts(hash_store: wp.Store) -> None:
    text = "alpha beta gamma. delta epsilon zeta."
    units = [Span(start=0, end=17), Span(start=18, end=len(text))]
    hash_store.collection("docs").add([wp.Document(id="t", text=text, units=units)])

    hit = hash_store.collection("docs").search("delta epsilon zeta", k=1)[0]

    assert (hit.unit, hit.unit_name) == (1, "part")


def test_one_table_names_the_units_of_every_kind() -> None:
    from windowpack.types import UNIT_NAMES, unit_name

    assert dict(UNIT_NAMES) == {"conversation": "turn", "records": "record", "markdown": "section"}
    assert unit_name("text") == "part" and unit_name("markdown") == "section"


def test_summary_hits_name_no_unit(hash_store: wp.Store) -> None:
    col = hash_store.collection("docs")
    col.add([wp.Document(id="guide.md", text=GUIDE * 6, kind="markdown")])

    summaries = [h for h in col.search("saffron", k=50, include_summaries=True) if h.level]

    assert summaries and all(h.unit_name is None and h.heading_path == () for h in summaries)
