"""Tests for the bridge terms a second look-up follows from one piece of evidence."""

from __future__ import annotations

import pytest

from windowpack.errors import InvalidArgumentError
from windowpack.search import bridge_terms, content_words


def _folded(terms: list[str]) -> list[str]:
    return [term.casefold() for term in terms]


def test_a_possessive_chain_gives_the_possessor_then_its_noun_then_the_rest() -> None:
    terms = bridge_terms(
        "The blue kayak belongs to the ferryman's niece.", "Who owns the blue kayak?"
    )
    assert terms == ["ferryman", "niece", "belongs"]


def test_a_multi_word_name_comes_first_and_question_words_are_dropped() -> None:
    terms = bridge_terms(
        "The ferry timetable was drawn up by Ingrid Solberg of the port authority.",
        "Who drew up the ferry timetable?",
    )
    assert terms[0] == "Ingrid Solberg"
    assert {"port", "authority"} <= set(terms)
    assert not {"ferry", "timetable", "The"} & set(terms)


def test_names_join_across_particles_and_ampersands() -> None:
    terms = bridge_terms(
        "The loan was arranged through Banco de la Plata and Mercer & Daughters.",
        "Who arranged the loan?",
    )
    assert terms[:2] == ["Banco de la Plata", "Mercer & Daughters"]


def test_quoted_terms_come_before_names_and_keep_their_spelling() -> None:
    terms = bridge_terms(
        'Sven Ahl says the runbook calls the step "cold restart" behind the `--keep-cache` flag.',
        "What is the step called?",
    )
    assert terms[:3] == ["cold restart", "--keep-cache", "Sven Ahl"]
    single = bridge_terms("The bin is labelled 'spare parts' in red.", "Which bin?")
    assert single[0] == "spare parts"


def test_a_word_in_the_question_in_another_form_is_dropped() -> None:
    terms = bridge_terms(
        "The archive is guarded by the night porter of Hollis Hall.", "Who guards the archive?"
    )
    assert terms[0] == "Hollis Hall"
    assert {"porter", "night"} <= set(terms)
    assert not {"guarded", "archive"} & set(terms)


@pytest.mark.parametrize(
    ("evidence_word", "question_word"),
    [("guarded", "guards"), ("stored", "store"), ("hanging", "hangs"), ("cities", "city")],
)
def test_the_stemmer_matches_inflections(evidence_word: str, question_word: str) -> None:
    evidence = f"The crate was {evidence_word} near the quarry."
    assert evidence_word not in bridge_terms(evidence, f"Which {question_word}?")
    assert evidence_word in bridge_terms(evidence, "Which crate?")
    assert content_words(evidence_word) == content_words(question_word)


def test_a_term_only_partly_in_the_question_is_kept() -> None:
    terms = bridge_terms("The deed was witnessed by Tomas Varela.", "Did Tomas sign the deed?")
    assert "Tomas Varela" in terms


def test_limit_caps_the_terms_and_keeps_their_order() -> None:
    evidence = "The cheque from Brightline Ltd was cashed by the junior clerk near the vault."
    everything = bridge_terms(evidence, "Who cashed it?", limit=20)
    assert len(everything) > 3
    assert bridge_terms(evidence, "Who cashed it?", limit=3) == everything[:3]
    assert bridge_terms(evidence, "Who cashed it?", limit=0) == []
    with pytest.raises(InvalidArgumentError):
        bridge_terms(evidence, "Who cashed it?", limit=-1)


def test_rarity_orders_the_words_within_their_priority() -> None:
    evidence = "The cheque was signed hastily by the clerk near the vault."
    question = "Who signed the cheque?"
    assert bridge_terms(evidence, question) == ["clerk", "vault", "hastily"]
    scores = {"vault": 9.0, "clerk": 1.0, "hastily": 5.0}
    asked: list[str] = []

    def rarity(word: str) -> float:
        asked.append(word)
        return scores.get(word, 0.0)

    # Priority still comes first: the noun-phrase words outrank "hastily", whatever its rarity.
    assert bridge_terms(evidence, question, rarity=rarity) == ["vault", "clerk", "hastily"]
    assert set(scores) <= set(asked)


def test_without_rarity_longer_words_rank_first() -> None:
    terms = bridge_terms("It went quietly somewhere unexpected.", "Where did it go?")
    assert terms == ["unexpected", "somewhere", "quietly", "went"]


def test_numbers_dates_and_amounts_are_not_terms() -> None:
    terms = bridge_terms(
        "The refund of 4,250 euros was paid on 12 March 2023 by Orla Brennan in 2024.",
        "How much was the refund?",
    )
    assert terms[0] == "Orla Brennan"
    assert {"euros", "paid"} <= set(terms)
    assert not any(char.isdigit() for term in terms for char in term)
    assert "March" not in terms
    assert bridge_terms('The code was "1990".', "What was the code?") == []


def test_codes_are_kept_with_their_word() -> None:
    terms = bridge_terms("Cylinder 7C sits in bay 12 of Depot 3.", "Where is cylinder 7C?")
    assert terms[0] == "Depot 3"
    assert "bay" in terms
    assert not _folded(terms).count("cylinder 7c")
    assert bridge_terms("The spare fuse sits in drawer 4b.", "Where is the spare fuse?")[0] == (
        "drawer 4b"
    )
    assert "Station 12" in bridge_terms(
        "The report went to Station 12.", "Where did the report go?"
    )


@pytest.mark.parametrize("evidence", ["", "   ", "\n", "42.", "The and of it."])
def test_evidence_without_words_gives_no_terms(evidence: str) -> None:
    assert bridge_terms(evidence, "Who is it?") == []


def test_evidence_the_question_already_covers_gives_no_terms() -> None:
    assert bridge_terms("The pump failed.", "Why did the pump fail?") == []


def test_names_keep_letters_beyond_ascii() -> None:
    terms = bridge_terms(
        "The recipe came from Søren Ødegård, who runs Café Élise in Tromsø.",
        "Where did the recipe come from?",
    )
    assert terms[:3] == ["Søren Ødegård", "Café Élise", "Tromsø"]


def test_terms_are_deduplicated_case_insensitively_in_the_first_spelling() -> None:
    terms = bridge_terms(
        "Meet at the Lighthouse; the lighthouse keeper holds the LIGHTHOUSE key.",
        "Where do we meet?",
    )
    assert _folded(terms).count("lighthouse") == 1
    assert terms[0] == "Lighthouse"


def test_a_sentence_opening_function_word_is_no_name_but_a_name_opening_one_is() -> None:
    assert bridge_terms("The keeper locked it.", "Who locked it?") == ["keeper"]
    assert bridge_terms("Marguerite keeps the ledger.", "Who keeps the ledger?") == ["Marguerite"]
    hague = bridge_terms("In The Hague the court sat late.", "Where did the court sit?")
    assert hague[0] == "Hague"


def test_content_words_are_lowercased_stemmed_and_without_stop_words() -> None:
    assert content_words("The Guards guarded the gate\u2019s keys, and it was over.") == [
        "guard",
        "guard",
        "gat",
        "key",
    ]
    assert content_words("the and of it") == []
    assert content_words("Ødegård's cafés") == ["ødegård", "café"]
