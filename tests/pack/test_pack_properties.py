"""The seven packing properties of design §4/§5, on random corpora, budgets and tokenizers."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.text.tokens import get_token_counter

CONFIG = StoreConfig(embedder="hash", chunk_tokens=32, fanout=3)
WORDS = ["harbor", "lantern", "glacier", "meadow", "falcon", "quarry", "ember", "tundra"]
NEEDLE = "The vault combination is 4417 and only Marguerite Okafor knows it."
QUESTION = "What is the vault combination that Marguerite Okafor knows?"
TOKENIZERS = ["o200k_base", "cl100k_base"]
PROPERTY_SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _corpus(seed: int, documents: int) -> list[wp.Document]:
    rng = random.Random(seed)
    result = []
    for index in range(documents):
        paragraphs = [
            " ".join(
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 10))).capitalize() + "."
                for _ in range(rng.randint(1, 4))
            )
            for _ in range(rng.randint(1, 8))
        ]
        result.append(
            wp.Document(text="\n\n".join(paragraphs), id=f"d{index}", title=f"Doc {index}")
        )
    target = rng.randrange(documents)
    planted = result[target].text + "\n\n" + NEEDLE
    result[target] = wp.Document(text=planted, id=f"d{target}", title=f"Doc {target}")
    return result


@pytest.fixture(scope="module")
def collections(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[int, wp.Collection]]:
    """A few random corpora, built once; hypothesis draws among them."""
    store = wp.open(tmp_path_factory.mktemp("pack"), config=CONFIG)
    built = {}
    for seed in range(4):
        col = store.collection(f"c{seed}")
        col.add(_corpus(seed, documents=[1, 3, 6, 12][seed]))
        built[seed] = col
    yield built
    store.close()


def _chunk_texts(col: wp.Collection) -> list[str]:
    texts = []
    for info in col.documents():
        document = col.get(info.id)
        with col._context.sessions() as session:
            from windowpack.storage import repository

            rows = repository.documents_by_external_id(session, col.collection_id, [info.id])
            chunks = repository.chunk_rows(session, rows[info.id].id)
        texts.extend(document.text[c.char_start : c.char_end] for c in chunks)
    return texts


def _total_tokens(col: wp.Collection, tokenizer: str) -> int:
    return sum(get_token_counter(tokenizer).count_many(_chunk_texts(col)))


@PROPERTY_SETTINGS
@given(seed=st.integers(0, 3), budget=st.integers(1, 6000), tokenizer=st.sampled_from(TOKENIZERS))
def test_1_the_window_never_exceeds_the_budget(
    collections: dict[int, wp.Collection], seed: int, budget: int, tokenizer: str
) -> None:
    window = collections[seed].pack(QUESTION, budget=budget, tokenizer=tokenizer)
    assert get_token_counter(tokenizer).count(window.text) == window.tokens <= budget
    if not window.text:
        assert window.reason  # an empty window says why


def test_1_a_tiny_budget_gives_an_empty_window_with_a_reason(
    collections: dict[int, wp.Collection],
) -> None:
    window = collections[3].pack(QUESTION, budget=1)
    assert (window.text, window.tokens, window.items) == ("", 0, ())
    assert window.reason and "budget" in window.reason


@PROPERTY_SETTINGS
@given(seed=st.integers(0, 3), tokenizer=st.sampled_from(TOKENIZERS))
def test_2_lossless_when_the_collection_fits(
    collections: dict[int, wp.Collection], seed: int, tokenizer: str
) -> None:
    col = collections[seed]
    window = col.pack(
        QUESTION, budget=2 * _total_tokens(col, tokenizer) + 2000, tokenizer=tokenizer
    )
    assert [item.kind for item in window.items] == ["chunk"] * len(window.items)
    position = 0
    for text in _chunk_texts(col):  # every chunk, verbatim, in order
        found = window.text.find(text, position)
        assert found >= 0, text[:60]
        position = found + len(text)


@PROPERTY_SETTINGS
@given(seed=st.integers(0, 3), budget=st.integers(50, 4000), tokenizer=st.sampled_from(TOKENIZERS))
def test_3_and_4_verbatim_chunks_in_document_order(
    collections: dict[int, wp.Collection], seed: int, budget: int, tokenizer: str
) -> None:
    col = collections[seed]
    window = col.pack(QUESTION, budget=budget, tokenizer=tokenizer)
    order = [info.id for info in col.documents()]
    sources = {doc_id: col.get(doc_id).text for doc_id in order}
    last = (-1, -1)
    for item in window.items:
        if item.kind == "chunk":
            assert item.span is not None and item.document_id is not None
            source = sources[item.document_id][item.span.start : item.span.end]
            assert source in window.text  # byte-identical to the source span
        if item.document_id is not None and item.span is not None:
            here = (order.index(item.document_id), item.span.start)
            assert here > last
            last = here


@PROPERTY_SETTINGS
@given(
    seed=st.integers(0, 3),
    budget=st.integers(50, 4000),
    tokenizer=st.sampled_from(TOKENIZERS),
    align=st.booleans(),
    headers=st.sampled_from(["full", "compact", "none"]),
)
def test_3_every_item_carries_its_rendered_text_offset_and_provenance(
    collections: dict[int, wp.Collection],
    seed: int,
    budget: int,
    tokenizer: str,
    align: bool,
    headers: str,
) -> None:
    col = collections[seed]
    window = col.pack(QUESTION, budget=budget, tokenizer=tokenizer, align=align, headers=headers)
    infos = {info.id: (index, info) for index, info in enumerate(col.documents())}
    for item in window.items:
        assert window.text[item.offset : item.offset + len(item.text)] == item.text
        if item.kind == "summary" and headers == "compact" and not item.text.startswith("["):
            # A compact overview lists its summaries under its title, without a header each.
            assert item.offset < window.cacheable_prefix_chars
            assert window.text.startswith(f"# Overview of {col.name}:")
        elif item.kind != "chunk" or headers == "full":
            assert item.text.startswith("[")  # a header line, a summary's or a gap marker
        elif item.span is not None and item.document_id is not None:
            # A compact passage of prose has no header: its text is its source, as is in
            # "none"; or one header line and its source.
            source = col.get(item.document_id).text[item.span.start : item.span.end]
            assert item.text == source or (
                headers == "compact"
                and item.text.startswith("[")
                and "\n" + source == item.text[item.text.index("\n") :]
            )
        if item.document_id is None:
            assert item.document_index is None and item.ordinal is None
            continue
        index, info = infos[item.document_id]
        assert (item.title, item.document_index, item.metadata) == (
            info.title,
            index,
            dict(info.metadata),
        )
        if item.kind == "chunk":
            assert item.span is not None and item.ordinal is not None
            assert item.last_ordinal is not None and item.ordinal <= item.last_ordinal
            assert item.text.endswith(
                col.get(item.document_id).text[item.span.start : item.span.end]
            )


@PROPERTY_SETTINGS
@given(seed=st.integers(0, 3), budget=st.integers(1, 4000), tokenizer=st.sampled_from(TOKENIZERS))
def test_5_same_version_and_request_give_identical_bytes(
    tmp_path_factory: pytest.TempPathFactory,
    collections: dict[int, wp.Collection],
    seed: int,
    budget: int,
    tokenizer: str,
) -> None:
    col = collections[seed]
    first = col.pack(QUESTION, budget=budget, tokenizer=tokenizer)
    assert col.pack(QUESTION, budget=budget, tokenizer=tokenizer) == first
    # And from a new process-like state: a fresh store object on the same files.
    fresh = wp.open(Path(str(col._context.engine.url.database)).parent, config=CONFIG)
    try:
        again = fresh.collection(col.name).pack(QUESTION, budget=budget, tokenizer=tokenizer)
    finally:
        fresh.close()
    assert again.text == first.text and again.items == first.items


@PROPERTY_SETTINGS
@given(seed=st.integers(0, 3), tokenizer=st.sampled_from(TOKENIZERS), budgets=st.lists(
    st.integers(1, 3000), min_size=2, max_size=6))  # fmt: skip
def test_6_needle_recall_never_falls_as_the_budget_grows(
    collections: dict[int, wp.Collection], seed: int, tokenizer: str, budgets: list[int]
) -> None:
    col = collections[seed]
    present = [
        NEEDLE in col.pack(QUESTION, budget=b, tokenizer=tokenizer).text for b in sorted(budgets)
    ]
    assert present == sorted(present)  # once in, it stays in


@PROPERTY_SETTINGS
@given(seed=st.integers(1, 3), budget=st.integers(200, 3000), tokenizer=st.sampled_from(TOKENIZERS))
def test_7_the_stable_tier_is_the_same_for_every_question(
    collections: dict[int, wp.Collection], seed: int, budget: int, tokenizer: str
) -> None:
    col = collections[seed]
    one = col.pack(QUESTION, budget=budget, tokenizer=tokenizer)
    other = col.pack("Which meadow has a falcon and an ember?", budget=budget, tokenizer=tokenizer)
    assert one.text[: one.cacheable_prefix_chars] == other.text[: other.cacheable_prefix_chars]
    assert one.cacheable_prefix_tokens == other.cacheable_prefix_tokens
    prefix = one.text[: one.cacheable_prefix_chars]
    assert get_token_counter(tokenizer).count(prefix) == one.cacheable_prefix_tokens
