"""A language's rules for lexical matching, and which language a text is in."""

from __future__ import annotations

import pytest

from windowpack.text import PLAIN, detect_language, language_rules

ENGLISH = (
    "The server keeps a pool of connections open so that each request does not have to wait "
    "for a new one. When the pool is full, the next request waits until one is returned."
)
GERMAN = (
    "Der Server hält einen Vorrat an Verbindungen offen, damit nicht jede Anfrage auf eine neue "
    "warten muss. Wenn der Vorrat erschöpft ist, wartet die nächste Anfrage, bis eine frei wird."
)
FRENCH = (
    "Le serveur garde un ensemble de connexions ouvertes pour que chaque requête n'ait pas à "
    "attendre une nouvelle connexion. Quand il est plein, la requête suivante attend."
)
CHINESE = "服务器保持一个连接池，这样每个请求都不必等待新的连接。连接池满时，下一个请求会等待。"  # noqa: RUF001
JAPANESE = "サーバーは接続のプールを開いたままにします。プールが満杯になると、次の要求は待ちます。"


@pytest.mark.parametrize(
    ("text", "code"),
    [(ENGLISH, "en"), (GERMAN, "de"), (FRENCH, "fr"), (CHINESE, "zh"), (JAPANESE, "ja")],
)
def test_the_language_of_prose_is_detected(text: str, code: str) -> None:
    assert detect_language([text]) == code


def test_text_without_prose_gets_the_plain_rules() -> None:
    assert detect_language(["x = 1; y = 2; zq(x, y) -> 3"]) == PLAIN
    assert detect_language([]) == PLAIN
    assert language_rules("xx").code == PLAIN  # no rules of its own: plain, not English


def test_english_rules_drop_stop_words_and_stem() -> None:
    terms = language_rules("en").terms("The connections were waiting")
    assert "the" not in terms
    assert "connect" in terms and "wait" in terms


def test_german_rules_stem_german_and_keep_nouns_as_words() -> None:
    rules = language_rules("de")
    assert rules.terms("Verbindungen") == rules.terms("Verbindung")
    assert "der" not in rules.terms("der Server")


def test_plain_rules_neither_stem_nor_drop_words() -> None:
    assert language_rules(PLAIN).terms("The connections") == ["the", "connections"]


def test_a_cjk_clause_is_cut_into_character_bigrams() -> None:
    terms = language_rules("zh").terms("连接池满时")
    assert terms == ["连接", "接池", "池满", "满时"]
    # a question sharing two characters with the text shares a term with it
    assert set(language_rules("zh").terms("连接")) & set(terms)


def test_literals_are_terms_of_their_own_besides_their_words() -> None:
    rules = language_rules("en")
    terms = rules.terms("Use --dry-run with os.path.join and max_connections.")
    assert {"--dry-run", "os.path.join", "max_connections"} <= set(terms)
    assert "dri" in terms and "run" in terms  # the option's words still match
    assert rules.literals("Does git push accept --force-with-lease or -n?") == [
        "--force-with-lease",
        "-n",
    ]


def test_an_abbreviation_of_single_letters_is_no_literal() -> None:
    rules = language_rules("en")
    text = "Keep min/max values, e.g. per range (i.e. a digest); n/a w/o os.path or a.b_c 3.9"
    assert rules.literals(text) == ["min/max", "os.path", "a.b_c", "3.9"]
    assert rules.literals("as in the U.S. and über.ä") == ["über.ä"]


def test_words_joined_by_a_hyphen_are_a_term_but_no_literal() -> None:
    rules = language_rules("en")
    assert rules.literals("a well-known built-in, utf-8") == ["utf-8"]
    assert {"well-known", "built-in"} <= set(rules.terms("a well-known built-in"))
    assert "-known" not in rules.terms("well-known")
