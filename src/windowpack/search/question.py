"""A question, read once: what every stage of retrieval and packing matches it by.

`Question.of(text, rules)` cuts the question into the lexical index's terms (its language's
rules, `text.language`), and finds its *literal* terms: command-line options (`--dry-run`),
identifiers with inner punctuation (`os.path.join`, `max_connections`) and quoted or
backticked strings. Words written in capitals are not literals: in a SQL manual's questions
every keyword is ("DROP DATABASE", "VACUUM"), and ranking their holders first cost a third of
the recall on the PostgreSQL manual at 2K (0.77 to 0.61, docs/evidence.md). Literals are matched
exactly: a passage that names the option the question names is evidence no paraphrase can
stand in for (`retrieval._literals_first`).

A window records its question (`Question.describe`): the language rules, the terms and the
literals, and which stages ran, so a caller can see what was decided.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from windowpack.text import LanguageRules

# Quoted spans: "..." and the typographic pair, `...`; single quotes only around a word run
# that does not touch a letter outside (so "don't" is no quote).
_QUOTED = re.compile(
    r"\"([^\"]{2,})\"|\u201c([^\u201d]{2,})\u201d|`([^`]{2,})`|(?<!\w)'([^'\n]{2,})'(?!\w)"
)
_MAX_TERMS = 64


@dataclass(frozen=True, kw_only=True)
class Question:
    """A question as retrieval reads it (see module)."""

    text: str
    language: str
    terms: tuple[str, ...]
    """The lexical index's terms of the question (stop words dropped, stemmed), in order."""
    literals: tuple[str, ...]
    """Lower-cased strings a passage must hold word for word to match the question exactly:
    options, identifiers, quoted spans."""

    @classmethod
    def of(cls, text: str, rules: LanguageRules) -> Question:
        """`text` read with `rules` (the lexical index's language rules)."""
        quoted = [
            next(group for group in match.groups() if group) for match in _QUOTED.finditer(text)
        ]
        literals = [*rules.literals(text), *(span.strip().lower() for span in quoted)]
        return cls(
            text=text,
            language=rules.code,
            terms=tuple(rules.terms(text)[:_MAX_TERMS]),
            literals=tuple(dict.fromkeys(literal for literal in literals if literal)),
        )

    def describe(self) -> dict[str, Any]:
        """What the window records of its question."""
        return {
            "language": self.language,
            "terms": list(self.terms),
            "literals": list(self.literals),
        }
