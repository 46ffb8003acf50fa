"""Budget monotonicity (design §4.6): a chunk verbatim in the window at budget B is verbatim at
every larger budget, for the same question and index version. Hypothesis draws the corpora
(prose, sections, a chat), the question and the budgets; a real manual checks it too."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import windowpack as wp

WORDS = [
    "harbour",
    "lantern",
    "granite",
    "orchard",
    "ledger",
    "copper",
    "meadow",
    "signal",
    "quarry",
    "violin",
    "compass",
    "ferry",
    "beacon",
    "cellar",
    "thistle",
    "furnace",
    "glacier",
    "saddle",
    "timber",
    "whistle",
    "anchor",
    "basalt",
    "canyon",
    "drizzle",
    "ember",
    "falcon",
    "gravel",
    "hollow",
    "ivory",
    "juniper",
]


def _sentence(rng: np.random.Generator) -> str:
    words = rng.choice(WORDS, int(rng.integers(5, 12)))
    return " ".join(words).capitalize() + "."


def _document(rng: np.random.Generator, number: int, shape: str) -> wp.Document:
    if shape == "sections":
        parts = [
            f"## Part {part}\n\n"
            + " ".join(_sentence(rng) for _ in range(int(rng.integers(2, 30))))
            for part in range(int(rng.integers(1, 5)))
        ]
        return wp.Document(text="\n\n".join(parts), id=f"doc-{number}.md", title=f"Doc {number}")
    if shape == "chat":
        turns = [
            f"{'user' if turn % 2 == 0 else 'assistant'}: "
            + " ".join(_sentence(rng) for _ in range(int(rng.integers(1, 8))))
            for turn in range(int(rng.integers(2, 10)))
        ]
        return wp.Document(text="\n\n".join(turns), id=f"chat-{number}", title=f"Chat {number}")
    text = " ".join(_sentence(rng) for _ in range(int(rng.integers(3, 80))))
    return wp.Document(text=text, id=f"doc-{number}", title=f"Doc {number}")


def _verbatim(window: wp.Window) -> set[tuple[str | None, int]]:
    """The (document, chunk ordinal) pairs the window holds word for word."""
    held = set()
    for item in window.items:
        if item.kind == "chunk" and item.ordinal is not None:
            last = item.last_ordinal if item.last_ordinal is not None else item.ordinal
            held.update((item.document_id, ordinal) for ordinal in range(item.ordinal, last + 1))
    return held


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 10_000),
    shape=st.sampled_from(["prose", "sections", "chat"]),
    documents=st.integers(3, 14),
    budgets=st.lists(st.integers(150, 6000), min_size=2, max_size=4, unique=True),
    question_words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
)
# Found by this test: a refill gave 1013 tokens a larger room than 1106 tokens got.
@example(seed=996, shape="sections", documents=3, budgets=[1013, 1106], question_words=["lantern"])
def test_what_a_budget_holds_verbatim_a_larger_one_holds(
    tmp_path_factory: pytest.TempPathFactory,
    seed: int,
    shape: str,
    documents: int,
    budgets: list[int],
    question_words: list[str],
) -> None:
    rng = np.random.default_rng(seed)
    config = wp.StoreConfig(embedder="hash", chunk_tokens=48)
    with wp.open(tmp_path_factory.mktemp("store"), config=config) as store:
        collection = store.collection("c")
        collection.add([_document(rng, number, shape) for number in range(documents)])
        question = " ".join(question_words) + "?"
        held = [_verbatim(collection.pack(question, budget=b)) for b in sorted(budgets)]
    for smaller, larger in itertools.pairwise(held):
        assert smaller <= larger, f"lost at a larger budget: {sorted(smaller - larger)[:5]}"


MANUAL = Path("/usr/share/doc/postgresql-doc-15/html")
PAGES = [
    "runtime-config-resource.html",
    "runtime-config-wal.html",
    "sql-vacuum.html",
    "sql-createindex.html",
    "sql-copy.html",
    "app-pgdump.html",
]


def test_a_real_manual_loses_nothing_as_the_budget_grows(tmp_path: Path) -> None:
    if not MANUAL.is_dir():
        pytest.skip(f"{MANUAL} is not installed (apt-get install postgresql-doc-15)")
    with wp.open(tmp_path / "store", config=wp.StoreConfig(embedder="hash")) as store:
        collection = store.collection("pg")
        collection.add_files([MANUAL / page for page in PAGES])
        for question in (
            "How much memory may a sort use before it spills to disk?",
            "Which options does COPY take for CSV files?",
            "What does --clean do?",
            "When is a checkpoint forced?",
        ):
            held = [
                _verbatim(collection.pack(question, budget=b))
                for b in (500, 1000, 2000, 4000, 8000, 16000)
            ]
            for smaller, larger in itertools.pairwise(held):
                assert smaller <= larger, (question, sorted(smaller - larger)[:5])
