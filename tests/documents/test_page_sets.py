"""The HTML pages of one add, read together: each titled by its own `<title>` (the site's name
cut off), never by a banner every page shows; blocks repeated at the edges of most pages
taken out as furniture, kept in the metadata; the content's own repeated blocks kept."""

from __future__ import annotations

from pathlib import Path

import pytest

import windowpack as wp
from windowpack.documents import (
    FURNITURE_KEY,
    TITLES_KEY,
    parse_paths,
    shared_title_warning,
    site_pages,
)
from windowpack.types import Document

BOOK_PAGE = """<!DOCTYPE html><html><head><title>{title} - The Lantern Book</title></head>
<body><nav id="sidebar"><ol><li><a href="a.html">1. Wicks</a></li><li><a href="b.html">2. Oil</a>
</li></ol></nav>
<div id="menu-bar"><ul class="theme-popup"><li><button>Light (default)</button></li>
<li><button>Coal</button></li><li><button>Navy</button></li></ul>
<h1 class="menu-title">The Lantern Book</h1></div>
<main><h2>{title}</h2>
<p>Filename: src/lantern.rs</p><pre><code>{code}</code></pre>
<p>{body}</p>
<h3>Description</h3><p>{description}</p>
</main>
<div class="footer"><p>Built with a book generator, version 7.</p></div></body></html>"""
CHAPTERS = [
    ("Wicks", "fn wick() {}", "A wick draws oil up to the flame.", "Wicks are cotton."),
    ("Oil", "fn oil() {}", "Paraffin burns clean in a closed lantern.", "Oil is kept cool."),
    ("Glass", "fn glass() {}", "The chimney glass shields the flame from wind.", "Glass."),
    ("Care", "fn care() {}", "Trim the wick before every lighting.", "Care is weekly."),
]
FURNITURE = ["Light (default)", "Coal", "Navy", "The Lantern Book", "Built with a book"]


def _book(folder: Path, chapters: list[tuple[str, str, str, str]] = CHAPTERS) -> list[Path]:
    paths = []
    for number, (title, code, body, description) in enumerate(chapters):
        path = folder / f"ch{number:02d}.html"
        path.write_text(
            BOOK_PAGE.format(title=title, code=code, body=body, description=description),
            "utf-8",
        )
        paths.append(path)
    return paths


def _parsed(paths: list[Path], root: Path) -> list[Document]:
    return parse_paths(paths, max_bytes=1 << 20, root=root).documents


def test_each_page_is_titled_by_its_title_without_the_sites_name(tmp_path: Path) -> None:
    documents = _parsed(_book(tmp_path), tmp_path)
    assert [document.title for document in documents] == ["Wicks", "Oil", "Glass", "Care"]
    assert documents[0].metadata[TITLES_KEY] == {
        "title": "Wicks - The Lantern Book",
        "h1": "The Lantern Book",
    }
    assert shared_title_warning(documents) is None


def test_a_banner_is_never_a_title(tmp_path: Path) -> None:
    """Every `<title>` the site's name: the `<h1>` is the title where it is the page's own,
    the file name where the `<h1>` is a banner too."""
    own = "<title>Lanterns</title><h1>{name}</h1><p>About {name}.</p>"
    banner = "<title>Lanterns</title><h1>Lanterns</h1><p>About {name}.</p>"
    for number, name in enumerate(["Wicks", "Oil", "Glass"]):
        (tmp_path / f"own{number}.html").write_text(own.format(name=name), "utf-8")
        (tmp_path / f"banner{number}.html").write_text(banner.format(name=name), "utf-8")
    owned = _parsed(sorted(tmp_path.glob("own*.html")), tmp_path)
    assert [document.title for document in owned] == ["Wicks", "Oil", "Glass"]
    bannered = _parsed(sorted(tmp_path.glob("banner*.html")), tmp_path)
    assert [d.title for d in bannered] == ["banner0.html", "banner1.html", "banner2.html"]


def test_pages_too_few_to_show_a_site_keep_their_own_titles(tmp_path: Path) -> None:
    """Their `<title>` as written: the `<h1>` at its end may be the site's banner."""
    documents = _parsed(_book(tmp_path, CHAPTERS[:2]), tmp_path)
    assert [document.title for document in documents] == [
        "Wicks - The Lantern Book",
        "Oil - The Lantern Book",
    ]
    assert all("Light (default)" in document.text for document in documents)


def test_blocks_repeated_at_the_edges_of_most_pages_are_furniture(tmp_path: Path) -> None:
    documents = _parsed(_book(tmp_path), tmp_path)
    for document, (title, code, body, description) in zip(documents, CHAPTERS, strict=True):
        for furniture in FURNITURE:
            assert furniture not in document.text, (furniture, document.text)
        # The content's own repeats (a caption above each listing, a section heading with
        # its own text under it) are content.
        for content in (f"## {title}", "Filename: src/lantern.rs", code, body, description):
            assert content in document.text
        assert "### Description" in document.text
        assert document.text.startswith(f"## {title}")
        repeated = [e for e in document.metadata[FURNITURE_KEY] if e["kind"] == "repeated"]
        taken = "\n".join(entry["text"] for entry in repeated)
        for furniture in FURNITURE:
            assert furniture in taken
        # Where it stood: the picker and banner before the text, the footer after it.
        assert {entry["at"] for entry in repeated} == {0, len(document.text)}


def test_the_detector_finds_nothing_left_the_second_time(tmp_path: Path) -> None:
    documents = _parsed(_book(tmp_path), tmp_path)
    assert site_pages(documents) == documents


def test_other_formats_are_not_read_together(tmp_path: Path) -> None:
    for number in range(4):
        text = (
            f"# Note {number}\n\nShared footer line.\n\nOwn text {number}.\n\nShared footer line.\n"
        )
        (tmp_path / f"n{number}.md").write_text(text, "utf-8")
    documents = _parsed(sorted(tmp_path.glob("*.md")), tmp_path)
    assert all(document.text.count("Shared footer line.") == 2 for document in documents)


def test_most_documents_of_an_add_sharing_a_title_is_a_warning(hash_store: wp.Store) -> None:
    collection = hash_store.collection("manual")
    same = [wp.Document(text=f"Page {n} text.", title="The Manual", id=f"p{n}") for n in range(4)]
    report = collection.add(same)
    assert len(report.warnings) == 1
    assert "4 of 4 documents share the title 'The Manual'" in report.warnings[0]
    mixed = [wp.Document(text=f"Other {n}.", title=f"Chapter {n}", id=f"c{n}") for n in range(4)]
    assert collection.add(mixed).warnings == []


@pytest.mark.parametrize(
    ("titles", "warned"),
    [(["A", "A", "A", "B"], True), (["A", "A", "B", "C"], False), (["A", "A"], False)],
)
def test_the_shared_title_check(titles: list[str], warned: bool) -> None:
    documents = [Document(text="x", title=title, id=str(n)) for n, title in enumerate(titles)]
    assert (shared_title_warning(documents) is not None) is warned


def _nodes(collection: wp.Collection, node_id: int) -> list[wp.TreeNode]:
    """The node and every node under it."""
    node = collection.node(node_id)
    found = [node]
    for child in node.children:
        if child.node_id is not None and child.node_id != node_id:
            found += _nodes(collection, child.node_id)
    return found


def test_summaries_start_from_content_and_name_chapters_by_title(
    hash_store: wp.Store, tmp_path: Path
) -> None:
    chapters = [
        (title, f"fn f{n}() {{}}", f"{body} More about {title.lower()} follows here.", title)
        for n, (title, _, body, _) in enumerate(CHAPTERS * 2)
    ]
    book = tmp_path / "book"
    book.mkdir()
    collection = hash_store.collection("book")
    collection.add_files(_book(book, chapters), root=book)
    root_id = collection.tree().root_id
    assert root_id is not None
    nodes = _nodes(collection, root_id)
    for node in nodes:
        for furniture in FURNITURE:
            assert furniture not in node.text, (furniture, node.text)
    root = collection.node(root_id)
    labels = {child.label for node in nodes for child in node.children}
    assert {"Wicks", "Oil", "Glass", "Care"} <= labels
    assert "Wicks" in root.text
