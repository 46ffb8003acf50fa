"""Whether a text names someone: a proper name of two or more capitalised words.

Used for *answer types*: a question that asks for a person ("Who ...?", "Which character
...?") is answered by evidence that names one, so the sentence index marks its pieces that
do (`index.sentences`) and a pack favours them for such a question. The test is form only,
no model: two consecutive capitalised words ("Tomasz Wilk", "Ines de la Cruz" with a
particle between), the first of which is not a function word that merely opens a sentence
("The Hague" is not a person, nor is "In Lisbon"). It also fires on places and firms
("New York", "Kestrel Freight"): those are names too, and a person question's evidence
is still far likelier among the sentences with one.
"""

from __future__ import annotations

import re


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_TOKEN = re.compile(r"[^\W\d_][^\W_]*(?:['\u2019-][^\W_]+)*|\S")
_PARTICLES = _word_set("de da del della di du van von der den la le bin ibn al el ter ten")
# Words that open a sentence or a clause in capitals without being part of a name.
_NOT_NAMES = _word_set(
    """a an the this that these those it its i you he she we they my your his her our their
    in on at by for from to of with without into onto over under after before during since
    and or but nor so yet if when while where what which who whom whose why how then there
    here now thus also even still just only not no yes most many some any all every each
    one two first last next once as because although though unless until whether
    dear mr mrs ms dr sir saint st monday tuesday wednesday thursday friday saturday sunday
    january february march april may june july august september october november december
    """
)


def names_a_person(text: str) -> bool:
    """Whether `text` holds a name of two or more capitalised words (see the module)."""
    previous = False  # the word before (particles skipped) was a capitalised name word
    for token in _TOKEN.findall(text):
        if token.lower() in _PARTICLES and previous:
            continue
        name_word = _is_name_word(token)
        if name_word and previous:
            return True
        previous = name_word
    return False


def _is_name_word(token: str) -> bool:
    """Capitalised, not all capitals, and not a function word opening a sentence."""
    return (
        token[0].isupper()
        and any(c.islower() for c in token[1:])
        and token.lower() not in _NOT_NAMES
    )
