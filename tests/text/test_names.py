"""Whether a text names someone: two capitalised words, not a sentence-opening function word."""

from __future__ import annotations

import pytest

from windowpack.text import names_a_person


@pytest.mark.parametrize(
    "text",
    [
        "Marguerite Okonjo repairs violins in her garage.",
        "The parcel was signed for by Henrik van der Berg.",
        "When Ada Lovelace wrote the notes, nobody ran them.",
        "Our auditor, Priya Raman, found the gap.",
        "O\u2019Malley Brennan took the night train.",
        "Zoë Lindgren and a friend moved in.",
    ],
)
def test_a_name_of_two_capitalised_words_is_found(text: str) -> None:
    assert names_a_person(text)


@pytest.mark.parametrize(
    "text",
    [
        "The Hague is a city by the sea.",
        "In Lisbon the trams are yellow.",
        "Startups fail when founders give up.",
        "It ran on NASA hardware for years.",
        "She left. Paris was cold.",
        "On Monday March rains began.",
        "",
    ],
)
def test_no_name_is_found_where_there_is_none(text: str) -> None:
    assert not names_a_person(text)
