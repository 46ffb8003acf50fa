"""Documents from llama-index's SimpleDirectoryReader go in as `add_files` would put the same
files: named by their path relative to the store's root (a relative `../folder/` included),
HTML parsed to Markdown without its furniture, Markdown as markdown, a raw PDF from its file;
titled as files are."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from llama_index.core import Document as LlamaDocument
from llama_index.core import SimpleDirectoryReader

import windowpack as wp
from windowpack.config import StoreConfig
from windowpack.documents import from_llama_documents

PAGE = (
    "<!DOCTYPE html><html><head><title>DROP DATABASE</title></head><body>"
    "<div class='navheader'><a href='prev.html'>Prev</a> <a href='index.html'>Home</a></div>"
    "<div class='refnamediv'><h2>DROP DATABASE</h2><p>DROP DATABASE — remove a database</p></div>"
    "<dl><dt><code>FORCE</code></dt><dd><p>Attempt to terminate all existing connections.</p>"
    "</dd></dl><div class='navfooter'><a href='next.html'>Next</a></div></body></html>"
)
GUIDE = "# Lantern guide\n\nTrim the wick before lighting.\n"


@pytest.fixture
def folders(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(project, docs): a project folder holding the store, and a docs folder beside it,
    with the working directory in the project (so the docs are `../docs/`)."""
    project, docs = tmp_path / "project", tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    project.mkdir()
    (docs / "sql-dropdatabase.html").write_text(PAGE, encoding="utf-8")
    (docs / "sub" / "guide.md").write_text(GUIDE, encoding="utf-8")
    previous = Path.cwd()
    os.chdir(project)
    try:
        yield project, docs
    finally:
        os.chdir(previous)


def _store(root: Path) -> wp.Store:
    return wp.open(root / "wp-store", config=StoreConfig(embedder="hash"))


def _read(folder: str) -> list[LlamaDocument]:
    return SimpleDirectoryReader(folder, filename_as_id=True, recursive=True).load_data()


def test_a_relative_folder_is_named_as_add_files_names_it(folders: tuple[Path, Path]) -> None:
    project, docs = folders
    # The store's root is the docs' parent: the files are under it, named relative to it.
    with wp.open(
        project / "wp-store", config=StoreConfig(embedder="hash"), root=docs.parent
    ) as store:
        collection = store.collection("docs")
        report = collection.add_llama_documents(_read("../docs/"))
        ids = sorted(info.id for info in collection.documents())
        assert report.added == 2
        assert ids == ["docs/sql-dropdatabase.html", "docs/sub/guide.md"]
        stored = collection.get("docs/sub/guide.md")
        assert stored.source == "docs/sub/guide.md"
        assert stored.metadata["file_path"] == "docs/sub/guide.md"
        # The same files through add_files have the same ids: they replace, nothing is added.
        assert collection.add_files(["../docs/"]).added == 0
        assert sorted(info.id for info in collection.documents()) == ids


def test_an_absolute_folder_outside_the_root_keeps_absolute_normalised_ids(
    folders: tuple[Path, Path],
) -> None:
    project, docs = folders
    with _store(project) as store:
        collection = store.collection("docs")
        collection.add_llama_documents(_read(os.path.join(project, "..", "docs")))
        ids = sorted(info.id for info in collection.documents())
    assert ids == [(docs / "sql-dropdatabase.html").as_posix(), (docs / "sub/guide.md").as_posix()]


def test_html_and_markdown_are_parsed_as_files_are(folders: tuple[Path, Path]) -> None:
    project, docs = folders
    with _store(project) as store:
        collection = store.collection("docs")
        collection.add_llama_documents(_read(str(docs)))
        page = collection.get((docs / "sql-dropdatabase.html").as_posix())
        guide = collection.get((docs / "sub/guide.md").as_posix())
        window = collection.pack("What does FORCE do?", budget=400)
    assert page.kind == "markdown"
    assert page.title == "DROP DATABASE"
    assert "<div" not in page.text and "refnamediv" not in page.text
    assert "`FORCE`\n:   Attempt to terminate all existing connections." in page.text
    assert "Prev" not in page.text and "Next" not in page.text
    assert page.metadata["file_name"] == "sql-dropdatabase.html"  # the reader's metadata kept
    assert [entry["kind"] for entry in page.metadata["furniture"]] == ["navigation", "navigation"]
    assert (guide.kind, guide.title, guide.text) == ("markdown", "Lantern guide", GUIDE)
    assert "<div" not in window.text


def test_a_raw_pdf_is_parsed_from_its_file(
    folders: tuple[Path, Path], text_pdf: Callable[..., bytes]
) -> None:
    project, docs = folders
    (docs / "manual.pdf").write_bytes(text_pdf(["Lanterns burn oil."], title="Lantern manual"))
    with _store(project) as store:
        collection = store.collection("docs")
        (document,) = SimpleDirectoryReader(input_files=[str(docs / "manual.pdf")]).load_data()
        assert document.text.startswith("%PDF-")  # what the reader hands over
        collection.add_llama_documents([document])
        (info,) = collection.documents()
        stored = collection.get(info.id)
    assert stored.text == "Lanterns burn oil."
    assert stored.title == "Lantern manual"


def test_documents_made_by_hand_are_read_by_their_title_and_content() -> None:
    documents = [
        LlamaDocument(
            text="<html><body><h1>Oil</h1><p>Lamp oil.</p></body></html>",
            id_="oil",
            metadata={"title": "Given title"},
        ),
        LlamaDocument(text="<b>not a page</b> x < y", id_="plain", metadata={"file_name": "n.txt"}),
        LlamaDocument(text="<html><body><p>No title.</p></body></html>", id_="untitled"),
        LlamaDocument(text="# Wicks\n\nTrim them.", id_="wicks"),
    ]
    oil, plain, untitled, wicks = from_llama_documents(documents)
    assert (oil.title, oil.kind, oil.text) == ("Given title", "markdown", "# Oil\n\nLamp oil.")
    assert (plain.kind, plain.text) == ("text", "<b>not a page</b> x < y")
    assert (untitled.title, untitled.text) == (None, "No title.")
    assert (wicks.kind, wicks.title) == ("markdown", "Wicks")  # no file type: its heading says
