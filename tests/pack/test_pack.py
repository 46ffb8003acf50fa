"""Packing through the facade: several collections, chat messages, alignment, caching, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.text.tokens import get_token_counter

CONFIG = StoreConfig(embedder="hash", chunk_tokens=40, fanout=3)


def _filler(topic: str, count: int) -> list[wp.Document]:
    return [
        wp.Document(
            text="\n\n".join(
                f"Paragraph {p} of note {n} about {topic}: routine {topic} records, nothing new."
                for p in range(6)
            ),
            id=f"{topic}-{n}",
        )
        for n in range(count)
    ]


@pytest.fixture
def two_sources(tmp_path: Path) -> wp.Store:
    store = wp.open(tmp_path, config=CONFIG)
    relevant = _filler("harbour", 4)
    relevant[2] = wp.Document(
        text=relevant[2].text + "\n\nThe harbour master's launch is called Petrel and seats nine.",
        id="harbour-2",
    )
    store.collection("harbour").add(relevant)
    store.collection("orchard").add(_filler("orchard", 6))
    return store


def test_several_collections_share_one_budget_by_relevance(two_sources: wp.Store) -> None:
    question = "What is the harbour master's launch called and how many does it seat?"
    window = two_sources.pack(question, collections=["harbour", "orchard"], budget=600)
    assert window.tokens <= 600
    assert "Petrel and seats nine" in window.text
    spent = {"harbour": 0, "orchard": 0}
    for item in window.items:
        if item.kind == "chunk" and item.collection:
            spent[item.collection] += item.tokens
    assert spent["harbour"] > spent["orchard"]  # relevance decides, not a fixed split
    assert {name for name, _ in window.index_versions} == {"harbour", "orchard"}


def test_an_unknown_collection_in_a_multi_pack_is_named(two_sources: wp.Store) -> None:
    with pytest.raises(wp.CollectionNotFoundError, match="'nowhere'"):
        two_sources.pack("x", collections=["harbour", "nowhere"], budget=100)
    with pytest.raises(wp.InvalidArgumentError, match="'collections'"):
        two_sources.pack("x", collections=[], budget=100)


def test_messages_put_the_stable_tier_first_with_a_cache_breakpoint(two_sources: wp.Store) -> None:
    col = two_sources.collection("orchard")
    window = col.pack("routine orchard records", budget=400, overview_tokens=120)
    assert 0 < window.cacheable_prefix_chars < len(window.text)
    system, user, _question = window.messages(cache_control=True)
    assert system["role"] == "system" and user["role"] == "user"
    assert system["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert system["content"][0]["text"] + user["content"][0]["text"] == window.text
    assert "cache_control" not in window.messages()[0]["content"][0]


def test_align_pads_the_stable_tier_to_256_tokens(two_sources: wp.Store) -> None:
    col = two_sources.collection("orchard")
    # 600 tokens: less than the whole collection (~640 with compact headers), which would
    # be the lossless window, all of it stable and nothing to align.
    window = col.pack("routine orchard records", budget=600, overview_tokens=300, align=True)
    counter = get_token_counter("o200k_base")
    prefix = window.text[: window.cacheable_prefix_chars]
    assert window.cacheable_prefix_tokens == counter.count(prefix)
    assert window.cacheable_prefix_tokens % 256 == 0 and window.cacheable_prefix_tokens > 0
    assert window.tokens <= 600 and window.cacheable_prefix_tokens < window.tokens


def test_a_repeated_request_is_served_from_the_window_cache(two_sources: wp.Store) -> None:
    col = two_sources.collection("harbour")
    first = col.pack("launch seats", budget=500)
    hits = two_sources.packer.cache_hits
    again = col.pack("launch seats", budget=500)
    # The very same object and a counted hit: a lookup, not a pack (timing it would test the
    # machine's load, not the cache).
    assert again is first and two_sources.packer.cache_hits == hits + 1


def test_a_new_version_is_packed_afresh(two_sources: wp.Store) -> None:
    col = two_sources.collection("harbour")
    before = col.pack("launch seats", budget=500)
    col.add([wp.Document(text="The launch Petrel was repainted blue in spring.", id="paint")])
    after = col.pack("launch seats", budget=500)
    assert after.index_version == before.index_version + 1
    assert "repainted blue" in after.text


@pytest.mark.parametrize("budget", [0, -5, 10_000_001])
def test_a_bad_budget_is_named(two_sources: wp.Store, budget: int) -> None:
    with pytest.raises(wp.InvalidArgumentError, match="'budget'"):
        two_sources.collection("harbour").pack("x", budget=budget)


def test_an_unknown_tokenizer_is_named(two_sources: wp.Store) -> None:
    with pytest.raises(wp.InvalidArgumentError, match="'tokenizer'"):
        two_sources.collection("harbour").pack("x", budget=100, tokenizer="nope")


def test_a_hugging_face_tokenizer_counts_the_window(two_sources: wp.Store) -> None:
    from windowpack.embed.embedder import bundled_model_path

    path = bundled_model_path()
    window = two_sources.collection("harbour").pack("launch", budget=300, tokenizer=path)
    assert window.tokens == get_token_counter(path).count(window.text) <= 300


def test_messages_end_with_the_question_unless_left_out(two_sources: wp.Store) -> None:
    col = two_sources.collection("orchard")
    window = col.pack("routine orchard records", budget=400, overview_tokens=120)

    *_, last = window.messages()
    without = window.messages(include_question=False)

    assert last == {"role": "user", "content": [{"type": "text", "text": window.query}]}
    assert len(without) == 2 and without[-1]["content"][0]["text"] != window.query
    assert "".join(m["content"][0]["text"] for m in without) == window.text


def test_prefix_cache_says_which_provider_minimums_are_reached(two_sources: wp.Store) -> None:
    col = two_sources.collection("orchard")
    short = col.pack("routine orchard records", budget=4000)

    assert short.cacheable_prefix_tokens < 1024
    assert short.prefix_cache() == dict.fromkeys(wp.PROMPT_CACHE_MINIMUMS, False)


@pytest.mark.parametrize("tokenizer", ["o200k_base", "cl100k_base"])
def test_align_to_a_minimum_pads_the_stable_tier_to_reach_it(
    two_sources: wp.Store, tokenizer: str
) -> None:
    col = two_sources.collection("meadow")
    col.add(_filler("meadow", 40))  # ~5K tokens: more than the budget
    plain = col.pack("routine meadow records", budget=2048, tokenizer=tokenizer)
    aligned = col.pack("routine meadow records", budget=2048, tokenizer=tokenizer, align=1024)
    counter = get_token_counter(tokenizer)

    prefix = aligned.text[: aligned.cacheable_prefix_chars]
    assert plain.cacheable_prefix_tokens < 1024 == aligned.cacheable_prefix_tokens
    assert counter.count(prefix) == 1024 and counter.count(aligned.text) == aligned.tokens <= 2048
    assert aligned.prefix_cache() == {
        provider: minimum <= 1024 for provider, minimum in wp.PROMPT_CACHE_MINIMUMS.items()
    }
    assert aligned.prefix_cache()["anthropic"] and not aligned.prefix_cache()["gemini-3"]
    # More overview first: every summary of the plain overview is still there, and more.
    plain_summaries = [i.text for i in plain.items if i.offset < plain.cacheable_prefix_chars]
    aligned_summaries = [i.text for i in aligned.items if i.offset < aligned.cacheable_prefix_chars]
    assert len(aligned_summaries) >= len(plain_summaries)


def test_align_to_a_minimum_over_half_the_budget_only_rounds(two_sources: wp.Store) -> None:
    col = two_sources.collection("meadow")
    col.add(_filler("meadow", 40))
    window = col.pack("routine meadow records", budget=1500, align=1024)

    assert window.cacheable_prefix_tokens % 256 == 0 and window.cacheable_prefix_tokens < 1024
    with pytest.raises(wp.InvalidArgumentError, match="'align'"):
        col.pack("routine meadow records", budget=1500, align=-3)
