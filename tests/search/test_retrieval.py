"""Retrieval, the one ranking search and pack share: fusion by rank, the question's literals
first, feedback terms; on real text (the PostgreSQL manual's program pages) where it
matters, over the hash embedder (the lexical stages are what is tested here)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import windowpack as wp
from windowpack.search import Question, fuse
from windowpack.search.retrieval import feedback_terms
from windowpack.text import language_rules

MANUAL = Path("/usr/share/doc/postgresql-doc-15/html")
PROGRAMS = [
    "app-clusterdb.html",
    "app-createdb.html",
    "app-dropdb.html",
    "app-dropuser.html",
    "app-pgdump.html",
    "app-pgrestore.html",
    "app-psql.html",
    "app-initdb.html",
]


def _ids(*values: int) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


def _ranked(*values: int) -> tuple[np.ndarray, np.ndarray]:
    return _ids(*values), np.linspace(1.0, 0.0, len(values))


def _scores_by_id(fused: tuple[np.ndarray, np.ndarray]) -> dict[int, float]:
    return dict(zip(fused[0].tolist(), fused[1].tolist(), strict=True))


def test_fusion_adds_weighted_z_scores() -> None:
    first = (np.asarray([1, 2, 3]), np.asarray([3.0, 2.0, 1.0]))
    second = (np.asarray([3, 1]), np.asarray([4.0, 2.0]))
    ids, scores = fuse([first, second], [1.0, 2.0])
    # first: z = 1.22, 0, -1.22; second: z = 1, -1 (2 missing: the list's lowest, -1)
    expected = {1: 1.2247 + 2 * -1.0, 2: 0.0 + 2 * -1.0, 3: -1.2247 + 2 * 1.0}
    assert ids.tolist() == sorted(expected, key=lambda i: -expected[i])
    assert scores.tolist() == pytest.approx([expected[i] for i in ids.tolist()], abs=1e-3)


def test_one_sided_fusion_lets_one_list_raise_a_unit_alone() -> None:
    """Unit 9 is far above the first list's mean and missing from the second; units 1-3 sit
    near both lists' means. Two-sided, the second list's floor holds 9 back; one-sided, no
    list counts against a unit, and 9 leads."""
    first = (_ids(9, 1, 2, 3, 4, 5), np.asarray([10.0, 2.0, 1.9, 1.8, 1.7, 0.0]))
    second = (_ids(1, 2, 3, 4, 5), np.asarray([2.0, 1.9, 1.8, 1.7, 0.0]))
    two_sided, _ = fuse([first, second], [1.0, 1.0])
    ids, scores = fuse([first, second], [1.0, 1.0], one_sided=True)
    assert two_sided[0] != 9
    assert ids[0] == 9
    # each list adds only its z-scores above 0: unit 5, below both means, gets nothing
    assert scores.min() == 0.0 and ids[-1] == 5


def test_a_ranking_of_noise_cannot_outvote_the_words_of_the_question(tmp_path: Path) -> None:
    """A two-unit document: the feedback list, read from so few units, ranks the intro
    first by a hair; one-sided, it may lift the intro but not pull the ferry section down,
    so the section every question word names stays first."""
    guide = "# Guide\n\nIntro.\n\n## Ferries\n\nThe harbour ferry leaves at seven sharp.\n"
    with wp.open(tmp_path / "store", config=wp.StoreConfig(embedder="hash")) as store:
        docs = store.collection("docs")
        docs.add([wp.Document(id="guide.md", text=guide, kind="markdown")])
        first = docs.search("harbour ferry seven", k=1)[0]
    assert first.heading_path == ("Guide", "Ferries")


def test_a_list_of_weight_zero_is_left_out() -> None:
    ids, _ = fuse([_ranked(1, 2), _ranked(9)], [1.0, 0.0])
    assert ids.tolist() == [1, 2]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.floats(0, 100, allow_nan=False), min_size=30, max_size=30),
        min_size=1,
        max_size=3,
    ),
    st.integers(min_value=8, max_value=29),
    st.booleans(),
)
def test_the_head_keeps_its_order_however_deep_the_lists_are_read(
    scores: list[list[float]], depth: int, one_sided: bool
) -> None:
    """Lists standardised by their leading scores give a unit every shallow read holds the
    same fused score in a deeper read: a search for a few hits and a large pack rank their
    common head alike."""
    head = 8
    rng = np.random.default_rng(len(scores) * 100 + depth)
    lists = []
    for values in scores:
        ordered = np.sort(np.asarray(values))[::-1]
        lists.append((rng.permutation(30).astype(np.int64), ordered))
    weights = [1.0 + i for i in range(len(lists))]
    deep = _scores_by_id(fuse(lists, weights, head=head, one_sided=one_sided))
    shallow_lists = [(ids[:depth], values[:depth]) for ids, values in lists]
    shallow = _scores_by_id(fuse(shallow_lists, weights, head=head, one_sided=one_sided))
    common = set.intersection(*(set(ids[:depth].tolist()) for ids, _ in lists))
    for unit in common:
        assert shallow[unit] == pytest.approx(deep[unit])


def test_feedback_terms_come_from_the_evidence_weighted_by_idf() -> None:
    question = Question.of("Which setting limits connections?", language_rules("en"))
    documents = [{"max_connect": 1, "limit": 1, "server": 2}, {"max_connect": 1, "server": 1}]
    idf = {"max_connect": 3.0, "server": 0.1, "limit": 2.0}
    found = dict(
        feedback_terms(question, documents, lambda terms: np.asarray([idf[t] for t in terms]))
    )
    assert "limit" not in found  # the question's own term
    assert max(found, key=found.__getitem__) == "max_connect"  # rare and in both
    assert sum(found.values()) == pytest.approx(1.0)


def test_a_question_reads_its_literals_and_quoted_strings() -> None:
    question = Question.of('Does pg_dump take --if-exists or "clean mode"?', language_rules("en"))
    assert question.literals == ("pg_dump", "--if-exists", "clean mode")
    assert "--if-exists" in question.terms and "pg_dump" in question.terms


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> wp.Collection:
    if not MANUAL.is_dir():
        pytest.skip(f"{MANUAL} is not installed (apt-get install postgresql-doc-15)")
    store = wp.open(tmp_path_factory.mktemp("programs"), config=wp.StoreConfig(embedder="hash"))
    collection = store.collection("programs")
    collection.add_files([MANUAL / page for page in PROGRAMS])
    return collection


def test_units_naming_the_option_asked_about_rank_first(programs: wp.Collection) -> None:
    hits = programs.search("Which programs accept --if-exists?", k=12)
    holds = ["--if-exists" in hit.text for hit in hits]
    assert any(holds)
    assert holds == sorted(holds, reverse=True), "a unit without the option outranked one with"
    assert {Path(hit.document_id).name for hit, held in zip(hits, holds, strict=True) if held} >= {
        "app-dropdb.html",
        "app-pgdump.html",
        "app-pgrestore.html",
    }


def test_an_abbreviation_in_the_question_does_not_rank_its_holders_first(
    programs: wp.Collection,
) -> None:
    # Ten units of psql's, pg_dump's and pg_restore's pages say "e.g.": were it a literal,
    # they would fill the first hits and dropdb's page would be in none of them.
    question = "Which program, e.g. for a script, removes a PostgreSQL database?"
    hits = programs.search(question, k=5)
    assert "app-dropdb.html" in {Path(hit.document_id).name for hit in hits[:3]}
    assert not all("e.g." in hit.text for hit in hits)
    assert (programs.pack(question, budget=600).retrieval or {})["literals"] == []


def test_the_window_says_how_the_question_was_read(programs: wp.Collection) -> None:
    window = programs.pack("What does --if-exists do for dropdb?", budget=600)
    assert window.retrieval is not None
    assert window.retrieval["language"] == "en"
    assert window.retrieval["literals"] == ["--if-exists"]
    assert "literals" in window.retrieval["stages"]
    # the hash embedder is bound to no language: every ranking may raise a unit alone
    assert "one-sided fusion" in window.retrieval["stages"]
    assert "--if-exists" in window.text


def test_the_first_hit_of_search_is_verbatim_in_the_pack(programs: wp.Collection) -> None:
    for question in (
        "How do I choose the template database for a new database?",
        "Which option makes the dump include commands to drop objects first?",
        "locale provider",
    ):
        first = programs.search(question, k=1)[0]
        for budget in (400, 1000, 3000):
            window = programs.pack(question, budget=budget)
            assert first.text in window.text, (question, budget)
