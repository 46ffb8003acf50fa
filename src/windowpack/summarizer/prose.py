"""Telling prose from markup, so summaries quote sentences and not code, tables or links.

An extractive summary of technical docs chose by word statistics alone, and code wins them:
the Node.js docs' collection root read `// Returns: 'C:\\path\\dir\\file.txt'`, zlib's
`(err, buffer) => { ### zlib constants`, readline's `<td><kbd>Ctrl</kbd>…`. So a text is read
line by line and these lines are not prose:

- every line of a fenced code block (```` ``` ```` or `~~~` to the closing fence) and of an
  HTML comment (Node's docs keep their YAML history in `<!-- YAML … -->`);
- table markup: a line starting with `|`, a `|---|` rule, or one holding `<td>`, `<tr>`, `<th>`;
- markdown headings (`### zlib constants`: a title, not a sentence) and lone HTML tags;
- link lists: a line that is mostly links (`* [fs](fs.md)`), and reference definitions
  (`[fs]: fs.md`);
- code: a line that opens with a comment or prompt (`//`, `/*`, `#!`, `$ `, `>>>`) or with a
  keyword into an assignment or call (`const x = …`), a short line ending like a statement
  (`{`, `}`, `;`, `=>`, `(`), a short one dense in brackets and `=`, or one whose characters
  are mostly not letters.

Prose is what is left, in runs of consecutive lines (wrapped sentences span lines). A sentence
is prose when it also has at least three words of letters and letters make at least half of
its non-space characters.
"""

from __future__ import annotations

import re

from windowpack.documents import PATH_SEPARATOR
from windowpack.text import append_trimmed, split_sentences
from windowpack.types import Span

_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_TABLE = re.compile(r"^\s*\||^\s*:?-{3,}:?\s*\||<t[dhr][\s>]|</t[dhr]>", re.IGNORECASE)
_HEADING = re.compile(r"^ {0,3}#{1,6}(\s|$)")
_LONE_TAG = re.compile(r"^\s*</?[a-zA-Z][^>]*>\s*$|^\s*<!--|-->\s*$")
_REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*\S")
_LINK = re.compile(r"!?\[[^\]]*\]\([^)]*\)|\[[^\]]*\]\[[^\]]*\]")
_CODE_START = re.compile(r"^\s*(//|/\*|\*/|#!|\$ |>>>|<\?|@@)")
_CODE_END = re.compile(r"(\{|\}|;|=>|\(|\[|,)\s*$")
_CODE_KEYWORD = re.compile(
    r"^\s*(const|let|var|function|import|export|return|class|def|async|await|new|throw)\b"
    r"[^.!?]*[=({;]"
)
_CODE_SYMBOL = re.compile(r"[{}()\[\];=<>]")
_WORD = re.compile(r"[^\W\d_]{2,}")
_LETTER = re.compile(r"[^\W\d_]")
_MIN_WORDS = 3
_STOP_WORD_LIST = """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does doesn doing
    don down during each few for from further had hadn has hasn have haven having he her here
    hers herself him himself his how i if in into is isn it its itself just let ll me might
    more most much must mustn my myself no nor not now of off on once one only or other ought
    our ours ourselves out over own re s same shan she should shouldn so some such t than that
    the their theirs them themselves then there these they this those through to too under
    until up us ve very was wasn we were weren what when where which while who whom why will
    with won would wouldn yet you your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_WORD_LIST.split())
"""English function words: neither a summary's subject nor worth a word of a short title."""

GENERIC_LABELS = frozenset(
    {
        "caution",
        "compatibility",
        "danger",
        "description",
        "example",
        "examples",
        "hint",
        "important",
        "note",
        "notes",
        "outputs",
        "parameters",
        "remark",
        "remarks",
        "see also",
        "table of contents",
        "contents",
        "synopsis",
        "tip",
        "tips",
        "warning",
        "warnings",
    }
)
"""Headings that name a kind of passage, not what it is about: alone they say nothing."""
_ADMONITIONS = frozenset(
    {"attention", "caution", "danger", "hint", "important", "note", "tip", "warning"}
)

_INDENTED = re.compile(r"^( {4}| {0,3}\t)")
_LIST_ITEM = re.compile(r"^ {0,3}([-*+]|\d{1,9}[.)])([ \t]|$)")
_STATEMENT_END = re.compile(r"[.!?\u2026][\s*_`'\"\u201d\u2019)\]]*$")
# A line of at most this many words that does not end like a sentence is a title.
_TITLE_WORDS = 8
_NAME_DASH = re.compile(r"\S\s+(\u2014|\u2013|-{1,2})\s+\S")
_LEAD_IN = re.compile(r":[\s*_`'\"\u201d\u2019)\]]*$")
_LABEL_WORD = re.compile(r"[^\W\d_]+")


def prose_runs(text: str, start: int, end: int) -> list[Span]:
    """The runs of prose lines in `text[start:end]`, trimmed, in order."""
    runs: list[Span] = []
    run_start: int | None = None
    in_fence = in_comment = False
    indented = _IndentedCode()
    position = start
    while position < end:
        newline = text.find("\n", position, end)
        line_end = end if newline < 0 else newline
        line = text[position:line_end]
        fence = not in_comment and _FENCE.match(line) is not None
        opens_comment = not in_fence and "<!--" in line and "-->" not in line.split("<!--")[-1]
        code = indented.is_code(line) and not (in_fence or in_comment)
        prose = not (in_fence or fence or in_comment or opens_comment or code) and (
            is_prose_line(line)
        )
        in_fence = in_fence != fence
        in_comment = (in_comment and "-->" not in line) or opens_comment
        if prose and run_start is None:
            run_start = position
        elif not prose and run_start is not None:
            append_trimmed(runs, text, run_start, position)
            run_start = None
        position = line_end + 1
    if run_start is not None:
        append_trimmed(runs, text, run_start, end)
    return runs


class _IndentedCode:
    """Tells, line by line, the lines of indented code blocks (CommonMark's: four spaces in,
    after a blank line that follows neither a list item nor an indented line, which would make
    it a list's continuation). html2text writes every `<pre>` so: a SQL synopsis such as
    `ALTER DOMAIN _name_` reads like words."""

    def __init__(self) -> None:
        self._inside = False
        self._after_blank = True
        self._after_list = False

    def is_code(self, line: str) -> bool:
        if not line.strip():
            self._after_blank = True
            return self._inside
        deep = _INDENTED.match(line) is not None
        self._inside = deep and (self._inside or (self._after_blank and not self._after_list))
        if not self._inside:
            self._after_list = deep or _LIST_ITEM.match(line) is not None
        self._after_blank = False
        return self._inside


def is_prose_line(line: str) -> bool:
    """Whether one line (outside code blocks) may belong to a prose sentence."""
    stripped = line.strip()
    if not stripped:
        return False
    markup = (_TABLE, _HEADING, _LONE_TAG, _REFERENCE, _CODE_START)
    if any(pattern.search(stripped) for pattern in markup):
        return False
    if _mostly_links(stripped):
        return False
    words = len(_WORD.findall(stripped))
    code = (
        _CODE_KEYWORD.match(stripped) is not None
        or (_CODE_END.search(stripped) is not None and words < 6)
        or (len(_CODE_SYMBOL.findall(stripped)) >= 4 and words < 12)
    )
    return _letters_share(stripped) >= 0.5 and not code


def is_prose(sentence: str) -> bool:
    """Whether a sentence reads as prose: three or more words, mostly letters."""
    return len(_WORD.findall(sentence)) >= _MIN_WORDS and _letters_share(sentence) >= 0.5


def prose_sentences(text: str, start: int, end: int) -> list[Span]:
    """The prose sentences of `text[start:end]`, in order."""
    return [
        sentence
        for run in prose_runs(text, start, end)
        for sentence in split_sentences(text, run.start, run.end)
        if is_prose(text[sentence.start : sentence.end])
    ]


def descriptive_sentences(text: str, start: int, end: int) -> list[Span]:
    """The prose sentences of `text[start:end]` that say something alone: not lead-ins."""
    return [
        sentence
        for sentence in prose_sentences(text, start, end)
        if not is_lead_in(text[sentence.start : sentence.end])
    ]


def lead_sentence(text: str, start: int, end: int) -> Span | None:
    """The first statement of `text[start:end]` (see `statements`), if it has one."""
    for run in prose_runs(text, start, end):
        for sentence in split_sentences(text, run.start, run.end):
            if is_statement(text[sentence.start : sentence.end]):
                return sentence
    return None


def statements(text: str, start: int, end: int) -> list[Span]:
    """The prose sentences of `text[start:end]` that state something: what an outline
    quotes as a section's lead or a document's opening (see `is_statement`)."""
    return [
        sentence
        for sentence in prose_sentences(text, start, end)
        if is_statement(text[sentence.start : sentence.end])
    ]


def is_statement(sentence: str) -> bool:
    """Whether a prose sentence states something alone: not a lead-in (`where lockmode is
    one of:` announces what follows), and not a title (a page's `20.8. Error Reporting and
    Logging` line): it ends like a sentence, or is long, or is a `name — what it does` line."""
    stripped = sentence.strip()
    if not is_prose(stripped) or is_lead_in(stripped):
        return False
    return (
        _STATEMENT_END.search(stripped) is not None
        or len(stripped.split()) > _TITLE_WORDS
        or _NAME_DASH.search(stripped) is not None
    )


def is_lead_in(sentence: str) -> bool:
    """Whether a sentence only announces what follows it: it ends with a colon."""
    return _LEAD_IN.search(sentence) is not None


def is_admonition(title: str) -> bool:
    """Whether a heading is an admonition's ("Note", "Tip", "Warning"...): a remark inside
    the section it is in, not a section of its own."""
    return " ".join(_LABEL_WORD.findall(title.lower())) in _ADMONITIONS


def is_generic_label(text: str) -> bool:
    """Whether a heading or label names a kind of passage rather than a subject ("Note",
    "Tip", "See Also", "Parameters", a path ending in one of them counts too)."""
    last = text.rsplit(PATH_SEPARATOR, 1)[-1]
    words = " ".join(_LABEL_WORD.findall(last.lower()))
    return words in GENERIC_LABELS


def _mostly_links(line: str) -> bool:
    linked = sum(len(match.group()) for match in _LINK.finditer(line))
    rest = _LINK.sub("", line).strip(" \t*+-|,·•")
    return linked > 0 and (linked >= 2 * len(rest) or len(_WORD.findall(rest)) < _MIN_WORDS)


def _letters_share(text: str) -> float:
    visible = len(text) - text.count(" ") - text.count("\t")
    return len(_LETTER.findall(text)) / visible if visible else 0.0
