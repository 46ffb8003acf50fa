"""An HTML page's text survives its conversion to Markdown word for word and space for space:
the plain text of every paragraph (`plain_text` of its Markdown) is the HTML's text content,
white space normalised, whatever inline markup (emphasis, code, links, nested keys) stands
where, and whatever punctuation follows it."""

from __future__ import annotations

import html
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pg_manual import manual_pages
from selectolax.lexbor import LexborHTMLParser

from windowpack.documents import FURNITURE_KEY, parse_bytes, parse_paths, plain_text

_SPACE = re.compile(r"\s+")
_LINE_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC0123456789", min_size=1, max_size=8)
# No "!": before a link it makes Markdown's image syntax ("![x](u)"), which html2text does not
# escape; that is a conversion of its own, not spacing.
PUNCTUATION = st.sampled_from(["", "", ",", ".", ";", ":", "?", ")", "'s", "\u2019", '"'])
SPACE = st.sampled_from(["", " ", " ", "  ", "\n"])
CODE_TEXT = st.text(alphabet="abcxyz *_`-()[]", min_size=1, max_size=10).filter(
    lambda text: text.strip() != ""
)


def _normal(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


@st.composite
def inline(draw: st.DrawFn, depth: int = 0) -> str:
    """An inline element: emphasis, strong, a link or a code span, its edges spaced or not;
    emphasis may hold another inline element."""
    kind = draw(st.sampled_from(["em", "strong", "i", "b", "a", "code", "kbd"]))
    if kind in ("code", "kbd"):
        content = html.escape(draw(CODE_TEXT), quote=False)
        if kind == "kbd" and draw(st.booleans()):  # Sphinx's keys: <kbd><kbd>C</kbd>-...
            content = f"<kbd>{content}</kbd>-<kbd>{draw(WORDS)}</kbd>"
        else:
            content = content.replace("*", "<em>*</em>", 1)  # markup inside code, too
    else:
        inner = draw(WORDS)
        if depth < 1 and draw(st.booleans()):
            # Ended by a word: CommonMark cannot close an emphasis after a link's ")" when a
            # letter follows it, and no spacing rule can make it (html2text's space was one).
            inner = f"{inner} {draw(inline(depth + 1))} {draw(WORDS)}"
        content = f"{draw(SPACE)}{inner}{draw(SPACE)}"
    attributes = ' href="page.html#x"' if kind == "a" else ""
    return f"<{kind}{attributes}>{content}</{kind}>"


@st.composite
def paragraph(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(min_value=1, max_value=8))):
        piece = draw(inline()) if draw(st.booleans()) else draw(WORDS)
        parts.append(piece + draw(PUNCTUATION) + draw(SPACE))
    return "<p>" + draw(WORDS) + " " + "".join(parts) + "</p>"


def _paragraph_texts(source: str) -> list[str]:
    # A line break is white space in the text a reader sees (`text()` drops it).
    source = _LINE_BREAK.sub("\n", source)
    return [_normal(node.text(deep=True)) for node in LexborHTMLParser(source).css("p")]


@settings(max_examples=300, deadline=None)
@given(st.lists(paragraph(), min_size=1, max_size=4))
def test_every_paragraphs_plain_text_is_its_html_text(paragraphs: list[str]) -> None:
    source = "<html><body><main>" + "".join(paragraphs) + "</main></body></html>"
    (document,) = parse_bytes(source.encode("utf-8"), Path("page.html"))
    shown = _normal(plain_text(document.text))
    for text in _paragraph_texts(source):
        assert text in shown, (text, document.text)


def test_the_issues_cases_keep_their_spacing() -> None:
    source = (
        "<p>A <em>term</em>, so <strong>bold</strong>; a <code>code</code>: and <a href='u'>"
        "link</a>. Not<em> spaced </em>here, x<em>y</em>z, the <code>x`y</code> span, "
        "<code>COPY <em>table</em> TO</code>, <kbd><kbd>Control</kbd>-<kbd>C</kbd></kbd>.</p>"
    )
    (document,) = parse_bytes(source.encode("utf-8"), Path("page.html"))
    assert "_term_, so **bold**; a `code`: and [link](u)." in document.text
    assert "Not _spaced_ here, x*y*z" in document.text  # `*` inside a word, as CommonMark reads
    assert "``x`y``" in document.text
    assert "`COPY table TO`, `Control-C`." in document.text
    assert _normal(plain_text(document.text)) == _paragraph_texts(source)[0]


def test_every_paragraph_of_the_postgresql_manual_keeps_its_spacing() -> None:
    """On a real site: no `<p>` whose text, white space removed, is in its document's plain
    text (or its furniture's) while its text with white space is not."""
    pages = manual_pages()
    documents = parse_paths(pages, max_bytes=16 * 1024 * 1024).documents
    changed = []
    paragraphs = 0
    for page, document in zip(pages, documents, strict=True):
        texts = [document.text] + [
            str(entry["text"]) for entry in document.metadata.get(FURNITURE_KEY, [])
        ]
        shown = " ".join(_normal(plain_text(text)) for text in texts)
        unspaced = _SPACE.sub("", shown)
        for text in _paragraph_texts(page.read_text("utf-8")):
            paragraphs += bool(text)
            if text and text not in shown and _SPACE.sub("", text) in unspaced:
                changed.append(text)
    assert paragraphs > 1500
    assert changed == []
