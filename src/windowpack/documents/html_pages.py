"""HTML pages to Markdown: page furniture set aside, definition lists written as entries.

Two things html2text alone gets wrong on real manuals (PostgreSQL's, DocBook's, Sphinx's):

- **Page furniture is not content.** The Prev / Up / Home / Next bars of every page, site
  headers and footers, breadcrumbs and "See Also" link lists would be chunked, embedded and
  packed like the text around them (6.6% of the PostgreSQL subset's tokens). They are found
  by the page's own markup (selectolax, a lexbor HTML5 parser): HTML5 `nav`, page-level
  `header` / `footer` and their ARIA roles, breadcrumb classes and schema.org's
  BreadcrumbList, the navigation bars of DocBook (`div.navheader`, `div.navfooter`) and
  Texinfo (`div.nav-panel`), and a "See also" heading followed by nothing but links. A header
  that holds the page's `<h1>` is kept (it is the title), and so is anything that holds most
  of the page's text (an index page is its navigation). The extraction libraries were tried
  first on the PostgreSQL pages and each dropped real content: trafilatura every section
  heading and the definition lists' structure, readability-lxml ~500 paragraphs, justext
  the synopses (`<pre>`). What is removed stays in the document: `Furniture` records its
  kind, its text and the offset it stood at (`parse_html` keeps them in the metadata).
- **A definition list is entries, not paragraphs.** html2text writes `<dt>` and each `<p>`
  of its `<dd>` as separate paragraphs, so nothing downstream can tell a parameter's name
  from the text about it. Here each entry is written in Markdown's definition-list syntax
  (a term line, then `:   ` and the definition indented by four spaces), which
  `blocks.markdown_blocks` reads back as one block: a term and its definition stay together.
  Several `<dt>` of one `<dd>` share one term line, joined by ", ".

- **Inline markup keeps the page's text.** html2text puts a space between an emphasis and
  a letter or punctuation after it, and before an emphasis that follows a letter, so that
  Markdown renders the marks (`<em>term</em>, so` became "_term_ , so": 113 paragraphs of the
  Rust book); and it drops the white space at the inner edges of an emphasis (`x<em> y</em>`
  became "x_y_"). A page's text is what a quote, a phrase search and a reader must see, so
  the white space at an emphasis's edges is moved out of it, html2text's strip and space
  are off (`_converter_class`), and a marker before each emphasis takes back the space
  html2text puts there. An emphasis is written `_`, or `*` where a letter touches it outside
  (`<em>term</em>s`): CommonMark reads `_` inside a word as text, and a `*` of the page's own
  ("SELECT *") would pair with a `*` mark. Two emphases of a kind side by side are one, and
  an emphasis in one of its kind is unwrapped ("_a _b__" is not Markdown). Markup inside a
  code span (`<code>COPY <em>table</em></code>`, Sphinx's
  `<kbd><kbd>Control</kbd>-<kbd>C</kbd></kbd>`) is taken off, its text kept: a code span
  shows its marks as text ("COPY *table*", "Control`-`C"); code spans side by side are one.
  A code span that holds backticks (the Rust book's compiler messages: `` variable `x` ``)
  is fenced with more backticks than it holds, and one with spaces at both ends gets one
  more at each, as CommonMark reads them; html2text writes one backtick and the text.

All are done on the parsed tree with marker characters (Unicode noncharacters, removed from
the page first), which html2text passes through, and resolved in its output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from selectolax.lexbor import LexborHTMLParser, LexborNode

MAX_FURNITURE_CHARS = 16 * 1024
"""Most characters of removed furniture kept with a document (metadata has a 64 KiB cap)."""

# Noncharacters: never text, so a marker in html2text's output is always ours.
_REMOVED, _TERM, _TERM_END, _DEFINITION, _DEFINITION_END = "\ufdd0", *"\ufdd1\ufdd2\ufdd3\ufdd4"
_MARKERS = re.compile("([\ufdd0-\ufdd4])")
_INLINE_START, _INLINE_END = "\ufdd5", "\ufdd6"
# A code span holding backticks: its edges, and its backticks while html2text writes it.
_CODE_EDGE, _BACKTICK = "\ufdd7", "\ufdd8"
_TICKED_CODE = re.compile("\ufdd7`([^\ufdd7]*)`\ufdd7")
# The markers around an emphasis, with the one space html2text may have put between each and
# the emphasis (nothing of the page stands there: each marker touches its element).
_INLINE_MARKS = re.compile(" ?\ufdd6|\ufdd5 ?")
# Two emphases of one kind side by side (`<em>a</em><em>b</em>`) are one: "*a**b*" is not.
_JOINED_EMPHASIS = re.compile(r"(?<![*~\ufdda])(\*\*|\ufdda|~~) ?\ufdd6\ufdd5 ?\1(?![*~\ufdda])")
# What html2text writes for an emphasis's mark, chosen per emphasis (`_emphasis_marks`).
_EMPHASIS_MARK = "\ufdda"
_EMPHASIS_EDGES = re.compile("\ufdd5 ?\ufdda|\ufdda ?\ufdd6")
_MARKER_CHARACTERS = frozenset(chr(code) for code in range(0xFDD0, 0xFDF0))
# The elements html2text writes as emphasis, and spaces around (see the module docstring).
_EMPHASIS = "em, i, u, strong, b, del, strike, s"
_MARKS = {
    "em": "*",
    "i": "*",
    "u": "*",
    "strong": "**",
    "b": "**",
    "del": "~~",
    "strike": "~~",
    "s": "~~",
}
# The elements html2text writes as code spans (outside `<pre>`).
_INLINE_CODE = frozenset({"code", "kbd", "tt", "samp"})
_NONCHARACTERS = {code: None for code in range(0xFDD0, 0xFDF0)}

_FURNITURE: tuple[tuple[str, str], ...] = (
    ("navigation", "nav, [role=navigation], div.navheader, div.navfooter, div.nav-panel"),
    (
        "breadcrumbs",
        "[class*=breadcrumb i], [id*=breadcrumb i], [aria-label*=breadcrumb i], "
        "[itemtype*=BreadcrumbList]",
    ),
    ("header", "header, [role=banner]"),
    ("footer", "footer, [role=contentinfo]"),
)
# Headers and footers inside these belong to an article, not to the page.
_CONTENT_ROOTS = frozenset({"article", "main"})
_NEVER_FURNITURE = frozenset({"html", "body", "main", "article"})
_HEADINGS = "h1, h2, h3, h4, h5, h6"
# Elements whose lines html2text indents or prefixes: a definition list in one stays as
# html2text writes it.
_OWN_LINES = frozenset({"pre", "li", "blockquote", "table", "td", "th"})
_SEE_ALSO = re.compile(r"see\s+also\W*", re.IGNORECASE)
_WORD = re.compile(r"\w")
_BLANK_LINES_AT_START = re.compile(r"\A(?:[ \t]*\n)+")
_BLANK_LINES_AT_END = re.compile(r"(?:\n[ \t]*)+\Z")


@dataclass(frozen=True, kw_only=True)
class Furniture:
    """Text removed from a page: its kind ("navigation", "breadcrumbs", "header", "footer",
    "see-also"), its Markdown and where it stood (a character offset in the page's text)."""

    kind: str
    text: str
    at: int


@dataclass(frozen=True, kw_only=True)
class HtmlMarkdown:
    """A page's content as Markdown and the furniture taken out of it, in page order."""

    text: str
    furniture: tuple[Furniture, ...]


def html_markdown(source: str) -> HtmlMarkdown:
    """The Markdown of an HTML page without its furniture, definition lists as entries."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(source.translate(_NONCHARACTERS))
    removed = _take_furniture(tree)
    _mark_definition_lists(tree)
    _drop_heading_marks(tree)
    _flatten_inline_code(tree)
    _mark_emphasis(tree)
    markdown = _emphasis_marks(_JOINED_EMPHASIS.sub("", _markdown(tree.html or "")))
    markdown = _INLINE_MARKS.sub("", markdown)
    markdown = _TICKED_CODE.sub(_code_span, markdown)
    markdown = markdown.replace(_CODE_EDGE, "").replace(_BACKTICK, "`")
    text, offsets = _resolved(markdown)
    # A marker html2text did not write (inside an element it leaves out) stood at the end.
    offsets += [len(text)] * (len(removed) - len(offsets))
    furniture = tuple(
        Furniture(kind=kind, text=piece, at=at)
        for (kind, piece), at in zip(removed, offsets, strict=False)
    )
    return HtmlMarkdown(text=text, furniture=furniture)


def furniture_metadata(furniture: tuple[Furniture, ...]) -> list[dict[str, object]]:
    """Furniture as JSON for a document's metadata, at most `MAX_FURNITURE_CHARS` of text
    (an entry past that keeps its kind and place, with `cut` saying how much is missing)."""
    entries: list[dict[str, object]] = []
    room = MAX_FURNITURE_CHARS
    for piece in furniture:
        entry: dict[str, object] = {"kind": piece.kind, "at": piece.at, "text": piece.text[:room]}
        if len(piece.text) > room:
            entry["cut"] = len(piece.text) - room
        room = max(0, room - len(piece.text))
        entries.append(entry)
    return entries


def _markdown(html: str) -> str:
    converter = _converter_class()()
    converter.body_width = 0  # no hard wrapping: line breaks would split sentences for search
    converter.unicode_snob = True  # keep "—", "é" as written instead of ASCII stand-ins
    converter.emphasis_mark = _EMPHASIS_MARK  # `_` or `*`, chosen per emphasis
    return str(converter.handle(html)).replace("\r\n", "\n").replace("\r", "\n")


@cache
def _converter_class() -> type[Any]:
    """html2text's converter, with the text of an emphasis kept as the page has it."""
    import html2text

    class Converter(html2text.HTML2Text):
        def handle_data(self, data: str, entity_char: bool = False) -> None:
            # html2text strips the first text inside an emphasis (`<em>a <a>b</a></em>` lost
            # its space) and then puts a space before the text after it ("*term* , so"). The
            # page's own white space at an emphasis's edges was moved out (`_mark_emphasis`),
            # so neither is needed: the text is written as it stands.
            self.stressed = self.preceding_stressed = False
            super().handle_data(data, entity_char)

    return Converter


# --- furniture -------------------------------------------------------------------------------


def _take_furniture(tree: LexborHTMLParser) -> list[tuple[str, str]]:
    """Replace each piece of furniture with a marker; (kind, Markdown) of each, in order."""
    body = tree.body
    if body is None:
        return []
    page_words = len(body.text(deep=True, separator=" ").split())
    order = {node.mem_id: index for index, node in enumerate(body.traverse())}
    found: dict[int, tuple[str, list[LexborNode]]] = {}
    for kind, selector in _FURNITURE:
        for node in tree.css(selector):
            if node.mem_id in order and node.mem_id not in found and _is_furniture(node, kind):
                found[node.mem_id] = (kind, [node])
    for heading in tree.css(_HEADINGS):
        nodes = _see_also(heading)
        if nodes and heading.mem_id in order:
            found.setdefault(heading.mem_id, ("see-also", nodes))
    taken: list[tuple[str, str]] = []
    gone: set[int] = set()
    for mem_id in sorted(found, key=order.__getitem__):
        kind, nodes = found[mem_id]
        if _inside(nodes[0], gone) or _holds_most(nodes, page_words):
            continue
        taken.append((kind, _markdown("".join(node.html or "" for node in nodes)).strip()))
        gone.update(inner.mem_id for node in nodes for inner in node.traverse())
        nodes[0].replace_with(_REMOVED)
        for node in nodes[1:]:
            node.decompose()
    return taken


def _is_furniture(node: LexborNode, kind: str) -> bool:
    if node.tag in _NEVER_FURNITURE or node.css_first("main, article, h1") is not None:
        return False
    if kind in ("header", "footer"):
        return not any(parent.tag in _CONTENT_ROOTS for parent in _ancestors(node))
    return True


def _see_also(heading: LexborNode) -> list[LexborNode]:
    """A "See also" heading and the link-only siblings after it (none if any says more)."""
    if not _SEE_ALSO.fullmatch(heading.text(deep=True).strip()):
        return []
    nodes, links = [heading], 0
    sibling = heading.next
    while sibling is not None and not (sibling.is_element_node and sibling.css_matches(_HEADINGS)):
        if sibling.is_element_node or sibling.is_text_node:
            anchors = sibling.css("a") if sibling.is_element_node else []
            if sibling.is_element_node and sibling.tag == "a":
                anchors = [sibling]
            rest = sibling.text(deep=True)
            for anchor in anchors:
                rest = rest.replace(anchor.text(deep=True), " ", 1)
            if _WORD.search(rest):
                return []  # prose, not a link list: content
            links += len(anchors)
            nodes.append(sibling)
        sibling = sibling.next
    return nodes if links else []


def _inside(node: LexborNode, gone: set[int]) -> bool:
    return node.mem_id in gone or any(parent.mem_id in gone for parent in _ancestors(node))


def _holds_most(nodes: list[LexborNode], page_words: int) -> bool:
    """Whether these nodes hold half the page's words or more: then they are the page."""
    words = sum(len(node.text(deep=True, separator=" ").split()) for node in nodes)
    return words * 2 >= page_words


def _ancestors(node: LexborNode) -> list[LexborNode]:
    parents = []
    parent = node.parent
    while parent is not None:
        parents.append(parent)
        parent = parent.parent
    return parents


# --- inline markup ---------------------------------------------------------------------------


def _drop_heading_marks(tree: LexborHTMLParser) -> None:
    """Remove a heading's "link to this heading" anchor shown as one symbol (Sphinx's "¶",
    "#", "§"): the site's, not the title's ("3.1.3. Lists¶" in every section path)."""
    for anchor in tree.css(", ".join(f"h{level} a" for level in range(1, 7))):
        text = (anchor.text(deep=True) or "").strip()
        if len(text) == 1 and not text.isalnum():
            anchor.decompose()


def _flatten_inline_code(tree: LexborHTMLParser) -> None:
    """Unwrap every element inside an outermost code span outside `<pre>`, its text kept; a
    span with backticks, or with spaces at both ends, is marked to be fenced (`_code_span`)."""
    body = tree.body
    if body is None:
        return
    outermost = [
        node
        for node in body.traverse()
        if node.tag in _INLINE_CODE
        and not any(p.tag in _INLINE_CODE or p.tag == "pre" for p in _ancestors(node))
    ]
    joined: set[int] = set()
    for code in outermost:
        if code.mem_id in joined:
            continue
        inner = [node for node in code.traverse() if node.mem_id != code.mem_id]
        for node in reversed(inner):  # innermost first: each unwrapped node is still whole
            node.unwrap()
        # Spans side by side are one ("`a``b`" would read as a fence of two backticks).
        content = code.text(deep=True) or ""
        while code.next is not None and code.next.tag in _INLINE_CODE:
            following = code.next
            joined.add(following.mem_id)
            content += following.text(deep=True) or ""
            following.decompose()
        if len(content) != len(code.text(deep=True) or ""):
            while code.child is not None:
                code.child.decompose()
            code.insert_child(content)
        if "`" in content or (content[:1].isspace() and content[-1:].isspace()):
            for text in [n for n in code.traverse(include_text=True) if n.tag == "-text"]:
                text.replace_with((text.text_content or "").replace("`", _BACKTICK))
            code.insert_before(_CODE_EDGE)
            code.insert_after(_CODE_EDGE)


def _emphasis_marks(markdown: str) -> str:
    """Each emphasis's marks written `_` (html2text's), or `*` where a letter or digit
    touches it outside (`x<em>y</em>z`, `<em>term</em>s`): CommonMark reads `_` inside a word
    as text, while `*` in the page's own text ("SELECT *", "*.c") would pair with a `*` mark."""
    edges = list(_EMPHASIS_EDGES.finditer(markdown))
    marks: dict[int, str] = {}
    opened: list[int] = []
    for match in edges:
        if match.group().startswith(_INLINE_START):
            opened.append(match.start())
        elif opened:
            start = opened.pop()
            inside_word = _touches_word(markdown, start, -1) or _touches_word(
                markdown, match.end(), 1
            )
            marks[start] = marks[match.start()] = "*" if inside_word else "_"
    parts, position = [], 0
    for match in edges:
        mark = marks.get(match.start(), "_")
        parts.append(markdown[position : match.start()])
        parts.append(match.group().replace(_EMPHASIS_MARK, mark))
        position = match.end()
    parts.append(markdown[position:])
    return "".join(parts).replace(_EMPHASIS_MARK, "_")


def _touches_word(text: str, position: int, step: int) -> bool:
    """Whether the first character from `position` on (`step` 1) or before it (-1) that is
    not a marker is a letter or digit."""
    index = position if step > 0 else position - 1
    while 0 <= index < len(text) and text[index] in _MARKER_CHARACTERS:
        index += step
    return 0 <= index < len(text) and text[index].isalnum()


def _code_span(match: re.Match[str]) -> str:
    """A code span html2text wrote around backticks, fenced as CommonMark needs."""
    content = match.group(1).replace(_BACKTICK, "`")
    fence = "`" * (max((len(run) for run in re.findall("`+", content)), default=0) + 1)
    # CommonMark takes one space off each end of a span that has both, and needs a space
    # between a fence and a backtick of the content.
    ticked = content.startswith("`") or content.endswith("`")
    spaced = content.startswith(" ") and content.endswith(" ") and content.strip()
    pad = " " if ticked or spaced else ""
    return f"{fence}{pad}{content}{pad}{fence}"


def _mark_emphasis(tree: LexborHTMLParser) -> None:
    """Move the white space at each emphasis's inner edges out of it, and put the markers
    html2text's spacing is undone by around it (outermost first, so nested ones stay inside)."""
    nested = [
        node
        for node in tree.css(_EMPHASIS)
        if any(_MARKS.get(p.tag or "") == _MARKS[node.tag or ""] for p in _ancestors(node))
    ]
    for node in reversed(nested):  # italics in italics are italics: "*a *b**" is not Markdown
        node.unwrap()
    for node in tree.css(_EMPHASIS):
        texts = [inner for inner in node.traverse(include_text=True) if inner.tag == "-text"]
        if not texts or not "".join(inner.text_content or "" for inner in texts).strip():
            continue  # nothing html2text would write between the marks
        before, after = _edge_space(texts)
        node.insert_before(before + _INLINE_START)
        node.insert_after(_INLINE_END + after)


def _edge_space(texts: list[LexborNode]) -> tuple[str, str]:
    """Strip white space from the start of the first and the end of the last text node (one
    node can be both); one space for each edge that had any (html2text collapses runs)."""
    first, last = texts[0], texts[-1]
    first_text = first.text_content or ""
    before = " " if first_text[:1].isspace() else ""
    if first is last:
        after = " " if first_text[-1:].isspace() else ""
        first.replace_with(first_text.strip())
        return before, after
    last_text = last.text_content or ""
    after = " " if last_text[-1:].isspace() else ""
    first.replace_with(first_text.lstrip())
    last.replace_with(last_text.rstrip())
    return before, after


# --- definition lists ------------------------------------------------------------------------


def _mark_definition_lists(tree: LexborHTMLParser) -> None:
    """Bracket each `<dt>` and `<dd>`'s content with markers, but where html2text writes
    lines of its own around them (a list item's indent, a quote's `>`, a table's row)."""
    for tag, opening, closing in (("dt", _TERM, _TERM_END), ("dd", _DEFINITION, _DEFINITION_END)):
        for node in tree.css(tag):
            if any(parent.tag in _OWN_LINES for parent in _ancestors(node)):
                continue
            first = node.child
            if first is None:
                node.insert_child(opening)
            else:
                first.insert_before(opening)
            node.insert_child(closing)


def _resolved(markdown: str) -> tuple[str, list[int]]:
    """html2text's output with its markers resolved: entries written, furniture offsets."""
    reader = _MarkerReader(_MARKERS.split(markdown))
    text = reader.content(stop=None)
    # The removal markers were left as text: their offsets are where furniture stood.
    offsets: list[int] = []
    parts: list[str] = []
    length = 0
    for index, part in enumerate(text.split(_REMOVED)):
        if index:
            offsets.append(length)
        parts.append(part)
        length += len(part)
    return _trimmed("".join(parts), offsets)


def _trimmed(text: str, offsets: list[int]) -> tuple[str, list[int]]:
    """`text` stripped, offsets moved with it (and kept within it)."""
    lead = len(text) - len(text.lstrip())
    stripped = text.strip()
    return stripped, [min(max(0, at - lead), len(stripped)) for at in offsets]


class _MarkerReader:
    """Reads html2text's output split at markers, writing definition-list entries."""

    def __init__(self, parts: list[str]) -> None:
        self.parts = parts
        self.position = 0

    def content(self, stop: str | None) -> str:
        """Text up to the `stop` marker (consumed), entries written as Markdown."""
        out: list[str] = []
        after_block = False
        while self.position < len(self.parts):
            part = self.parts[self.position]
            self.position += 1
            if part == stop:
                break
            if part == _TERM:
                self.position -= 1
                _append_block(out, self.entry())
                after_block = True
            elif part == _DEFINITION:  # a <dd> without a <dt>: its content as it is
                out.append(self.content(_DEFINITION_END))
            elif part in (_TERM_END, _DEFINITION_END):
                continue  # unbalanced markup: nothing to close
            else:
                out.append(_BLANK_LINES_AT_START.sub("", part) if after_block else part)
                after_block = after_block and not part.strip()
        return "".join(out)

    def entry(self) -> str:
        """One entry: its terms (one line), then each definition after `:`, indented."""
        terms: list[str] = []
        while self._next_is(_TERM):
            line = ", ".join(
                s for s in (x.strip() for x in self.content(_TERM_END).split("\n")) if s
            )
            if line:
                terms.append(line)
        definitions: list[str] = []
        while self._next_is(_DEFINITION):
            definition = self.content(_DEFINITION_END).strip("\n")
            if definition.strip():
                definitions.append(_indented(definition))
        if not terms:
            return "\n\n".join(definitions)
        if not definitions:
            return "\n".join(terms)  # terms without a definition (a table of contents)
        return ", ".join(terms) + "\n" + "\n\n".join(definitions)

    def _next_is(self, marker: str) -> bool:
        """Whether `marker` comes next, past white space (which is then skipped)."""
        position = self.position
        while position < len(self.parts) and not self.parts[position].strip():
            position += 1  # (markers are not white space: this stops at each)
        if position < len(self.parts) and self.parts[position] == marker:
            self.position = position + 1
            return True
        return False


def _indented(definition: str) -> str:
    """A definition in Markdown's syntax: `:   ` before its first line, the rest indented
    (a code block, indented already, gets four more spaces and stays one)."""
    lines = [line.rstrip() for line in _BLANK_LINES_AT_START.sub("", definition).split("\n")]
    first, *rest = lines
    return "\n".join([f":   {first}", *(f"    {line}" if line else "" for line in rest)])


def _append_block(out: list[str], block: str) -> None:
    """Append a block as its own paragraph: one blank line before and after it."""
    if not block:
        return
    while out and not out[-1].strip():
        out.pop()  # white space before a block: the block brings its own
    if out:
        out[-1] = _BLANK_LINES_AT_END.sub("", out[-1]).rstrip(" \t")
    out.append(("\n\n" if out else "") + block + "\n\n")
