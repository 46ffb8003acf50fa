"""What the docs eval measures of one window: the answer verbatim in it, never over budget,
and the share of the budget that is content, summaries, headers, markers and unused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from docs_corpus import write_corpus

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.evals import Composition, DocsSet, load_docs_set, window_composition
from windowpack.evals.composition import context_composition
from windowpack.evals.contexts import Context
from windowpack.evals.docs_eval import window_measures
from windowpack.text import get_token_counter
from windowpack.types import Span

COUNTER = get_token_counter("o200k_base")
SEP = "\n\n"
DOCUMENT = "Intro line.\n\nThe default is 4 gigabytes (`4GB`).\n\nTail of the page."


def _hand_window(budget: int) -> tuple[wp.Window, dict[str, int]]:
    """A window put together by hand, as `pack` renders one, and the token counts each part
    has when counted alone."""
    verbatim = DOCUMENT[13:48]
    assert verbatim == "The default is 4 gigabytes (`4GB`)."
    chunk = f"[doc.md › Settings · chunk 2 of 3 · chars 13-48]\n{verbatim}"
    body = "Settings: the planner's defaults."
    summary = f"[summary (level 2) of chunks 1-3 of 3]\n{body}"
    gap = "[... 12 tokens left out ...]"
    header = "## Doc (doc.md) · document 1 of 1"
    text = SEP.join([header, summary, chunk, gap])
    items = tuple(
        wp.WindowItem(
            kind=kind,
            document_id="doc.md",
            level=level,
            span=span,
            tokens=COUNTER.count(piece + (SEP if piece != gap else "")),
            score=0.0,
            text=piece,
            offset=text.index(piece),
        )
        for kind, level, span, piece in (
            ("summary", 2, Span(start=0, end=len(DOCUMENT)), summary),
            ("chunk", 0, Span(start=13, end=48), chunk),
            ("gap", 0, None, gap),
        )
    )
    window = wp.Window(
        text=text,
        tokens=COUNTER.count(text),
        items=items,
        cacheable_prefix_tokens=0,
        cacheable_prefix_chars=0,
        index_version=1,
        budget=budget,
        tokenizer="o200k_base",
        query="q",
    )
    alone = {
        "content": COUNTER.count(verbatim),
        "summaries": COUNTER.count(body),
        "markers": items[2].tokens,
    }
    return window, alone


def test_a_windows_parts_are_its_verbatim_spans_summaries_markers_and_the_rest() -> None:
    window, alone = _hand_window(budget=200)
    parts = window_composition(window, COUNTER, {"doc.md": DOCUMENT}.get)
    assert (parts.content, parts.summaries, parts.markers) == (
        alone["content"],
        alone["summaries"],
        alone["markers"],
    )
    # Headers: the bracketed lines, the separators and the document header outside the items.
    assert parts.headers == window.tokens - sum(alone.values()) > 0
    assert parts.unused == 200 - window.tokens
    shares = parts.shares()
    assert shares["content_share"] == pytest.approx(alone["content"] / 200)
    assert sum(shares.values()) == pytest.approx(1.0)


def test_a_chunk_whose_document_is_unknown_loses_only_its_bracketed_header() -> None:
    window, alone = _hand_window(budget=200)
    parts = window_composition(window, COUNTER, lambda document_id: None)
    assert parts.content == alone["content"]  # the text after the header line


def test_a_baseline_context_is_all_content_but_its_summaries() -> None:
    context = Context(text="some chunk text\n\nanother chunk", tokens=7, seconds=0.0)
    assert context_composition(context, 10, COUNTER, lambda _: None) == Composition(
        content=7, summaries=0, headers=0, markers=0, unused=3, budget=10
    )
    raptor = Context(text="chunk\n\nsummary", tokens=7, seconds=0.0, summary_tokens=2)
    assert context_composition(raptor, 10, COUNTER, lambda _: None).summaries == 2


@pytest.fixture
def manual_store(tmp_path: Path) -> Iterator[tuple[wp.Collection, DocsSet]]:
    corpus, pages, questions = write_corpus(tmp_path)
    docs = load_docs_set(corpus, questions, pages=pages, max_bytes=StoreConfig().max_file_bytes)
    store = wp.open(tmp_path / "store", config=StoreConfig(embedder="hash", chunk_tokens=64))
    collection = store.collection("manual")
    collection.add(list(docs.documents))
    yield collection, docs
    store.close()


def test_recall_and_shares_of_packed_windows(
    manual_store: tuple[wp.Collection, DocsSet],
) -> None:
    collection, docs = manual_store
    texts = {document.id: document.text for document in docs.documents}
    corpus_tokens = sum(COUNTER.count(text) for text in texts.values())
    by_line = {question.line: question for question in docs.questions}
    for budget in (120, 4 * corpus_tokens):
        for question in by_line.values():
            window = collection.pack(question.question, budget=budget)
            context = Context(text=window.text, tokens=window.tokens, seconds=0.0, window=window)
            row = window_measures(question.answers, context, budget, COUNTER, texts.get)
            assert row["within_budget"] == 1.0 and row["counted_tokens"] <= budget
            shares = [row[f"{part}_share"] for part in Composition.PARTS]
            assert sum(shares) == pytest.approx(1.0) and min(shares) >= 0.0
            chunks = [item for item in window.items if item.kind == "chunk"]
            # Every chunk item shows its document's span verbatim: that is the content.
            for item in chunks:
                assert item.span is not None
                assert item.text.endswith(texts[item.document_id][item.span.start : item.span.end])
            content = sum(
                COUNTER.count(texts[item.document_id][item.span.start : item.span.end])
                for item in chunks
                if item.span is not None and item.document_id is not None
            )
            assert row["content_share"] == pytest.approx(content / budget)
            gaps = sum(item.tokens for item in window.items if item.kind == "gap")
            assert row["markers_share"] == pytest.approx(gaps / budget)
            assert row["unused_share"] == pytest.approx((budget - window.tokens) / budget)
            if question.line == 4:  # its answer is nowhere in the corpus
                assert row["needle_recall"] == 0.0
            elif budget > corpus_tokens:  # the whole manual fits: every answer is in it
                assert row["needle_recall"] == 1.0
    small = collection.pack(by_line[1].question, budget=120)
    parts = window_composition(small, COUNTER, texts.get)
    assert parts.markers > 0 and parts.headers > 0  # a tight budget leaves things out
