"""Question kinds read off a question's form: is it a *set question*, one that asks for every
member of a set or for a count?

A set question needs coverage (every office, every flag, every mention), so it is packed
for breadth; any other question is packed for the best few passages. The rule reads the
question's grammar with a few closed word classes (auxiliaries, determiners, prepositions,
pronouns) and simple English morphology, not a list of topic words. Quoted text, backticked
code, command-line options (`--all`), file names and ALL-CAPS identifiers are literals: they
never act as grammar ("What does the ALL option do?" is not a set question).

First, courtesy lead-ins are dropped ("please", "can you", "I'd like to know", "do you
know"), and an embedded question after "tell/show/ask/explain (me)" or "find out" is read as
the question ("Show me which files changed"). Then the question is a set question when:

(i) it counts: "how many"; "how much" with a total word later ("in total", "altogether",
    "combined", "overall", "in all"); "number of" or "count of" followed by a plural noun
    phrase ("the number of open tickets", not "the number of the bus"); "count" or "tally"
    as the opening imperative.
(ii) a universal word scopes the answer: "all", "every", "each", "any of", "everything",
    "everyone", "everybody", "everywhere". Not counted: idioms ("at all", "after all",
    "first of all", "all right", "each other"), and a quantified time or measure ("every
    morning", "all night", "each time", "every other week"), which are adverbials. Not
    counted either in the predicate of a subject question that asks for one person or
    thing: in "Who visited every branch?" or "Which engineer has read every report?" the
    universal scopes the object, while the answer is one "who".
(iii) it opens with an enumeration imperative ("list", "enumerate", "itemize", "tally",
    "count"; after "can you / please" too), unless the verb is a noun modifier ("List
    comprehension syntax?": a singular content word and no plural follows), or with a
    fetching imperative ("give", "show", "name", "find", "tell", "describe", ...) whose
    object is plural: a plural head, a cardinal above one, or "a list of" ("Give me the
    functions that raise", "Name the three founders"; not "Name the treasurer").
(iv) the wh-phrase is plural: "which/what" with a plural noun phrase ("which cities",
    "what other tools", "in which countries", "what kinds of errors"), the plural copula
    ("what are the side effects", "who were the speakers"), or "which of ... are/were/
    have/do"; also at the end of an echo question ("Kestrel opened offices in which
    cities?"). "Are there any ..." asks for the members too.

"Whose" asks for an owner, so "Whose plants withered?" is not a set question; "where",
"when", "why" and plain "how" make one only through a universal or a count; "both ... and"
names a pair, not a set.

A plural head is found by morphology: a word ending in -s, -es or -ies but not -ss, -us or
-is, and not a known singular in -s ("news", "series", "species", "always"), plus the
irregulars people, children, men, women, mice, feet, teeth, geese; an acronym with a
lowercase s ("APIs") is plural; a capitalised word inside the question is a name and not a
plural. A word in -s that follows the head noun is read as the verb, not as a compound's
head ("Which character lives in Lisbon?"), unless an auxiliary, a relative pronoun, "of" or
a past form follows it ("Which software packages does it need?"). After "what" the first
word in -s is a verb when a determiner, pronoun, preposition, wh-word or adverb follows it
("What causes the crash?", "What happens next?") and a noun otherwise ("What companies
supply it?").

Known misses: "where" with a plural object ("Where did Kestrel open offices?"); a plural
subject with a present-tense verb and no auxiliary after a compound ("Which team members
work remotely?"); "what" + plural + preposition ("What companies in Europe use it?"); "which
of" without an auxiliary ("Which of these tools support it?"); plural subjects that are not
the thing asked ("What do the flags do?" is False); the plural copula with a non-plural
answer ("What are the odds?" is True); noun-phrase queries with no wh-word or verb ("offices
of Kestrel Freight"); mass nouns ("What equipment is needed?"); bare verbs after "what" +
plural read as nouns ("What causes crashes?" is True); an embedded question without
inversion whose plural is followed by a determiner ("Do you know what languages the library
supports?" is False, read like "What causes the crash?").
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass


def _word_set(words: str) -> frozenset[str]:
    """The white-space separated words of a table written as one string."""
    return frozenset(words.split())


# One token: a quoted or backticked span, an option, a word (with inner apostrophes, and
# inner . _ / - for names like "all.txt"), or a punctuation mark that ends a phrase.
_TOKEN = re.compile(
    r"\"[^\"]*\"|\u201c[^\u201d]*\u201d|`[^`]*`|(?<!\w)'[^'\n]+'(?!\w)|\u2018[^\u2019]*\u2019"
    r"|(?<![\w-])--?[^\W_][\w-]*"
    r"|[^\W_]+(?:['\u2019][^\W_]+)*(?:[-./_][^\W_]+)*"
    r"|[?,;:!]"
)
_ACRONYM_PLURAL = re.compile(r"[A-Z]{2,}s")
_PUNCTUATION = frozenset("?,;:!")

_AUXILIARIES = _word_set(
    "is are was were be been being am do does did have has had can could will would shall "
    "should may might must"
)
_PLURAL_AGREEMENT = frozenset({"are", "were", "have", "do"})
_SINGULAR_AGREEMENT = frozenset({"is", "was", "has"})
_WH_WORDS = _word_set("who whom whose what which where when why how")
_RELATIVES = _word_set("that who whom whose which where when")
_PREPOSITIONS = _word_set(
    "in at on from to for with by of into onto about under over through during between among "
    "amongst after before since across near past behind beyond within without against toward "
    "towards via per like than off up down out around along upon inside outside"
)
_DETERMINERS = _word_set(
    "the a an this that these those my your his her its our their some any no each every all "
    "both either neither another such"
)
_PRONOUNS = _word_set(
    "i me you u we us they them he him she her it one someone something anyone anything "
    "nobody nothing somebody anybody myself yourself itself themselves"
)
_CONJUNCTIONS = _word_set("and or but nor so if because while although though whether")
_ADVERBS = _word_set(
    "not never also only just ever still already most more least less first next last best "
    "here there now then wrong right well away back again often usually really very too"
)
_FUNCTION_WORDS = (
    _AUXILIARIES | _WH_WORDS | _PREPOSITIONS | _DETERMINERS | _PRONOUNS | _CONJUNCTIONS | _ADVERBS
)
# What may follow a verb in -s right after "what" ("What causes the ...", "What happens next").
_AFTER_A_VERB = (_DETERMINERS | _PRONOUNS | _PREPOSITIONS | _WH_WORDS | _ADVERBS) - {"of"}
_IRREGULAR_PLURALS = _word_set("people children men women mice feet teeth geese")
_SINGULARS_IN_S = _word_set(
    "news series species means physics mathematics economics politics ethics athletics lens "
    "atlas canvas bias alias gas chaos kudos yes always perhaps whereas thus plus minus "
    "sometimes nowadays overseas besides afterwards backwards indoors outdoors"
)
_CARDINALS = _word_set(
    "two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty "
    "fifty hundred dozen several many multiple various few"
)
_UNIVERSALS = _word_set("all every each any everything everyone everybody everywhere")
_TIME_NOUNS = _word_set(
    "second seconds minute minutes hour hours day days night nights morning mornings "
    "afternoon afternoons evening evenings week weeks weekend weekends month months year "
    "years decade century season seasons summer winter spring autumn fall quarter time times "
    "while long along way monday tuesday wednesday thursday friday saturday sunday"
)
# Words between a universal and the time noun it quantifies ("every other week").
_TIME_SKIPS = _CARDINALS | _word_set("the single other whole entire this that last")
_TOTAL_WORDS = _word_set(
    "total altogether combined overall sum together cumulative cumulatively aggregate"
)
_ENUMERATION_VERBS = _word_set(
    "list enumerate itemize itemise tally count catalogue catalog tabulate"
)
_FETCHING_VERBS = _word_set(
    "name give show tell provide find identify mention describe summarize summarise outline "
    "get fetch return collect gather compile report print display state specify recall "
    "retrieve extract"
)
_EMBEDDING_VERBS = frozenset({"tell", "show", "ask", "explain", "find"})
_LIST_NOUNS = _word_set("list rundown breakdown inventory catalogue catalog")
_KIND_NOUNS = _word_set("kind type sort form variety category")
_COURTESY = (
    ("please",),
    ("kindly",),
    ("hey",),
    ("hi",),
    ("ok",),
    ("okay",),
    ("so",),
    ("can", "you"),
    ("could", "you"),
    ("would", "you"),
    ("will", "you"),
    ("can", "u"),
    ("i", "need", "you", "to"),
    ("i", "want", "you", "to"),
    ("i", "would", "like", "you", "to"),
    ("i", "need", "to", "know"),
    ("i", "want", "to", "know"),
    ("i", "would", "like", "to", "know"),
    ("i", "wonder"),
    ("i", "am", "wondering"),
    ("do", "you", "know"),
    ("does", "anyone", "know"),
    ("any", "idea"),
    ("help", "me"),
)
_CONTRACTIONS = {"'re": "are", "'ve": "have", "'ll": "will", "'d": "would", "'m": "am"}
_NEGATED = {"ca": "can", "wo": "will", "sha": "shall"}
_IS_AFTER = _WH_WORDS | frozenset({"that", "there", "it", "here", "he", "she"})


@dataclass(frozen=True)
class _Token:
    low: str
    text: str
    literal: bool = False
    name: bool = False
    possessive: bool = False


def is_set_question(question: str) -> bool:
    """True when `question` asks for every member of a set or for a count, by the rule in
    this module's docstring ("List every city where ...", "How many ...", "Which cities
    ...", "What are the ..."); False for questions after one thing ("Which city ...",
    "Who is the treasurer?", "What does the FORCE option do?")."""
    tokens = _drop_lead_ins(_tokenize(question))
    lows = [token.low for token in tokens]
    return (
        _counts(tokens, lows)
        or _imperative_asks_for_a_set(tokens, lows)
        or _wh_phrase_is_plural(tokens, lows)
        or _ends_with_a_plural_wh_phrase(tokens, lows)
        or _universal_scopes_the_answer(tokens, lows)
        or lows[:3] in (["are", "there", "any"], ["were", "there", "any"])
    )


def _tokenize(question: str) -> list[_Token]:
    has_lowercase = any(char.islower() for char in question)
    tokens: list[_Token] = []
    first = True
    for match in _TOKEN.finditer(question):
        text = match.group()
        if text in _PUNCTUATION:
            tokens.append(_Token(text, text))
            continue
        if (
            text[0] in "\"'`-\u201c\u2018"
            or any(char in text for char in "./_")
            or (has_lowercase and len(text) > 1 and text.isupper() and text.isalpha())
        ):
            tokens.append(_Token(text.lower(), text, literal=True))
        else:
            # The first word is capitalised by the sentence, not because it is a name.
            tokens.extend(_word_tokens(text, name=text[0].isupper() and not first))
        first = False
    return tokens


def _word_tokens(text: str, *, name: bool) -> list[_Token]:
    low = text.lower().replace("\u2019", "'")
    if low.endswith("n't") and len(low) > 3:
        base = low[:-3]
        return [_Token(_NEGATED.get(base, base), text), _Token("not", "not")]
    for suffix, word in _CONTRACTIONS.items():
        if low.endswith(suffix) and len(low) > len(suffix):
            return [_Token(low[: -len(suffix)], text), _Token(word, word)]
    if low.endswith("'s") and len(low) > 2:
        base = low[:-2]
        if base in _IS_AFTER:
            return [_Token(base, text), _Token("is", "is")]
        return [_Token(base, text, name=name, possessive=True)]
    return [_Token(low, text, name=name)]


def _drop_lead_ins(tokens: list[_Token]) -> list[_Token]:
    """The question without courtesy lead-ins, and from the wh-word of an embedded one."""
    changed = True
    while changed:
        changed = False
        while tokens and tokens[0].low in _PUNCTUATION:
            tokens = tokens[1:]
            changed = True
        lows = [token.low for token in tokens[:5]]
        for lead_in in _COURTESY:
            if tuple(lows[: len(lead_in)]) == lead_in and len(tokens) > len(lead_in):
                tokens = tokens[len(lead_in) :]
                changed = True
                break
    if tokens and tokens[0].low in _EMBEDDING_VERBS:
        rest = 1
        while rest < len(tokens) and tokens[rest].low in {"me", "us", "out"}:
            rest += 1
        if rest < len(tokens) and _wh_start(tokens, rest) is not None:
            return tokens[rest:]
    return tokens


def _wh_start(tokens: list[_Token], index: int) -> int | None:
    """Where the wh-word is when a wh-phrase starts at `index` ("which ...", "in which ...")."""
    if index < len(tokens) and tokens[index].low in _WH_WORDS:
        return index
    if (
        index + 1 < len(tokens)
        and tokens[index].low in _PREPOSITIONS
        and tokens[index + 1].low in {"which", "what", "whose", "whom"}
    ):
        return index + 1
    return None


def _at(lows: list[str], index: int) -> str:
    return lows[index] if 0 <= index < len(lows) else ""


def _is_plural(token: _Token) -> bool:
    if _ACRONYM_PLURAL.fullmatch(token.text):
        return True
    if token.literal or token.name or token.possessive:
        return False
    word = token.low
    if word in _IRREGULAR_PLURALS:
        return True
    return (
        len(word) >= 3
        and word.isalpha()
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is"))
        and word not in _SINGULARS_IN_S
        and word not in _FUNCTION_WORDS
    )


def _breaks_a_noun_phrase(token: _Token) -> bool:
    if token.literal or token.name or token.possessive:
        return False
    return token.low in _PUNCTUATION or token.low in _FUNCTION_WORDS


def _counts(tokens: list[_Token], lows: list[str]) -> bool:
    for index, word in enumerate(lows):
        if word == "how" and _at(lows, index + 1) == "many":
            return True
        if word == "how" and _at(lows, index + 1) == "much":
            later = lows[index + 2 :]
            if any(w in _TOTAL_WORDS for w in later) or _has_pair(later, "in", "all"):
                return True
        counted = word in {"number", "count"} and _at(lows, index + 1) == "of"
        if counted and _noun_phrase_is_plural(tokens, index + 2):
            return True
    return bool(lows) and lows[0] in {"count", "tally"}


def _has_pair(lows: list[str], first: str, second: str) -> bool:
    return any(pair == (first, second) for pair in itertools.pairwise(lows))


def _noun_phrase_is_plural(tokens: list[_Token], start: int) -> bool:
    """Whether the noun phrase at `start` (determiners skipped) has a plural word or a
    cardinal above one before it ends."""
    index = start
    while index < len(tokens) and tokens[index].low in _DETERMINERS:
        index += 1
    while index < len(tokens) and not _breaks_a_noun_phrase(tokens[index]):
        token = tokens[index]
        if _is_plural(token) or token.low in _CARDINALS or _is_cardinal_number(token.low):
            return True
        index += 1
    return False


def _is_cardinal_number(word: str) -> bool:
    return word.isdigit() and int(word) > 1


def _imperative_asks_for_a_set(tokens: list[_Token], lows: list[str]) -> bool:
    if not lows:
        return False
    verb = lows[0]
    if verb in _ENUMERATION_VERBS:
        following = tokens[1] if len(tokens) > 1 else None
        if following is None:
            return False
        if following.low in _FUNCTION_WORDS or following.name or following.literal:
            return True
        return following.possessive or _noun_phrase_is_plural(tokens, 1)
    if verb not in _FETCHING_VERBS:
        return False
    start = 1
    while start < len(tokens) and lows[start] in {"me", "us"}:
        start += 1
    index = start
    while index < len(tokens) and lows[index] in _DETERMINERS:
        if lows[index] in _UNIVERSALS:
            return True
        index += 1
    if index < len(tokens) and lows[index] in _LIST_NOUNS and _at(lows, index + 1) == "of":
        return True
    return _noun_phrase_is_plural(tokens, start)


def _wh_phrase_is_plural(tokens: list[_Token], lows: list[str]) -> bool:
    wh = _wh_start(tokens, 0)
    if wh is None:
        return False
    word = lows[wh]
    after = _at(lows, wh + 1)
    if word in {"what", "which", "who"} and after in {"are", "were"}:
        return _plural_copula_asks_for_a_set(tokens, wh + 2)
    if word == "which" and after == "of":
        verbs = [w for w in lows[wh + 2 :] if w in _AUXILIARIES]
        return bool(verbs) and verbs[0] in _PLURAL_AGREEMENT
    # "Whose" asks for an owner: "Whose plants withered?" wants one person, not the plants.
    if word in {"which", "what"}:
        return _wh_noun_phrase(tokens, wh)[0]
    return False


def _ends_with_a_plural_wh_phrase(tokens: list[_Token], lows: list[str]) -> bool:
    """An echo question's wh-phrase at its end: "Kestrel opened offices in which cities?"."""
    for index in range(1, len(tokens)):
        if lows[index] in {"which", "what"} and lows[index - 1] in _PREPOSITIONS:
            tail = [token for token in tokens[index + 1 :] if token.low not in _PUNCTUATION]
            if tail and not any(_breaks_a_noun_phrase(token) for token in tail):
                return any(_is_plural(token) for token in tail)
    return False


def _plural_copula_asks_for_a_set(tokens: list[_Token], start: int) -> bool:
    """Whether "What are the X" asks for a set: it does unless "are" is the auxiliary of a
    personal pronoun ("What are you doing?") or of a progressive ("What are the auditors
    looking for?")."""
    if start >= len(tokens) or tokens[start].low in {"you", "u", "we", "they", "i"}:
        return False
    index = start
    while index < len(tokens) and tokens[index].low in _DETERMINERS:
        index += 1
    seen_plural = False
    while index < len(tokens) and not _breaks_a_noun_phrase(tokens[index]):
        token = tokens[index]
        if seen_plural and token.low.endswith("ing"):
            return False
        seen_plural = seen_plural or _is_plural(token)
        index += 1
    return True


def _wh_noun_phrase(tokens: list[_Token], wh: int) -> tuple[bool, int | None]:
    """(whether the noun phrase after "which/what/whose" is plural, where the verb after a
    singular phrase is, or None when it is not found)."""
    question_word = tokens[wh].low
    position = 0
    index = wh + 1
    while index < len(tokens):
        token = tokens[index]
        if token.low in _CARDINALS or _is_cardinal_number(token.low):
            return True, None
        if token.low in {"other", "else"}:
            index += 1
            continue
        if _breaks_a_noun_phrase(token):
            return False, index if position else None
        following = tokens[index + 1].low if index + 1 < len(tokens) else ""
        if token.low in _KIND_NOUNS and following == "of":
            index += 2
            continue
        if token.low in _IRREGULAR_PLURALS:
            return True, None
        if _is_plural(token):
            if following == "of":
                return True, None
            if position == 0 and question_word in {"which", "whose"}:
                return True, None
            if position == 0:
                is_noun = bool(following) and following not in _AFTER_A_VERB
                is_noun = is_noun and following not in _PUNCTUATION
            else:
                is_noun = (
                    following in _AUXILIARIES
                    or following in _RELATIVES
                    or (len(following) > 4 and following.endswith("ed"))
                )
            if is_noun:
                return True, None
            return False, index
        if position and len(token.low) > 4 and token.low.endswith("ed"):
            return False, index
        position += 1
        index += 1
    return False, None


def _universal_scopes_the_answer(tokens: list[_Token], lows: list[str]) -> bool:
    predicate = _predicate_of_a_singular_subject_question(tokens, lows)
    for index, token in enumerate(tokens):
        word = token.low
        if word not in _UNIVERSALS or token.literal:
            continue
        if predicate is not None and index >= predicate:
            continue
        before, after = _at(lows, index - 1), _at(lows, index + 1)
        if word == "any" and after != "of":
            continue
        if word == "each" and (after == "other" or before in _CARDINALS or before.isdigit()):
            continue
        if word == "all" and _is_an_idiom(lows, index):
            continue
        if word in {"all", "every", "each", "any"} and _quantifies_time(lows, index + 1):
            continue
        return True
    return False


def _is_an_idiom(lows: list[str], index: int) -> bool:
    before, after = _at(lows, index - 1), _at(lows, index + 1)
    if before in {"at", "after", "above"}:
        return True
    if before == "of" and _at(lows, index - 2) in {"first", "best", "most", "least", "worst"}:
        return True
    return after in {"right", "but", "too", "alone", "set"}


def _quantifies_time(lows: list[str], index: int) -> bool:
    while _at(lows, index) in _TIME_SKIPS or _at(lows, index) == "of":
        index += 1
    return _at(lows, index) in _TIME_NOUNS


def _predicate_of_a_singular_subject_question(tokens: list[_Token], lows: list[str]) -> int | None:
    """Where the predicate starts in "Who visited ..." or "Which engineer has read ...": a
    question asking for one subject, whose universals scope its object instead."""
    wh = _wh_start(tokens, 0)
    if wh is None:
        return None
    word = lows[wh]
    if word in {"who", "whom"}:
        verb: int | None = wh + 1
    elif word in {"which", "whose"} and _at(lows, wh + 1) != "of":
        plural, verb = _wh_noun_phrase(tokens, wh)
        if plural:
            return None
    else:
        return None
    if verb is None or verb >= len(tokens):
        return None
    following = lows[verb]
    if following in _UNIVERSALS or following in _PUNCTUATION:
        return None
    if following in _AUXILIARIES and following not in _SINGULAR_AGREEMENT:
        return None
    if following in {"is", "was"} and _at(lows, verb + 1) in _UNIVERSALS:
        return None  # "Who is everyone on the board?": the universal is what is asked.
    return verb
