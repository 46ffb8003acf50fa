"""Search with the real bundled model: the demo's planted facts and needles in the essays."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.demo import PLANTED, demo_documents

pytestmark = pytest.mark.model

NEEDLES = [
    (
        "The secret ingredient in Grandma Odile's lighthouse chowder is smoked paprika "
        "from Szeged.",
        "What is the secret ingredient in Grandma Odile's lighthouse chowder?",
    ),
    (
        "The access code for the Kestrel Valley observatory is 7319-AZ.",
        "What is the access code of the Kestrel Valley observatory?",
    ),
    (
        "Professor Amara Lindqvist keeps her 212 antique barometers in a boathouse in Tromsø.",
        "Where does Amara Lindqvist keep her antique barometers?",
    ),
    (
        "The best thing to do in San Francisco is eat a sandwich and sit in Dolores Park on a "
        "sunny day.",
        "What is the best thing to do in San Francisco?",
    ),
    (
        "The night ferry to Ilha Verde leaves from pier 14 at 23:40 every Thursday.",
        "When and where does the night ferry to Ilha Verde leave?",
    ),
]
DEPTHS = [0.0, 0.25, 0.5, 0.75, 1.0]
_DOCUMENT_CHARS = 20_000


def test_demo_questions_find_their_planted_fact(tmp_path: Path) -> None:
    with wp.open(tmp_path / "demo") as store:
        col = store.collection("demo")
        col.add(demo_documents())
        for fact in PLANTED:
            top = col.search(fact.question, k=3)[0]
            assert fact.sentence in top.text, (fact.question, top.text)
            assert top.document_id == fact.document_id


def _essay_documents(text: str) -> list[wp.Document]:
    """The essays cut at paragraph breaks into ~20K-character documents."""
    documents, start = [], 0
    while start < len(text):
        end = text.find("\n\n", start + _DOCUMENT_CHARS)
        end = len(text) if end == -1 else end
        documents.append(wp.Document(text=text[start:end], id=f"essays-{len(documents):03d}"))
        start = end
    return [doc for doc in documents if doc.text.strip()]


def _plant(document: wp.Document, sentence: str) -> wp.Document:
    """Insert the sentence at the sentence boundary nearest the document's middle."""
    middle = len(document.text) // 2
    match = re.compile(r"[.!?]\s").search(document.text, middle)
    cut = match.end() if match else len(document.text)
    text = f"{document.text[:cut]}{sentence} {document.text[cut:]}"
    return wp.Document(text=text, id=document.id)


@pytest.fixture(scope="module")
def essays_with_needles(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[tuple[wp.Collection, dict[str, str]]]:
    """All ~680K tokens of essays with five needles planted from the first to the last doc."""
    essays_text = request.getfixturevalue("essays_text")
    documents = _essay_documents(essays_text)
    where: dict[str, str] = {}
    for depth, (sentence, _) in zip(DEPTHS, NEEDLES, strict=True):
        index = round(depth * (len(documents) - 1))
        documents[index] = _plant(documents[index], sentence)
        where[sentence] = documents[index].id or ""
    folder = tmp_path_factory.mktemp("essays")
    with wp.open(folder, config=StoreConfig()) as store:
        col = store.collection("essays")
        col.add(documents)
        yield col, where


@pytest.mark.shared
@pytest.mark.parametrize(("sentence", "question"), NEEDLES)
def test_a_planted_needle_is_the_top_hit(
    essays_with_needles: tuple[wp.Collection, dict[str, str]], sentence: str, question: str
) -> None:
    col, where = essays_with_needles
    top = col.search(question, k=10)[0]
    assert sentence in top.text, top.text[:300]
    assert top.document_id == where[sentence]


@pytest.mark.shared
@pytest.mark.parametrize(("sentence", "question"), NEEDLES)
def test_a_planted_needle_is_in_a_2k_window(
    essays_with_needles: tuple[wp.Collection, dict[str, str]], sentence: str, question: str
) -> None:
    col, _ = essays_with_needles
    window = col.pack(question, budget=2_000)
    assert window.tokens <= 2_000
    assert sentence in window.text


_FORMATS = ["poem", "riddle", "haiku", "limerick"]
_TOPICS = ["tapirs", "otters", "lighthouses", "glaciers", "kites"]


def _mrcr_conversation(seed: int = 3) -> tuple[list[dict[str, str]], list[int]]:
    """`write a {format} about {topic}` turns; 8 identical 'poem about tapirs' requests."""
    import random

    rng = random.Random(seed)
    asks = [(f, t) for f in _FORMATS for t in _TOPICS if (f, t) != ("poem", "tapirs")]
    plan = [rng.choice(asks) for _ in range(120)]
    for slot in sorted(rng.sample(range(120), 8)):
        plan[slot] = ("poem", "tapirs")
    messages, instances = [], []
    for turn, (form, topic) in enumerate(plan):
        if (form, topic) == ("poem", "tapirs"):
            instances.append(turn)
        lines = [
            f"Line {i} of this {form}, number {turn}, on {topic} and the sea." for i in range(8)
        ]
        messages.append({"role": "user", "content": f"Write a {form} about {topic}."})
        messages.append({"role": "assistant", "content": f"[{turn}] " + " ".join(lines)})
    return messages, instances


def test_mrcr_style_window_keeps_every_instance_in_order(tmp_path: Path) -> None:
    messages, instances = _mrcr_conversation()
    with wp.open(tmp_path) as store:
        col = store.collection("chat")
        col.add_conversation(messages, id="chat")
        window = col.pack("Return the 2nd poem about tapirs.", budget=8_000)
    assert window.tokens <= 8_000
    positions = [window.text.find(f"[{turn}] Line 0 of this poem") for turn in instances]
    assert all(position >= 0 for position in positions), positions
    assert positions == sorted(positions)  # in order
    for turn, position in zip(instances, positions, strict=True):
        # Each instance is its own passage, headed by its turn number.
        header = window.text.rfind("[turn", 0, position)
        assert window.text.startswith(f"[turn {turn + 1} of {len(messages) // 2}", header), turn
