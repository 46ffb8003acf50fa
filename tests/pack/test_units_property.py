"""Units of meaning (design §4.8), as a property: in any window, over random chats, record
sets and sectioned documents at any budget, a turn or record is whole or absent — never
partly verbatim — unless it alone costs more than its share of the budget (or the window has
no room left for its rest), and then a marker says how much of it is missing. A section is
taken chunk by chunk, as measured on the real manuals (`pack.verbatim`)."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from random_corpora import SETTINGS, WORDS, chat, words

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.pack.verbatim import UNIT_SHARE, unit_rule
from windowpack.storage import repository
from windowpack.text.tokens import get_token_counter
from windowpack.types import Span

CONFIG = StoreConfig(embedder="hash", chunk_tokens=40, fanout=3)
QUESTIONS = [
    "What did the falcon find in the quarry?",
    "the second haiku about saffron in a pirate style",
    "Which record mentions a glacier and an ember?",
    "tundra harbor meadow",
]


def _records(rng: random.Random, folder: Path, index: int) -> Path:
    path = folder / f"records-{index}.jsonl"
    rows = [{"note": words(rng, 3, 60), "n": n} for n in range(rng.randint(2, 10))]
    path.write_text("\n".join(json.dumps(row) for row in rows), encoding="utf-8")
    return path


def _markdown(rng: random.Random) -> str:
    parts = []
    for section in range(rng.randint(2, 6)):
        parts.append(f"{'#' * rng.randint(1, 3)} Part {section} {rng.choice(WORDS)}")
        parts.extend(words(rng, 5, 50) for _ in range(rng.randint(1, 4)))
    return "\n\n".join(parts)


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> Iterator[wp.Collection]:
    folder = tmp_path_factory.mktemp("units")
    store = wp.open(folder / "store", config=CONFIG)
    col = store.collection("mixed")
    rng = random.Random(5)
    for index in range(3):
        col.add_conversation(chat(rng, turns=12, reply_words=40, paragraphs=6), id=f"chat-{index}")
    col.add_files([_records(rng, folder, index) for index in range(2)], root=folder)
    markdown = [wp.Document(text=_markdown(rng), id=f"doc-{i}", kind="markdown") for i in range(3)]
    col.add(markdown)
    yield col
    store.close()


def _tiles(collection: wp.Collection, document: str, unit: Span) -> list[str]:
    """The unit's chunks, each with the white space up to the next chunk of the document."""
    with collection._context.sessions() as session:
        row = repository.documents_by_external_id(session, collection.collection_id, [document])
        spans = repository.chunk_spans(session, collection.collection_id)[row[document].id]
    text = row[document].text
    starts = [chunk.char_start for chunk in spans] + [len(text)]
    tiles = []
    for index, chunk in enumerate(spans):
        if unit.start <= chunk.char_start < unit.end:
            end = starts[index + 1] if index + 1 < len(spans) else chunk.char_end
            tiles.append(text[chunk.char_start : end])
    return tiles


def _covers(spans: list[Span], unit: Span) -> bool:
    """Whether `spans` (passages of one unit) cover all of it."""
    return min(s.start for s in spans) <= unit.start and max(s.end for s in spans) >= unit.end


@SETTINGS
@given(budget=st.integers(60, 4000), question=st.sampled_from(QUESTIONS))
# A draft over the budget made the window ask for less, and the smaller room left a turn
# cut while its rest fitted what the budget still had (`pack.window._refilled`).
@example(budget=315, question=QUESTIONS[2])
def test_every_unit_in_a_window_is_whole_or_cut_only_when_over_its_share(
    collection: wp.Collection, budget: int, question: str
) -> None:
    window = collection.pack(question, budget=budget)
    counter = get_token_counter("o200k_base")
    passages: dict[tuple[str, int], list[Span]] = {}
    for item in window.items:
        if item.kind == "chunk" and item.unit is not None and item.span is not None:
            assert item.document_id is not None
            passages.setdefault((item.document_id, item.unit), []).append(item.span)
    documents = {document: collection.get(document) for document, _ in passages}
    for (document, unit), spans in passages.items():
        units = documents[document].units
        assert units is not None
        span = units[unit]
        if _covers(spans, span) or documents[document].kind == "markdown":
            continue  # a section is taken chunk by chunk (`pack.verbatim.SECTION_SHARE`)
        # Cut only when the unit alone is over its share, and then the window says what of
        # it is missing. A unit costs its chunks' tiles (each chunk with the white space up
        # to the next), as the allocator counts them.
        # Or the window had no room left for its rest.
        tiles = _tiles(collection, document, span)
        shown = "".join(documents[document].text[s.start : s.end] for s in spans)
        rest = sum(counter.count_many(tiles)) - counter.count(shown)
        over = sum(counter.count_many(tiles)) > UNIT_SHARE * unit_rule(budget)
        assert over or rest > budget - window.tokens, (document, unit, budget)
        assert re.search(r"tokens(?: of|, from) this", window.text)
