"""Bridge terms: what a second look-up should search for to follow a chain from one piece of
evidence ("The spare key hangs in the harbourmaster's office." asked "Where is the spare
key?" leads on to "harbourmaster" and "office").

Terms come from the evidence in this priority, and within a priority in the evidence's
order unless said otherwise:

1. quoted terms ("...", '...', `...`, curly quotes);
2. capitalised multi-word names: consecutive capitalised words, joined across "de", "van",
   "of", "&" and the like ("Mercer & Daughters", "Bank of Tonga"), with a number or code that
   follows a capitalised word ("Station 9", "Form 4B"); leading function words are dropped
   ("The Hague" gives "Hague", "In Lisbon" gives "Lisbon");
3. other capitalised words not at a sentence's start, and codes, alone ("R2D2") or with the
   word before them ("locker 7b");
4. a capitalised word alone at a sentence's start that is not a function word;
5. possessive and noun-phrase words: the possessor of "X's", the words of the noun phrase
   after a possessive or a determiner ("the lab's safety officer" gives "lab", "safety",
   "officer"); ranked by rarity;
6. the remaining content words (letters, three or more, not stop words), ranked by rarity.

Rarity is the caller's `rarity(word)` (higher is rarer, an IDF for instance; it gets the
word lowercased, as the evidence spells it) or the word's length when none is given.

A term is dropped when all its words appear in the question, compared case-folded and
crudely stemmed (possessive 's, plural -s/-es/-ies, -ing, -ed and a final -e stripped, so
"guarded" matches "guards" and "stored" matches "store"); when it is only a number (a date
or an amount is an answer, not a bridge); or when earlier terms hold all its words. A month
or weekday beside a number is a date, not a name.

A noun phrase's verb is told apart by form only: a word in -s or -ed after the phrase's
first word, followed by a preposition, determiner or pronoun, ends the phrase ("the spare
key hangs in ..."); a verb followed by its object can still slip into a phrase.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from windowpack.errors import InvalidArgumentError
from windowpack.text import split_sentences


def _word_set(words: str) -> frozenset[str]:
    """The white-space separated words of a table written as one string."""
    return frozenset(words.split())


STOP_WORDS = _word_set(
    """
    a about above after again against all almost also although always am among an and
    another any anyone anything are around as at be because been before being below between
    both but by can could did do does doing done down during each either else enough even
    ever every few for from further get gets got had has have having he her here hers herself
    him himself his how however i if in into is it its itself just least less let like many
    may me might mine more most much must my myself near neither never next no nobody none
    nor not nothing now of off often on once one only onto or other others otherwise our ours
    ourselves out over own per perhaps quite rather really said same say says several shall
    she should since so some somebody someone something sometimes soon still such than that
    the their theirs them themselves then there these they this those though through thus to
    today tomorrow tonight too toward towards under until up upon us very via was we were
    what whatever when where whereas whether which while who whoever whom whose why will
    with within without would yesterday yet you your yours yourself yourselves meanwhile
    later earlier first last finally across along alongside amid around behind beside besides
    beyond despite except inside outside throughout underneath unlike
    """
)
"""Function words and the commonest adverbs: never a term, nor a word a term is compared by."""

# Lowercase words that join the capitalised words of one name ("Bank of Tonga").
_JOINERS = _word_set(
    "de del della der den di da du des dos das van von la le al el bin ibn of the y &"
)
_DETERMINERS = _word_set(
    "the a an this that these those its his her their our my your each every some any another no"
)
_PREPOSITIONS = _word_set(
    "in at on from to for with by of into onto about under over through during between among "
    "after before since across near past behind beyond within without against toward towards "
    "via per like upon inside outside along around"
)
_PRONOUNS = _word_set("it them him her me us you they we he she this that")
_CALENDAR = _word_set(
    "january february march april may june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday"
)
_MAX_PHRASE_WORDS = 3

_WORD = re.compile(r"[^\W_]+(?:[-'\u2019.][^\W_]+)*(?:['\u2019](?!\w))?|&")
_QUOTED = re.compile(
    r"\"([^\"\n]{1,80})\"|\u201c([^\u201d\n]{1,80})\u201d|`([^`\n]{1,80})`"
    r"|\u2018([^\u2019\n]{1,80})\u2019|(?<!\w)'([^'\n]{1,80})'(?!\w)"
)
# A number, possibly with a unit or ordinal: an answer, never a term of its own.
_NUMBER = re.compile(
    r"\d+(?:[.,:/-]\d+)*(?:st|nd|rd|th|s|am|pm|k|m|bn|kg|km|g|mg|ml|h|min)?", re.IGNORECASE
)
_ALNUM = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class _Word:
    text: str
    start: int
    end: int
    initial: bool

    @property
    def bare(self) -> str:
        """The word without a possessive ending."""
        text = self.text
        if text.endswith(("'s", "\u2019s")):
            return text[:-2]
        if text.endswith(("'", "\u2019")):
            return text[:-1]
        return text

    @property
    def possessive(self) -> bool:
        return self.bare != self.text

    @property
    def number(self) -> bool:
        return _NUMBER.fullmatch(self.bare) is not None

    @property
    def code(self) -> bool:
        """Letters and digits together ("4B", "R2D2"), not a number with a unit."""
        bare = self.bare
        return not self.number and any(c.isdigit() for c in bare) and any(c.isalpha() for c in bare)

    @property
    def capitalised(self) -> bool:
        return self.text[0].isalpha() and self.text[0].isupper()

    @property
    def content(self) -> bool:
        """Letters (hyphens and apostrophes inside allowed), three or more, not a stop word."""
        bare = self.bare
        letters = bare.replace("-", "").replace("'", "").replace("\u2019", "")
        return len(bare) >= 3 and letters.isalpha() and bare.lower() not in STOP_WORDS


@dataclass(frozen=True)
class _Candidate:
    priority: int
    rank: float
    position: int
    term: str


def stem(word: str) -> str:
    """A crude English stem: lowercased, without possessive 's, plural -s/-es/-ies, -ing,
    -ed, a doubled final consonant left by those, or a final -e."""
    word = word.lower().replace("\u2019", "'")
    if word.endswith("'s"):
        word = word[:-2]
    word = word.rstrip("'")
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 4 and word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh")):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) > 5 and word.endswith("ing"):
        word = _undouble(word[:-3])
    elif len(word) > 4 and word.endswith("ied"):
        word = word[:-3] + "y"
    elif len(word) > 4 and word.endswith("ed"):
        word = _undouble(word[:-2])
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def _undouble(word: str) -> str:
    if len(word) > 2 and word[-1] == word[-2] and word[-1] not in "aeioulsz":
        return word[:-1]
    return word


def content_words(text: str) -> list[str]:
    """The content words of `text` (letters, three or more, not stop words), lowercased and
    crudely stemmed (`stem`), in order, repeats kept."""
    words = []
    for match in re.finditer(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*", text):
        word = match.group().lower().replace("\u2019", "'")
        if word.endswith("'s"):
            word = word[:-2]
        if len(word) >= 3 and word not in STOP_WORDS:
            words.append(stem(word))
    return words


def bridge_terms(
    evidence: str,
    question: str,
    *,
    rarity: Callable[[str], float] | None = None,
    limit: int = 6,
) -> list[str]:
    """The names and rare phrases in `evidence` that `question` does not already contain, in
    the priority of this module's docstring, at most `limit`, deduplicated case-insensitively
    and in the evidence's spelling: what a second look-up searches for to follow a chain."""
    if limit < 0:
        raise InvalidArgumentError("limit", f"must be 0 or more, got {limit}")
    words = _words(evidence)
    candidates = _candidates(evidence, words, rarity or (lambda word: float(len(word))))
    candidates.sort(key=lambda c: (c.priority, -c.rank, c.position))
    asked = {stem(word) for word in _ALNUM.findall(question)}
    chosen: list[str] = []
    seen: set[str] = set()
    for candidate in candidates:
        if len(chosen) >= limit:
            break
        stems = _term_stems(candidate.term)
        if not stems or stems <= asked or stems <= seen:
            continue
        chosen.append(candidate.term)
        seen |= stems
    return chosen


def _term_stems(term: str) -> set[str]:
    """The stems a term is compared by: its words without stop words and joiners, and its
    codes and numbers; empty for a number alone."""
    parts = _ALNUM.findall(term)
    if not any(any(char.isalpha() for char in part) for part in parts):
        return set()
    return {stem(part) for part in parts if part.lower() not in STOP_WORDS | _JOINERS}


def _words(evidence: str) -> list[_Word]:
    starts = [span.start for span in split_sentences(evidence)]
    words: list[_Word] = []
    next_start = 0
    for match in _WORD.finditer(evidence):
        # A sentence's first word, which may follow an opening quote or bracket.
        initial = False
        while next_start < len(starts) and starts[next_start] <= match.start():
            next_start += 1
            initial = True
        words.append(_Word(match.group(), match.start(), match.end(), initial))
    return words


def _adjacent(evidence: str, left: _Word, right: _Word) -> bool:
    """Whether only white space lies between two words (no comma, stop or bracket)."""
    return evidence[left.end : right.start].isspace()


def _candidates(
    evidence: str, words: list[_Word], rarity: Callable[[str], float]
) -> list[_Candidate]:
    found: list[_Candidate] = []
    used: set[int] = set()

    def add(priority: int, first: _Word, last: _Word, rank: float = 0.0) -> None:
        term = evidence[first.start : last.end]
        if last.possessive:
            term = term[: len(term) - (len(last.text) - len(last.bare))]
        found.append(_Candidate(priority, rank, first.start, term.strip()))

    def ranked(word: _Word) -> float:
        return rarity(word.bare.lower())

    for match in _QUOTED.finditer(evidence):
        quoted = next(group for group in match.groups() if group is not None)
        term = quoted.strip().rstrip(".,;:!?").strip()
        if term:
            found.append(_Candidate(1, 0.0, match.start(), term))
        used.update(i for i, w in enumerate(words) if match.start() <= w.start < match.end())

    _names(evidence, words, used, add)

    for index, word in enumerate(words):
        if index in used or not word.code:
            continue
        previous = words[index - 1] if index else None
        if (
            previous is not None
            and index - 1 not in used
            and previous.content
            and _adjacent(evidence, previous, word)
        ):
            add(3, previous, word)
            used.update({index - 1, index})
            continue
        add(3, word, word)
        used.add(index)

    for index, word in enumerate(words):
        if word.possessive and index not in used and word.content:
            add(5, word, word, ranked(word))
            used.add(index)
        if word.possessive or word.text.lower() in _DETERMINERS:
            for phrase_index in _noun_phrase(evidence, words, index + 1, used):
                add(5, words[phrase_index], words[phrase_index], ranked(words[phrase_index]))
                used.add(phrase_index)

    for index, word in enumerate(words):
        if index not in used and word.content:
            add(6, word, word, ranked(word))
    return found


def _names(
    evidence: str,
    words: list[_Word],
    used: set[int],
    add: Callable[[int, _Word, _Word], None],
) -> None:
    """Add the capitalised names (priorities 2 to 4) and mark their words used."""
    index = 0
    while index < len(words):
        if index in used or not words[index].capitalised:
            index += 1
            continue
        run = [index]
        while not words[run[-1]].possessive:
            following = _name_continues(evidence, words, run[-1], used)
            if not following:
                break
            run.extend(following)
        used.update(run)
        index = run[-1] + 1
        # "The", "In", "After" open the sentence; "De" and "Van" may open a name ("Van Dijk").
        while run and words[run[0]].bare.lower() in STOP_WORDS:
            run.pop(0)
        while run and words[run[0]].number:
            run.pop(0)
        if not run:
            continue
        first, last = words[run[0]], words[run[-1]]
        named = [i for i in run if words[i].text.lower() not in _JOINERS]
        if _is_a_date(evidence, words, run):
            continue
        if len(named) > 1:
            add(2, first, last)
        elif first.initial:
            add(4, first, last)
        else:
            add(3, first, last)


def _is_a_date(evidence: str, words: list[_Word], run: list[int]) -> bool:
    """A month or weekday beside a number ("3 March 2021"): an answer, not a bridge."""
    if any(words[i].bare.lower() not in _CALENDAR for i in run):
        return False
    before, after = run[0] - 1, run[-1] + 1
    return (
        before >= 0 and words[before].number and _adjacent(evidence, words[before], words[run[0]])
    ) or (
        after < len(words)
        and words[after].number
        and _adjacent(evidence, words[run[-1]], words[after])
    )


def _name_continues(evidence: str, words: list[_Word], last: int, used: set[int]) -> list[int]:
    """The word indices that carry the name ending at `last` on, or none."""
    if last + 1 >= len(words) or last + 1 in used:
        return []
    previous, following = words[last], words[last + 1]
    if not _adjacent(evidence, previous, following):
        return []
    if following.capitalised:
        return [last + 1]
    # A number or code names something only after a name's word ("Station 9", not "May 3").
    if (following.number or following.code) and previous.capitalised:
        return [] if previous.bare.lower() in _CALENDAR else [last + 1]
    joined: list[int] = []
    index = last + 1
    while index < len(words) and words[index].text.lower() in _JOINERS and len(joined) < 2:
        if not _adjacent(evidence, words[index - 1], words[index]):
            return []
        joined.append(index)
        index += 1
    if (
        joined
        and index < len(words)
        and words[index].capitalised
        and _adjacent(evidence, words[index - 1], words[index])
    ):
        return [*joined, index]
    return []


def _noun_phrase(evidence: str, words: list[_Word], start: int, used: set[int]) -> list[int]:
    """The content words of the noun phrase at `start`, up to its verb or a function word."""
    phrase: list[int] = []
    index = start
    while index < len(words) and len(phrase) < _MAX_PHRASE_WORDS:
        word = words[index]
        if index in used or not word.content:
            break
        if index > start and not _adjacent(evidence, words[index - 1], word):
            break
        if phrase and _looks_like_a_verb(evidence, words, index):
            break
        phrase.append(index)
        if word.possessive:
            break
        index += 1
    return phrase


def _looks_like_a_verb(evidence: str, words: list[_Word], index: int) -> bool:
    """A word in -s or -ed followed by a preposition, determiner or pronoun ("hangs in")."""
    word = words[index].text.lower()
    inflected = word.endswith("ed") or (
        word.endswith("s") and not word.endswith(("ss", "us", "is"))
    )
    if not inflected or index + 1 >= len(words):
        return False
    following = words[index + 1]
    if not _adjacent(evidence, words[index], following):
        return False
    return following.text.lower() in _PREPOSITIONS | _DETERMINERS | _PRONOUNS
