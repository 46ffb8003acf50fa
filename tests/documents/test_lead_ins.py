"""A lead-in and what it introduces are one unit of meaning: a paragraph ending with a colon
and the list, table, code block or definitions after it share a chunk in Markdown, plain
text and HTML; when they are too big for one, the lead-in starts a chunk holding the start of
what it introduces, and never ends one."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from windowpack.documents import (
    chunk_document,
    markdown_blocks,
    parse_bytes,
    with_lead_ins,
)
from windowpack.text import TokenCounter, get_token_counter
from windowpack.types import Document

FILLER = (
    "A lantern is a portable light source whose flame is shielded from the wind by glass, "
    "and whose fuel is held in a reservoir below the burner so that it can be carried."
)
RULES = "Here are the rules:"
NOTE = "Lanterns came before electric light, in every house."
ITEMS = ["Each wick is trimmed flat.", "Each chimney is cleaned weekly.", "No oil is reused."]


@cache
def counter() -> TokenCounter:
    return get_token_counter("o200k_base")


def _chunks(document: Document, target: int) -> list[str]:
    return [document.text[c.start : c.end] for c in chunk_document(document, counter(), target)]


def _markdown(text: str) -> Document:
    return Document(text=text, id="d", kind="markdown")


def _holding(chunks: list[str], piece: str) -> list[str]:
    return [chunk for chunk in chunks if piece in chunk]


@pytest.mark.parametrize(
    ("kind", "items"),
    [
        ("markdown", "\n".join(f"* {item}" for item in ITEMS)),
        ("markdown", "\n".join(f"{n}. {item}" for n, item in enumerate(ITEMS, 1))),
        ("markdown", "```\nlantern trim --flat\nlantern clean\n```"),
        ("markdown", "| Rule | When |\n|---|---|\n| trim | daily |\n| clean | weekly |"),
        ("markdown", "wick\n:   Trimmed flat.\n\nchimney\n:   Cleaned weekly."),
        ("text", "\n".join(f"- {item}" for item in ITEMS)),
        ("text", "    lantern trim --flat\n    lantern clean"),
    ],
)
def test_a_lead_in_and_what_it_introduces_share_a_chunk(kind: str, items: str) -> None:
    # A short paragraph first: a chunk packed greedily would take it, the lead-in and as
    # much of what follows as fits, and leave the rest to the next chunk.
    text = f"{NOTE}\n\n{FILLER} {RULES}\n\n{items}\n\n{FILLER}\n\n{FILLER}"
    document = Document(text=text, id="d", kind=kind)  # type: ignore[arg-type]
    whole = counter().count(f"{FILLER} {RULES}\n\n{items}")
    chunks = _chunks(document, whole + 4)
    (holding,) = _holding(chunks, RULES)
    assert items in holding
    assert holding.startswith(FILLER)  # the lead-in's paragraph starts its chunk


def test_the_html_lead_in_keeps_its_list() -> None:
    source = (
        f"<h1>Lanterns</h1><p>{FILLER}</p><p>{FILLER} {RULES}</p><ul>"
        + "".join(f"<li>{item}</li>" for item in ITEMS)
        + f"</ul><p>{FILLER}</p><p>{FILLER}</p>"
    )
    (document,) = parse_bytes(source.encode("utf-8"), Path("lanterns.html"))
    (holding,) = _holding(_chunks(document, 90), RULES)
    assert all(item in holding for item in ITEMS)


def test_a_list_too_big_for_one_chunk_starts_with_its_lead_in() -> None:
    items = "\n".join(f"* Rule {n}: {FILLER}" for n in range(8))
    text = f"{FILLER}\n\n{RULES}\n\n{items}\n\n{FILLER}"
    chunks = _chunks(_markdown(text), 120)
    (holding,) = _holding(chunks, RULES)
    assert holding.startswith(RULES)
    assert "* Rule 0:" in holding


def test_a_heading_or_a_colon_mid_paragraph_starts_nothing() -> None:
    text = f"{FILLER}\n\n## Rules:\n\n* {ITEMS[0]}\n\nRatio 3:1 here.\n\n* {ITEMS[1]}"
    blocks = with_lead_ins(text, markdown_blocks(text, 0, len(text)))
    assert all(block.term is None for block in blocks)
    assert len(blocks) == len(markdown_blocks(text, 0, len(text)))


def test_a_lead_in_joins_the_whole_list_and_nothing_after_it() -> None:
    items = "\n".join(f"* {item}" for item in ITEMS)
    text = f"{RULES}\n\n{items}\n\nAfterwards, rest."
    plain = markdown_blocks(text, 0, len(text))
    (joined, after) = with_lead_ins(text, plain)
    assert text[joined.span.start : joined.span.end] == f"{RULES}\n\n{items}"
    assert joined.term is not None and text[joined.term.start : joined.term.end] == RULES
    assert len(joined.parts) == len(ITEMS)
    assert text[after.span.start : after.span.end] == "Afterwards, rest."


@settings(max_examples=60, deadline=None)
@given(
    items=st.integers(min_value=1, max_value=12),
    lead_sentences=st.integers(min_value=1, max_value=4),
    target=st.integers(min_value=30, max_value=400),
)
# Found by this test: a lead-in of exactly the target's size could not be joined.
@example(items=1, lead_sentences=4, target=113)
def test_no_chunk_ends_with_a_lead_in(items: int, lead_sentences: int, target: int) -> None:
    lead_in = " ".join([FILLER] * (lead_sentences - 1) + [RULES])
    listed = "\n".join(f"* Rule {n}: {FILLER[: 40 + 7 * n]}" for n in range(items))
    text = f"{FILLER}\n\n{lead_in}\n\n{listed}\n\n{FILLER}"
    chunks = _chunks(_markdown(text), target)
    assert "".join("".join(chunks).split()) == "".join(text.split())
    assert not [chunk for chunk in chunks if chunk.endswith(RULES)]


def test_a_list_items_lead_in_holds_its_nested_items_not_its_siblings() -> None:
    text = (
        "Changes in this release:\n\n"
        "  * Faster wicks.\n"
        "  * The chimney was enhanced as follows:\n"
        "    * Thicker glass.\n"
        "    * A wider base.\n"
        "  * Cheaper oil.\n"
    )
    (release,) = with_lead_ins(text, markdown_blocks(text, 0, len(text)))
    assert release.term is not None
    assert text[release.term.start : release.term.end] == "Changes in this release:"
    faster, chimney, cheaper = release.parts
    assert chimney.term is not None
    assert text[chimney.term.start : chimney.term.end] == "* The chimney was enhanced as follows:"
    assert [text[part.span.start : part.span.end] for part in chimney.parts] == [
        "* Thicker glass.",
        "* A wider base.",
    ]
    assert text[cheaper.span.start : cheaper.span.end] == "* Cheaper oil."
    assert faster.term is None and cheaper.term is None


def test_a_lead_in_to_a_lead_in_holds_both_and_what_the_second_introduces() -> None:
    text = "Here are examples:\n\nUse a tag:\n\n    $ lantern tag v1\n\nThe end."
    (examples, end) = with_lead_ins(text, markdown_blocks(text, 0, len(text)))
    assert text[examples.span.start : examples.span.end] == text[: text.index("\n\nThe end")]
    (use_a_tag,) = examples.parts
    assert use_a_tag.term is not None and use_a_tag.parts[0].code
    assert text[end.span.start : end.span.end] == "The end."
