"""Why each item is in a window (`WindowItem.why`): every code where it belongs, none missing.

The scenes are built so that one reason alone holds: a chunk sharing the question's words
(stemmed) and none of the words the hash embedder reads, a paraphrase sharing no word (the
real model), a repeated request, a cut section's heading, the second hop's bridge.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from random_corpora import SETTINGS, chat, words

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.types import HEADER_STYLES, WHY, HeaderStyle

CONFIG = StoreConfig(embedder="hash", chunk_tokens=40, fanout=3)
CHUNK_CODES = {"words", "meaning", "words_and_meaning", "linked", "repeat", "context", "room"}


def _why(window: wp.Window, fragment: str) -> set[str | None]:
    return {item.why for item in window.items if fragment in item.text}


@pytest.fixture
def collection(tmp_path: Path) -> Iterator[wp.Collection]:
    with wp.open(tmp_path / "store", config=CONFIG) as store:
        yield store.collection("reasons")


def test_a_match_on_the_question_s_words_alone_is_words(collection: wp.Collection) -> None:
    # "ferries sail" and "Ferry sailing" share stems (BM25) and no word (the hash vectors);
    # three others share "when do" (the vectors, and BM25: Lucene's stop words keep them)
    # and the gulls share nothing, so the ferry ranks below the vector lists' mean.
    others = [f"When do {animal} hunt?" for animal in ("owls", "bats", "foxes")]
    others += [f"Gulls circle the {place} at noon." for place in ("quay", "pier", "dock", "yard")]
    documents = [wp.Document(text=text, id=f"other-{i}") for i, text in enumerate(others)]
    documents.append(wp.Document(text="Ferry sailing resumes in spring.", id="ferry"))
    collection.add(documents)
    window = collection.pack("When do ferries sail?", budget=60, overview_tokens=0)
    assert _why(window, "Ferry sailing resumes") == {"words"}
    assert _why(window, "When do owls hunt?") == {"words_and_meaning"}


def test_a_match_on_words_and_vectors_is_both(collection: wp.Collection) -> None:
    fillers = ["Gulls circle the quay at noon.", "Timber arrives by rail on Mondays."] * 3
    documents = [wp.Document(text=text, id=f"filler-{i}") for i, text in enumerate(fillers)]
    documents.append(wp.Document(text="The zanzibar quota is forty two crates.", id="quota"))
    collection.add(documents)
    window = collection.pack("What is the zanzibar quota?", budget=40, overview_tokens=0)
    assert _why(window, "zanzibar quota is forty") == {"words_and_meaning"}


def test_the_heading_of_a_cut_section_around_a_hit_is_context(collection: wp.Collection) -> None:
    filler = "Crews haul timber while engines hum and gulls circle overhead. " * 4
    body = "\n\n".join([filler] * 5 + ["Our zanzibar quota stays at forty two crates."] + [filler])
    text = f"# Port log\n\n## Operations\n\n{body}\n"
    collection.add([wp.Document(text=text, id="port.md", kind="markdown")])
    window = collection.pack("zanzibar quota", budget=160, overview_tokens=0, headers="full")
    assert _why(window, "zanzibar quota stays") == {"words_and_meaning"}
    # The section is over its share of the budget: cut, it still opens with its heading.
    assert _why(window, "## Operations") == {"context"}
    assert "zanzibar" not in next(i.text for i in window.items if "## Operations" in i.text)


def test_the_instances_of_a_repeated_request_are_repeats(collection: wp.Collection) -> None:
    rng = random.Random(3)
    turns = []
    for index in range(12):
        request = "poem about tapirs" if index % 4 == 0 else f"note about item {index}"
        reply = " ".join(rng.choice(["moss", "river", "stone", "cloud"]) for _ in range(60))
        turns.append(f"User: write a {request}\n\nAssistant: {reply}")
    collection.add_conversation("\n\n".join(turns), id="chat")
    window = collection.pack("the 2nd poem about tapirs", budget=600)
    assert window.cacheable_prefix_chars < len(window.text)  # not the whole chat
    instances = [i for i in window.items if i.kind == "chunk" and "poem about tapirs" in i.text]
    assert instances and {item.why for item in instances} == {"repeat"}
    assert {item.unit for item in instances} == {0, 4, 8}


def test_what_the_feedback_hop_brings_is_linked(collection: wp.Collection) -> None:
    # The bridge shares no word with the question: only the feedback hop (the leading
    # evidence's rare terms, "harbour master") finds it. The fillers share no word either.
    facts = {
        2: "The spare lighthouse keys are kept by the harbour master.",
        7: "Harbour master: Ingrid Solberg.",
    }
    filler = [f"Gardeners prune roses in plot {i}. " * 12 for i in range(10)]
    collection.add([wp.Document(text=facts.get(i) or filler[i], id=f"doc-{i}") for i in range(10)])
    question = "Who keeps the spare lighthouse keys?"
    window = collection.pack(question, budget=300)
    assert _why(window, "kept by the harbour master") == {"words_and_meaning"}
    assert _why(window, "Ingrid Solberg") == {"linked"}
    off = wp.EvidenceSettings(second_hop=False)
    assert "Ingrid" not in collection.pack(question, budget=300, evidence=off).text


def test_overview_summaries_gaps_and_a_whole_collection(collection: wp.Collection) -> None:
    rng = random.Random(1)
    collection.add(
        [
            wp.Document(text="\n\n".join(words(rng, 20, 40) for _ in range(12)), id=f"d{i}")
            for i in range(6)
        ]
    )
    # Summaries fill what the verbatim phase leaves: some budget of these leaves room for one.
    windows = [
        collection.pack("falcon quarry", budget=budget, overview_tokens=150)
        for budget in range(500, 900, 25)
    ]
    with_summaries = 0
    for window in windows:
        tier = [item for item in window.items if item.offset < window.cacheable_prefix_chars]
        assert tier and {item.why for item in tier} == {"overview"}
        rest = window.items[len(tier) :]
        summaries = {item.why for item in rest if item.kind == "summary"}
        assert summaries <= {"summary"}
        with_summaries += bool(summaries)
        assert {item.why for item in rest if item.kind == "gap"} == {"gap"}
    assert with_summaries
    whole = collection.pack("falcon quarry", budget=1_000_000)
    assert {item.why for item in whole.items} == {"whole"}


def test_a_session_s_follow_up_tier_is_follow_up(collection: wp.Collection) -> None:
    lockers = [f"Key {i} opens locker {i * 7}. " * 8 for i in range(120)]
    collection.add([wp.Document(text=text, id=f"k{i}") for i, text in enumerate(lockers)])
    session = collection.session(budget=3000)
    first = session.pack("Which locker does key 3 open?")
    second = session.pack("Which locker does key 21 open?")
    assert session.extends
    added = second.items[len(first.items) :]
    assert added and {item.why for item in added} == {"follow_up"}
    assert [item.why for item in second.items[: len(first.items)]] == [
        item.why for item in first.items
    ]


@pytest.mark.model
def test_a_paraphrase_sharing_no_word_is_meaning(tmp_path: Path) -> None:
    with wp.open(tmp_path / "store") as store:  # the bundled model
        collection = store.collection("model")
        fillers = [
            "Quarterly revenue grew by four percent in the northern region.",
            "The committee approved the new parking regulations on Tuesday.",
            "Volcanic soil makes the vineyards on the island unusually fertile.",
        ]
        texts = [*fillers, "The boat departs from the harbour at seven in the morning."]
        collection.add([wp.Document(text=text, id=f"t{i}") for i, text in enumerate(texts)])
        window = collection.pack("When does the ferry leave?", budget=30, overview_tokens=0)
    assert _why(window, "boat departs") == {"meaning"}


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[wp.Collection]:
    """Chats with repeated requests, markdown sections and prose, built once."""
    store = wp.open(tmp_path_factory.mktemp("reasons") / "store", config=CONFIG)
    collection = store.collection("mixed")
    rng = random.Random(11)
    for index in range(2):
        collection.add_conversation(chat(rng, turns=10, reply_words=40), id=f"chat-{index}")
    sections = [
        f"## Part {i}\n\n" + "\n\n".join(words(rng, 5, 40) for _ in range(3)) for i in range(4)
    ]
    collection.add([wp.Document(text="\n\n".join(sections), id="doc.md", kind="markdown")])
    collection.add([wp.Document(text=words(rng, 30, 90), id=f"p{i}") for i in range(4)])
    yield collection
    store.close()


QUESTIONS = [
    "What did the falcon find in the quarry?",
    "the second haiku about saffron in pirate style",
    "tundra harbor meadow",
]


@SETTINGS
@given(
    budget=st.integers(30, 6000),
    question=st.sampled_from(QUESTIONS),
    headers=st.sampled_from(HEADER_STYLES),
)
def test_every_item_of_a_window_says_why_it_is_there(
    mixed: wp.Collection, budget: int, question: str, headers: HeaderStyle
) -> None:
    window = mixed.pack(question, budget=budget, headers=headers)
    lossless = window.cacheable_prefix_chars == len(window.text) and window.items
    for item in window.items:
        assert item.why in WHY
        if item.kind == "gap":
            assert item.why == "gap"
        elif lossless:
            assert item.why == "whole"
        elif item.kind == "summary":
            tier = item.offset + len(item.text) <= window.cacheable_prefix_chars
            assert item.why == ("overview" if tier else "summary")
        else:
            assert item.why in CHUNK_CODES
            if headers != "none":  # a repeat's header names its instance
                assert (item.why == "repeat") == ("instance " in item.text.split("\n", 1)[0])
