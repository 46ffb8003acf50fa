"""The drafts of one pack share what they render and count alike (`rendering.DraftMemo`,
`piece_counts.CountMemo`): a pack with them is byte for byte the pack without them, and a
document chosen alike in several drafts is rendered once."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from random_corpora import SETTINGS, WORDS, chat, words

import windowpack as wp
from windowpack.pack import rendering, window

_Corpus = tuple[list[wp.Document], list[list[dict[str, str]]]]


def _corpus(seed: int, count: int) -> _Corpus:
    """Prose, sectioned pages and chats (units, and labels for the repeated request)."""
    rng = random.Random(seed)
    documents, chats = [], []
    for number in range(count):
        shape = number % 3
        if shape == 0:
            text = " ".join(words(rng, 4, 12) for _ in range(rng.randint(5, 60)))
            documents.append(wp.Document(text=text, id=f"prose-{number}", title=f"P {number}"))
        elif shape == 1:
            sections = [
                f"## Part {part}\n\n"
                + " ".join(words(rng, 4, 10) for _ in range(rng.randint(2, 25)))
                for part in range(rng.randint(1, 4))
            ]
            documents.append(wp.Document(text="\n\n".join(sections), id=f"page-{number}.md"))
        else:
            chats.append(chat(rng))
    return documents, chats


def _without_memos(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every draft renders and counts everything again, as before the memos."""
    render, count = rendering.render_documents, window.piece_counts

    def render_all(*args: Any, **kwargs: Any) -> Any:
        return render(*args[:3], **{k: v for k, v in kwargs.items() if k != "memo"})

    def count_all(counter: Any, pieces: Any, memo: Any = None) -> Any:
        return count(counter, pieces)

    monkeypatch.setattr(rendering, "render_documents", render_all)
    monkeypatch.setattr(window, "piece_counts", count_all)


def _packs(
    folder: Any, corpus: _Corpus, question: str, budgets: list[int], style: str
) -> list[tuple[str, list[tuple[Any, ...]]]]:
    config = wp.StoreConfig(embedder="hash", chunk_tokens=40)
    with wp.open(folder, config=config) as store:
        collection = store.collection("c")
        documents, chats = corpus
        collection.add(documents)
        for number, messages in enumerate(chats):
            collection.add_conversation(messages, id=f"chat-{number}")
        packs = []
        for budget in budgets:
            packed = collection.pack(question, budget=budget, headers=style)
            items = [
                (item.kind, item.document_id, item.ordinal, item.tokens, item.offset, item.why)
                for item in packed.items
            ]
            packs.append((packed.text, items))
        return packs


# Each example builds two stores: fewer than the other properties draw.
@settings(SETTINGS, max_examples=15)
@given(
    seed=st.integers(0, 10_000),
    count=st.integers(3, 12),
    budgets=st.lists(st.integers(120, 4000), min_size=1, max_size=3, unique=True),
    question=st.lists(st.sampled_from([*WORDS, "haiku", "pirate"]), min_size=1, max_size=4),
    style=st.sampled_from(["full", "compact", "none"]),
)
def test_a_pack_with_the_draft_memos_is_the_pack_without_them(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    count: int,
    budgets: list[int],
    question: list[str],
    style: str,
) -> None:
    corpus, asked = _corpus(seed, count), " ".join(question) + "?"
    with_memos = _packs(tmp_path_factory.mktemp("memo"), corpus, asked, budgets, style)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _without_memos(monkeypatch)
        without = _packs(tmp_path_factory.mktemp("plain"), corpus, asked, budgets, style)
    assert with_memos == without


def _calls_to(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    """A list that grows by one at each call of `module.name` from now on."""
    calls: list[int] = []
    original = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_document_chosen_alike_in_several_drafts_is_rendered_once(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(7)
    documents = [
        wp.Document(text=" ".join(words(rng, 6, 12) for _ in range(40)), id=f"d{n}")
        for n in range(30)
    ]
    config = wp.StoreConfig(embedder="hash", chunk_tokens=40)
    with wp.open(tmp_path, config=config) as store:
        collection = store.collection("c")
        collection.add(documents)
        drafts = _calls_to(monkeypatch, rendering, "render_documents")
        rendered = _calls_to(monkeypatch, rendering, "document_blocks")
        packed = collection.pack("otter lantern glacier?", budget=3000)
    shown = {item.document_id for item in packed.items if item.kind == "chunk"}
    assert len(drafts) >= 2, "this budget should take more than one draft"
    # Without the memo every draft renders every document it touches again.
    assert len(rendered) < len(drafts) * len(shown)
