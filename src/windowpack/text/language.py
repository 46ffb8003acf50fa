"""A language's rules for lexical matching: which words are stop words, how words are
stemmed, how a text without spaces between words is cut into terms. The one place that
knows a language.

`language_rules(code)` gives the rules of an ISO 639-1 code: Snowball stemming (PyStemmer)
and bm25s's stop word list for the languages both cover, character bigrams for Chinese,
Japanese and Korean (whose clauses have no spaces to split on, so a word tokenizer would
make a whole clause one term), and for any other code the plain rules (`PLAIN`: lower case
and word boundaries only, no stop words, no stemming) rather than English guesses.
`detect_language(texts)` reads a sample of a collection's texts: its script first (CJK), then
which stop word list covers most of its words.

`terms(text)` is what the BM25 index stores and what a question is matched by. Besides the
words of a text, a *compound* — a command-line option (`--dry-run`), words joined by inner
punctuation (`os.path.join`, `max_connections`, `std::vector`, `built-in`) — is a term of its
own, unstemmed, so that a question naming it matches the places that name it, by its own
(high) inverse document frequency, and not only by its parts. `literals(text)` are the
compounds no plain phrase makes (all but words joined by hyphens, and abbreviations such as
"e.g."): those a question names are matched exactly (`search.retrieval`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from windowpack.text.stop_words import bm25s_stop_words

PLAIN = "und"
"""The code of the plain rules: no stop words, no stemming (ISO 639-2's 'undetermined')."""

# Snowball's algorithm and bm25s's stop word list for each language both cover.
_LATIN_LANGUAGES: dict[str, tuple[str, str]] = {
    "en": ("english", "STOPWORDS_EN"),
    "de": ("german", "STOPWORDS_GERMAN"),
    "nl": ("dutch", "STOPWORDS_DUTCH"),
    "fr": ("french", "STOPWORDS_FRENCH"),
    "es": ("spanish", "STOPWORDS_SPANISH"),
    "pt": ("portuguese", "STOPWORDS_PORTUGUESE"),
    "it": ("italian", "STOPWORDS_ITALIAN"),
    "ru": ("russian", "STOPWORDS_RUSSIAN"),
    "sv": ("swedish", "STOPWORDS_SWEDISH"),
    "no": ("norwegian", "STOPWORDS_NORWEGIAN"),
    "da": ("danish", "STOPWORDS_DANISH"),
    "tr": ("turkish", "STOPWORDS_TURKISH"),
}
_CJK_LANGUAGES = ("zh", "ja", "ko")
LANGUAGES = (*_LATIN_LANGUAGES, *_CJK_LANGUAGES, PLAIN)
"""Every code with rules of its own; any other code gets the plain rules."""

# A term kept whole: an option (-x, --long-option), or words joined by inner punctuation.
_COMPOUND = re.compile(r"(?<![\w-])--?[^\W_][\w-]*|\w+(?:(?:::|[._/:-])\w+)+")
# A literal is a compound that a plain phrase is not: an option, or a compound joined by
# something other than a hyphen ("os.path", "max_connections", "std::vector"), or holding a
# digit ("utf-8"); "well-known" is a compound term, but no literal.
_LITERAL = re.compile(r"--?[^\W_]|.*(?:::|[._/:]|\d)")
# Single letters joined by dots or slashes are an abbreviation ("e.g", "i.e", "n/a", "w/o"),
# written in running prose of every kind: a literal must single out the passages naming it.
_ABBREVIATION = re.compile(r"[^\W\d_](?:[./][^\W\d_])+")
_WORD = re.compile(r"\w\w+")
# Han, kana, Hangul: scripts written without spaces between words.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HANGUL = re.compile(r"[\uac00-\ud7af]")

# Detection. A sample of this many characters is read. A text is in a CJK language when at
# least this share of its words are CJK characters (each counted as a word); a Latin or
# Cyrillic language is the one whose stop words are the largest share of the words, when
# that share is at least
# `_MIN_STOP_SHARE` (running prose in each listed language is 25-50% stop words, code or
# a list of names far less). Set by reading: not tuned on any evaluation set.
_SAMPLE_CHARS = 200_000
_MIN_CJK_SHARE = 0.3
_MIN_STOP_SHARE = 0.12


@dataclass(frozen=True)
class LanguageRules:
    """How texts of one language are cut into BM25 terms (see module)."""

    code: str
    stemmer: str | None = None
    """PyStemmer's algorithm name; None: words are kept as they are."""
    stop_words: frozenset[str] = frozenset()
    bigrams: bool = False
    """Cut runs of CJK characters into overlapping character pairs."""
    _stems: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def terms(self, text: str) -> list[str]:
        """The terms of `text`: its words lower-cased, stop words dropped, stemmed; CJK runs
        as character bigrams (with the rules that cut them); literals whole."""
        lowered = text.lower()
        words = [word for word in _WORD.findall(lowered) if word not in self.stop_words]
        if self.bigrams:
            words = [piece for word in words for piece in _cjk_split(word)]
        found = self.stemmed(words)
        found.extend(match.group() for match in _COMPOUND.finditer(lowered))
        return found

    def literals(self, text: str) -> list[str]:
        """The literal terms of `text` (options, identifiers with inner punctuation), in
        order, each once: terms a passage must hold word for word to match them."""
        compounds = (match.group() for match in _COMPOUND.finditer(text.lower()))
        return list(dict.fromkeys(c for c in compounds if _is_literal(c)))

    def stemmed(self, words: Sequence[str]) -> list[str]:
        """`words` stemmed (each distinct word once through the stemmer, then kept)."""
        if self.stemmer is None:
            return list(words)
        stems = self._stems
        new = sorted({word for word in words if word not in stems})
        if new:
            if len(stems) > 1_000_000:  # a bound on memory over a very large ingest
                stems.clear()
            stems.update(zip(new, _stemmer(self.stemmer).stemWords(new), strict=True))
        return [stems[word] for word in words]


def _is_literal(compound: str) -> bool:
    """A compound a passage must hold word for word (`_LITERAL`), unless an abbreviation."""
    return bool(_LITERAL.match(compound)) and not _ABBREVIATION.fullmatch(compound)


def language_rules(code: str) -> LanguageRules:
    """The rules for ISO 639-1 `code` (the plain rules for a code without its own)."""
    return _rules(code.lower())


@functools.cache
def _rules(code: str) -> LanguageRules:
    if code in _LATIN_LANGUAGES:
        algorithm, stop_list = _LATIN_LANGUAGES[code]
        return LanguageRules(code, algorithm, bm25s_stop_words(stop_list))
    if code in _CJK_LANGUAGES:
        stop_words = bm25s_stop_words("STOPWORDS_CHINESE") if code == "zh" else frozenset()
        return LanguageRules(code, None, stop_words, bigrams=True)
    return LanguageRules(code if code == PLAIN else PLAIN)


def detect_language(texts: Iterable[str]) -> str:
    """The language code of most of `texts` (see module), `PLAIN` when none is clear."""
    sample = _sample(texts)
    # A CJK character counts as a word of its own: texts in those languages carry commands,
    # paths and untranslated notes whose letters would outnumber their characters.
    cjk = sum(len(run) for run in _CJK.findall(sample))
    others = len(_WORD.findall(_CJK.sub(" ", sample)))
    if not cjk + others:
        return PLAIN
    if cjk / (cjk + others) >= _MIN_CJK_SHARE:
        if _HANGUL.search(sample):
            return "ko"
        return "ja" if _KANA.search(sample) else "zh"
    words = _WORD.findall(sample.lower())
    if not words:
        return PLAIN
    shares = {
        code: sum(word in language_rules(code).stop_words for word in words) / len(words)
        for code in _LATIN_LANGUAGES
    }
    best = max(shares, key=lambda code: (shares[code], code == "en"))
    return best if shares[best] >= _MIN_STOP_SHARE else PLAIN


def _sample(texts: Iterable[str]) -> str:
    taken: list[str] = []
    size = 0
    for text in texts:
        taken.append(text[: _SAMPLE_CHARS - size])
        size += len(taken[-1])
        if size >= _SAMPLE_CHARS:
            break
    return "\n".join(taken)


def _cjk_split(word: str) -> list[str]:
    """A word with CJK runs: the runs as overlapping character bigrams (a lone character
    alone), the rest as it is."""
    if not _CJK.search(word):
        return [word]
    pieces: list[str] = []
    at = 0
    for run in _CJK.finditer(word):
        if run.start() > at:
            pieces.append(word[at : run.start()])
        chars = run.group()
        pieces.extend(chars[i : i + 2] for i in range(max(1, len(chars) - 1)))
        at = run.end()
    if at < len(word):
        pieces.append(word[at:])
    return [piece for piece in pieces if piece]


@functools.cache
def _stemmer(algorithm: str) -> Any:
    import Stemmer

    return Stemmer.Stemmer(algorithm)
