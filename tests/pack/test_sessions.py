"""Session windows: each follow-up's window starts with the previous one byte for byte while
the budget allows, is exact and within budget, and shows no chunk twice; provider cache
minimums and cache plans."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.prompt_cache import MAX_ANTHROPIC_BREAKPOINTS
from windowpack.text.tokens import get_token_counter

CONFIG = StoreConfig(embedder="hash", chunk_tokens=32, fanout=3)
TOKENIZERS = ["o200k_base", "cl100k_base"]
SETTINGS = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _facts(seed: int, documents: int, kind: str = "text") -> list[wp.Document]:
    """Documents of numbered facts: `key{d}_{p}` has the value `{d * 1000 + p}`."""
    rng = random.Random(seed)
    result = []
    for d in range(documents):
        paragraphs = [
            f"Entry {p} of ledger {d}: the value of key{d}_{p} is {d * 1000 + p}"
            + " and so it stays" * rng.randint(0, 4)
            + "."
            for p in range(rng.randint(2, 9))
        ]
        if kind == "markdown":
            paragraphs = [f"## Part {i}\n\n{text}" for i, text in enumerate(paragraphs)]
        result.append(
            wp.Document(
                text="\n\n".join(paragraphs), id=f"ledger-{d}", title=f"Ledger {d}", kind=kind
            )  # type: ignore[arg-type]
        )
    return result


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[wp.Store]:
    opened = wp.open(tmp_path_factory.mktemp("sessions"), config=CONFIG)
    for seed, (count, kind) in enumerate([(40, "text"), (25, "markdown"), (3, "text")]):
        opened.collection(f"c{seed}").add(_facts(seed, count, kind))
    yield opened
    opened.close()


def _questions(rng: random.Random, count: int) -> list[str]:
    return [
        f"What is the value of key{rng.randrange(40)}_{rng.randrange(2)}?" for _ in range(count)
    ]


def _chunks_shown(window: wp.Window) -> list[tuple[str | None, str | None, int]]:
    return [
        (item.collection, item.document_id, ordinal)
        for item in window.items
        if item.kind == "chunk" and item.ordinal is not None
        for ordinal in range(item.ordinal, (item.last_ordinal or item.ordinal) + 1)
    ]


@SETTINGS
@given(
    seed=st.integers(0, 2),
    budget=st.integers(300, 5000),
    tokenizer=st.sampled_from(TOKENIZERS),
    questions=st.integers(2, 12),
    draw=st.randoms(use_true_random=False),
)
def test_follow_ups_extend_the_previous_window_exactly_and_within_budget(
    store: wp.Store,
    seed: int,
    budget: int,
    tokenizer: str,
    questions: int,
    draw: random.Random,
) -> None:
    counter = get_token_counter(tokenizer)
    session = store.collection(f"c{seed}").session(budget=budget, tokenizer=tokenizer)
    previous: wp.Window | None = None
    for number, question in enumerate(_questions(draw, questions)):
        window = session.pack(question)
        assert window.tokens == counter.count(window.text) <= budget
        assert window.query == question
        shown = _chunks_shown(window)
        assert len(shown) == len(set(shown)), "a chunk is in the window twice"
        for item in window.items:
            assert window.text[item.offset : item.offset + len(item.text)] == item.text
        tiers = window.tiers
        assert [t.end for t in tiers] == sorted(t.end for t in tiers)
        for tier in tiers:
            assert counter.count(window.text[: tier.end]) == tier.tokens
        if number == 0:
            assert not session.extends and session.reason is None
        elif session.extends:
            assert previous is not None
            assert window.text.startswith(previous.text)
            assert window.cached_prefix_tokens(previous) == previous.tokens
        else:
            assert session.reason, "a window packed afresh says why"
            assert previous is not None
            # The overview is the one an independent pack opens with: still shared.
            assert (
                window.cached_prefix_tokens(previous)
                >= min(window.cacheable_prefix_tokens, previous.cacheable_prefix_tokens)
                or not window.cacheable_prefix_chars
            )
        previous = window


def test_ten_questions_fit_one_budget_by_default(store: wp.Store) -> None:
    session = store.collection("c0").session(budget=4000)
    rng = random.Random(7)
    extended = []
    for question in _questions(rng, 10):
        window = session.pack(question)
        extended.append(session.extends)
        digits = question.split("key")[1].rstrip("?").split("_")
        assert str(int(digits[0]) * 1000 + int(digits[1])) in window.text  # the answer is in
    assert extended == [False] + [True] * 9


def test_a_full_window_is_packed_afresh_and_says_why(store: wp.Store) -> None:
    session = store.collection("c0").session(budget=1200, first_tokens=800, follow_up_tokens=300)
    previous = session.pack("What is the value of key3_1?")
    for question in _questions(random.Random(5), 8):
        window = session.pack(question)
        if not session.extends:
            break
        previous = window
    assert not session.extends, "eight follow-ups of 300 tokens cannot all fit 1,200"
    assert previous.tokens > 1200 - 300
    assert session.reason is not None and "too few left" in session.reason


def test_a_write_between_questions_repacks_and_names_the_collection(tmp_path: Path) -> None:
    with wp.open(tmp_path, config=CONFIG) as opened:
        col = opened.collection("notes")
        col.add(_facts(1, 12))
        session = col.session(budget=1500)
        session.pack("What is the value of key2_1?")
        col.add([wp.Document(text="A new ledger: key99_0 is 5.", id="new")])
        session.pack("What is the value of key2_1?")
        assert not session.extends
        assert session.reason is not None and "'notes'" in session.reason


def test_a_token_resumes_the_session_in_another_object(store: wp.Store) -> None:
    col = store.collection("c1")
    session = col.session(budget=3000)
    session.pack("What is the value of key4_1?")
    assert session.token is not None
    resumed = col.session(budget=3000, token=session.token)
    here, there = (
        session.pack("What is the value of key9_2?"),
        resumed.pack("What is the value of key9_2?"),
    )
    assert resumed.extends and here.text == there.text and here.items == there.items


def test_a_token_under_other_settings_repacks(store: wp.Store) -> None:
    col = store.collection("c1")
    session = col.session(budget=3000)
    session.pack("What is the value of key4_1?")
    other = col.session(budget=2000, token=session.token)
    other.pack("What is the value of key9_2?")
    assert not other.extends and other.reason is not None and "settings" in other.reason


@pytest.mark.parametrize("token", ["not a token", "e30", ""])
def test_a_bad_token_is_named(store: wp.Store, token: str) -> None:
    with pytest.raises(wp.InvalidArgumentError, match="'session'"):
        store.collection("c1").session(budget=2000, token=token).pack("key1_1?")


def test_session_sizes_are_checked(store: wp.Store) -> None:
    col = store.collection("c1")
    with pytest.raises(wp.InvalidArgumentError, match="'follow_up_tokens'"):
        col.session(budget=2000, follow_up_tokens=0)
    with pytest.raises(wp.InvalidArgumentError, match="'first_tokens'"):
        col.session(budget=2000, first_tokens=2001)
    with pytest.raises(wp.InvalidArgumentError, match="'budget'"):
        col.session(budget=0)


def test_a_collection_that_fits_is_shown_whole_and_follow_ups_add_nothing(store: wp.Store) -> None:
    session = store.collection("c2").session(budget=100_000)
    first = session.pack("What is the value of key1_1?")
    second = session.pack("What is the value of key2_1?")
    assert session.extends and second.text == first.text and second.query != first.query
    assert second.cached_prefix_tokens(first) == first.tokens


def test_a_session_over_several_collections(store: wp.Store) -> None:
    session = store.session(collections=["c0", "c1"], budget=3000)
    first = session.pack("What is the value of key5_1?")
    second = session.pack("What is the value of key20_0?")
    assert session.extends and second.text.startswith(first.text)
    assert {item.collection for item in second.items} <= {"c0", "c1"}


def test_provider_makes_the_stable_tier_reach_its_minimum(store: wp.Store) -> None:
    col = store.collection("c0")
    plain = col.pack("What is the value of key5_1?", budget=4096)
    cached = col.pack("What is the value of key5_1?", budget=4096, provider="anthropic")
    counter = get_token_counter("o200k_base")
    assert plain.cacheable_prefix_tokens < 1024 <= cached.cacheable_prefix_tokens
    prefix = cached.text[: cached.cacheable_prefix_chars]
    assert counter.count(prefix) == cached.cacheable_prefix_tokens
    assert cached.prefix_cache()["anthropic"] and cached.tokens <= 4096
    assert "5001" in cached.text  # the evidence is still there
    # Half the budget is the most the stable tier may take: below that, nothing is padded.
    small = col.pack("What is the value of key5_1?", budget=1500, provider="anthropic")
    assert small.cacheable_prefix_tokens < 1024


def test_an_unknown_provider_is_named(store: wp.Store) -> None:
    col = store.collection("c0")
    with pytest.raises(wp.InvalidArgumentError, match="'provider'"):
        col.pack("key1_1?", budget=2000, provider="nope")
    window = col.pack("key1_1?", budget=2000)
    with pytest.raises(wp.InvalidArgumentError, match="'provider'"):
        window.cache_plan("nope")


def _session_window(store: wp.Store, questions: int) -> wp.Window:
    session = store.collection("c0").session(budget=6000)
    rng = random.Random(3)
    window = None
    for question in _questions(rng, questions):
        window = session.pack(question)
    assert window is not None and session.extends
    return window


def test_the_anthropic_plan_marks_at_most_four_breakpoints_longest_lived_first(
    store: wp.Store,
) -> None:
    window = _session_window(store, 7)
    plan = window.cache_plan("anthropic")
    request = plan["request"]
    parts = request["system"] + [
        part for message in request["messages"] for part in message["content"]
    ]
    marks = [part["cache_control"]["ttl"] for part in parts if "cache_control" in part]
    assert 1 < len(marks) <= MAX_ANTHROPIC_BREAKPOINTS
    assert marks == sorted(marks, key=lambda ttl: ttl != "1h")  # an hour before 5 minutes
    assert all(message["role"] == "user" for message in request["messages"])
    texts = [part["text"] for part in parts]
    assert "".join(texts[:-1]) == window.text and texts[-1] == window.query
    # The last breakpoint ends this window: the next follow-up's cache hit.
    assert plan["breakpoints"][-1] == len(window.text) and plan["reaches_minimum"]


def test_the_openai_key_names_the_stable_tier_and_changes_with_the_version(tmp_path: Path) -> None:
    with wp.open(tmp_path, config=CONFIG) as opened:
        col = opened.collection("notes")
        col.add(_facts(0, 30))
        asked = {"budget": 3000, "overview_tokens": 375}  # a stable tier to cache
        one = col.pack("What is the value of key1_1?", **asked).cache_plan("openai")
        two = col.pack("What is the value of key7_2?", **asked).cache_plan("openai")
        assert one["request"]["prompt_cache_key"] == two["request"]["prompt_cache_key"]
        col.add([wp.Document(text="Another ledger entirely.", id="more")])
        three = col.pack("What is the value of key1_1?", **asked).cache_plan("openai")
        assert three["request"]["prompt_cache_key"] != one["request"]["prompt_cache_key"]
        assert [m["role"] for m in one["request"]["messages"]] == ["system", "user", "user"]


def test_messages_cut_at_the_session_tiers(store: wp.Store) -> None:
    window = _session_window(store, 4)
    messages = window.messages(provider="openai", include_question=False)
    texts = [part["text"] for message in messages for part in message["content"]]
    assert "".join(texts) == window.text
    ends, total = [], 0
    for text in texts:
        total += len(text)
        ends.append(total)
    assert [tier.end for tier in window.tiers] == ends
    assert not any("cache_control" in part for m in messages for part in m["content"])


def _token(store: wp.Store, **body: object) -> str:
    """A token of `body` over the defaults, signed with `store`'s secret: past the signature,
    so that what it holds is checked (a leaked secret must not open anything else)."""
    import json

    from windowpack.service import SessionTokens
    from windowpack.storage import SESSION_TOKENS, StoreSecrets

    fields = {"format": 1, "versions": [["c1", 1]], "plan": [], "first_query": "q", "added": []}
    secret = StoreSecrets(store.sessions).get(SESSION_TOKENS)
    return SessionTokens(secret=secret).sign(json.dumps({**fields, **body}).encode())


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"versions": [["c1", float("inf")]]}, "no version"),
        ({"versions": [["c2", 1]]}, "issued for the collections ['c2']"),
        ({"added": [[[2**70]]]}, "no chunk position"),
        ({"added": [[[-1]]]}, "no chunk position"),
        ({"added": [[[0]], [[0]]]}, "a chunk twice"),
        ({"added": [[[0, 0]]]}, "a chunk twice"),
        ({"added": [[[]]]}, "adds no chunk"),
        ({"added": [[list(range(2001))]]}, "more chunks than the budget"),
        ({"added": [[[[[[0]]]]]]}, "nests deeper"),
        ({"plan": [[1]]}, "settings"),
        ({"first_query": ""}, "question"),
        ({"first_query": "   "}, "question"),
        ({"first_query": 7}, "question"),
        ({"first_query": "q" * 20_001}, "question"),
        ({"first_query": "\ud800x"}, "lone surrogate"),
        ({"first_query": "a\x00b"}, "NUL"),
        ({"extra": 1}, "not a session token"),
    ],
)
def test_a_forged_token_is_refused_and_named(
    store: wp.Store, body: dict[str, object], says: str
) -> None:
    token = _token(store, **body)
    with pytest.raises(wp.InvalidArgumentError, match="'session'") as refused:
        store.collection("c1").session(budget=2000, token=token).pack("key1_1?")
    assert says in str(refused.value)


def test_a_token_is_bound_to_its_store_scope_and_secret(store: wp.Store, tmp_path: Path) -> None:
    session = store.collection("c1").session(budget=2000)
    session.pack("What is the value of key1_1?")
    token = session.token
    assert token is not None
    resumed = store.collection("c1").session(budget=2000, token=token)
    assert resumed.pack("What is the value of key1_2?") is not None
    with pytest.raises(wp.InvalidArgumentError, match=r"'session'.*not signed"):
        store.collection("c1").session(budget=2000, token=token, scope="another-key")
    with wp.open(tmp_path / "other", config=CONFIG) as other:
        other.collection("c1").add(_facts(1, 3, "text"))
        with pytest.raises(wp.InvalidArgumentError, match=r"'session'.*not signed"):
            other.collection("c1").session(budget=2000, token=token)
    store.rotate_session_secret()
    with pytest.raises(wp.InvalidArgumentError, match=r"'session'.*rotated"):
        store.collection("c1").session(budget=2000, token=token)


def test_a_session_window_reports_the_session_budget(store: wp.Store) -> None:
    session = store.collection("c0").session(budget=2000)
    assert session.pack("What is the value of key1_1?").budget == 2000
    assert session.pack("What is the value of key2_1?").budget == 2000


@pytest.fixture(scope="module")
def gpt2_style_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A byte-level BPE with GPT-2's pre-tokenizer, trained here on the ledgers: like the
    GGUF and Hugging Face tokenizers of open models, it splits a blank line before `[` into
    two tokens but counts it as one at the end of a text."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    texts = [document.text + "\n\n" for document in _facts(0, 40)]  # "\n\n" ends a text: one token
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(vocab_size=600, initial_alphabet=alphabet)
    tokenizer.train_from_iterator(texts, trainer)
    path = tmp_path_factory.mktemp("tokenizer") / "tokenizer.json"
    tokenizer.save(str(path))
    counter = get_token_counter(str(path))
    assert counter.count("it.\n\n[x") != counter.count("it.\n\n") + counter.count("[x")
    return str(path)


@pytest.mark.parametrize("budget", [400, 900, 2500])
def test_windows_in_a_tokenizer_whose_counts_do_not_add_are_counted_whole(
    store: wp.Store, gpt2_style_tokenizer: str, budget: int
) -> None:
    counter = get_token_counter(gpt2_style_tokenizer)
    col = store.collection("c0")
    window = col.pack("What is the value of key3_1?", budget=budget, tokenizer=gpt2_style_tokenizer)
    assert window.tokens == counter.count(window.text) <= budget
    session = col.session(budget=budget, tokenizer=gpt2_style_tokenizer)
    previous = None
    for question in _questions(random.Random(budget), 6):
        window = session.pack(question)
        assert window.tokens == counter.count(window.text) <= budget
        for tier in window.tiers:
            # As the tokenizer reads them inside a prompt that goes on with a block.
            inside = counter.count(window.text[: tier.end] + "#") - counter.count("#")
            assert tier.tokens == inside
        if previous is not None and session.extends:
            shared = max((tier.tokens for tier in previous.tiers), default=0)
            assert window.cached_prefix_tokens(previous) == shared
        previous = window


def test_a_follow_up_share_smaller_than_a_chunk_still_takes_the_best_passage(
    store: wp.Store,
) -> None:
    session = store.collection("c0").session(budget=3000, follow_up_tokens=5)
    session.pack("What is the value of key3_1?")
    window = session.pack("What is the value of key31_0?")
    assert session.extends and "31000" in window.text and window.tokens <= 3000


def test_a_signed_state_whose_follow_ups_pass_the_budget_is_refused_unrendered(
    store: wp.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a session never makes (tiers past its budget) is refused before it is rendered:
    rebuilding a state costs what a window of the budget costs, not what the state lists."""
    import base64
    import json

    from windowpack.pack import session as session_module

    session = store.collection("c0").session(budget=2000)
    session.pack("What is the value of key1_1?")
    assert session.token is not None
    payload = json.loads(base64.urlsafe_b64decode(session.token.split(".")[1] + "=="))
    chunks = store.collection("c0").stats().chunks
    payload["added"] = [[list(range(chunks))]]  # every chunk: far more than 2,000 tokens
    forged = _token(store, **{key: payload[key] for key in ("versions", "plan", "added")})
    rendered: list[object] = []
    monkeypatch.setattr(session_module, "_appended", lambda *a, **k: rendered.append(a))
    resumed = store.collection("c0").session(budget=2000, token=forged)  # a state never kept
    with pytest.raises(wp.InvalidArgumentError, match="pass the budget of 2,000 tokens"):
        resumed.pack("What is the value of key2_1?")
    assert rendered == []
