"""Which questions ask for a person: their answer type, read off the form."""

from __future__ import annotations

import pytest

from windowpack.search import asks_for_person


@pytest.mark.parametrize(
    "question",
    [
        "Who signed the lease on the warehouse?",
        "By whom was the bridge inspected last spring?",
        "Whose bicycle is chained to the railing?",
        "Which employee approved the refund?",
        "What pianist recorded the nocturnes in 1962?",
        "Which of the neighbours owns a red van?",
        "Which two people share the corner office?",
        "Which librarian catalogued the maps?",
    ],
)
def test_a_question_after_someone_asks_for_a_person(question: str) -> None:
    assert asks_for_person(question)


@pytest.mark.parametrize(
    "question",
    [
        "Which city hosts the spring fair?",
        "What is the default port of the service?",
        "How many offices does the firm have?",
        "What is the name of the config file?",
        "Where does the night bus stop?",
        "Which list holds the failed jobs?",
        "When was the dam finished?",
    ],
)
def test_other_questions_do_not(question: str) -> None:
    assert not asks_for_person(question)
