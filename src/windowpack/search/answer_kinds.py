"""What kind of answer a question asks for, read off its form: here, whether it asks for a
person (its *answer type*, as question-answering systems have long used it).

A question asks for a person when its wh-word is "who", "whom" or "whose" (anywhere: "By
whom was it signed?"), or when "which" or "what" is followed, within three words, by a noun
that denotes people: a closed list of common ones (character, person, man, woman, friend,
member, employee, author, ...) or a noun of an agent suffix that names a person (-ist,
-ian: artist, pianist, librarian). "Which city", "What number", "What is the name of the
file" do not ask for a person. The evidence that answers such a question names someone
(`text.names`), and a pack favours the sentences that do (`docs/evidence.md`).
"""

from __future__ import annotations

import re


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_WORDS = re.compile(r"[a-z]+")
_PERSON_WH = frozenset({"who", "whom", "whose"})
_PERSON_NOUNS = _word_set(
    """character characters person people persons man men woman women boy girl child children
    kid kids friend friends member members employee employees worker workers colleague
    colleagues author authors writer writers poet player players customer customers guest
    guests resident residents neighbour neighbours neighbor neighbors owner owners teacher
    teachers student students doctor doctors nurse nurses actor actors actress singer singers
    painter painters chef chefs officer officers leader leaders founder founders candidate
    candidates visitor visitors traveller travellers traveler travelers tourist tourists
    individual individuals relative relatives sibling siblings brother sister mother father
    parent parents son daughter husband wife partner boss manager managers engineer engineers
    scientist scientists lawyer lawyers judge athlete athletes runner runners climber
    """
)
_AGENT_SUFFIXES = ("ist", "ists", "ian", "ians")
_NOT_AGENTS = frozenset({"list", "lists", "exist", "exists", "twist", "wrist", "mist"})


def asks_for_person(question: str) -> bool:
    """Whether `question` asks for a person (see the module)."""
    words = _WORDS.findall(question.lower())
    if any(word in _PERSON_WH for word in words):
        return True
    for position, word in enumerate(words):
        if word in ("which", "what"):
            for noun in words[position + 1 : position + 4]:
                if noun in _PERSON_NOUNS or _is_agent(noun):
                    return True
    return False


def _is_agent(word: str) -> bool:
    return word.endswith(_AGENT_SUFFIXES) and word not in _NOT_AGENTS and len(word) > 5
