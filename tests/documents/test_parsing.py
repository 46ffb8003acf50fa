"""Tests for turning real files and folders into documents."""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pypdf
import pytest

from windowpack.documents.parsing import SUPPORTED_SUFFIXES, parse_file, parse_paths
from windowpack.documents.sections import Heading, parse_heading
from windowpack.errors import (
    EmptyDocumentError,
    FileTooLargeError,
    InputPathNotFoundError,
    InvalidArgumentError,
    UnsupportedFileError,
)
from windowpack.types import Document, Span

PdfMaker = Callable[..., bytes]
OutlinedPdfMaker = Callable[[list[str], list[tuple[str, int, int]]], bytes]

LIMIT = 1024 * 1024


def _write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_bytes(content.encode("utf-8"))
    else:
        path.write_bytes(content)
    return path


def _one(path: Path, *, max_bytes: int = LIMIT) -> Document:
    documents = parse_file(path, max_bytes=max_bytes)
    assert len(documents) == 1
    return documents[0]


def _blank_pdf(*, password: str | None = None) -> bytes:
    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=200, height=200)
    if password is not None:
        writer.encrypt(user_password=password, algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


# --- text and Markdown -----------------------------------------------------------------------


def test_text_file_fields(tmp_path: Path) -> None:
    path = _write(tmp_path / "notes.txt", "first line\r\nsecond\rthird\n")
    document = _one(path)
    assert document.text == "first line\nsecond\nthird\n"
    assert document.kind == "text"
    assert document.id == document.source == path.as_posix()
    assert document.title == "notes.txt"
    assert document.metadata == {"path": path.as_posix(), "format": "txt"}
    assert document.units is None


@pytest.mark.parametrize("name", ["README", "notes.text", "LOUD.TXT"])
def test_other_text_names_are_read_as_text(tmp_path: Path, name: str) -> None:
    document = _one(_write(tmp_path / name, "hello"))
    assert (document.text, document.kind, document.metadata["format"]) == ("hello", "text", "txt")


@pytest.mark.parametrize("name", ["guide.md", "guide.markdown", "GUIDE.MD"])
def test_markdown_file(tmp_path: Path, name: str) -> None:
    document = _one(_write(tmp_path / name, "# Title\n\nBody text."))
    assert document.kind == "markdown"
    assert document.metadata["format"] == "markdown"
    assert document.text == "# Title\n\nBody text."


def test_utf8_bom_is_accepted_and_dropped(tmp_path: Path) -> None:
    document = _one(_write(tmp_path / "bom.txt", b"\xef\xbb\xbfcaf\xc3\xa9"))
    assert document.text == "café"


def test_empty_and_whitespace_only_files_are_empty(tmp_path: Path) -> None:
    for name, content in [("empty.txt", ""), ("blank.md", " \n\t\r\n")]:
        path = _write(tmp_path / name, content)
        with pytest.raises(EmptyDocumentError) as caught:
            parse_file(path, max_bytes=LIMIT)
        assert caught.value.message == f"{path.as_posix()}: has no text"


def test_binary_file_is_unsupported(tmp_path: Path) -> None:
    path = _write(tmp_path / "image.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(UnsupportedFileError, match="looks binary") as caught:
        parse_file(path, max_bytes=LIMIT)
    assert caught.value.path == path.as_posix()


def test_invalid_utf8_names_byte_and_offset(tmp_path: Path) -> None:
    path = _write(tmp_path / "latin1.txt", "naïve".encode("latin-1"))
    with pytest.raises(UnsupportedFileError) as caught:
        parse_file(path, max_bytes=LIMIT)
    assert caught.value.problem == "is not valid UTF-8: byte 0xef at offset 2"


def test_invalid_utf8_offset_counts_the_bom(tmp_path: Path) -> None:
    path = _write(tmp_path / "bom.txt", b"\xef\xbb\xbfab\xff")
    with pytest.raises(UnsupportedFileError, match="byte 0xff at offset 5"):
        parse_file(path, max_bytes=LIMIT)


def test_unsupported_suffix(tmp_path: Path) -> None:
    path = _write(tmp_path / "sheet.xlsx", "x")
    with pytest.raises(UnsupportedFileError, match=r"unsupported file type '\.xlsx'"):
        parse_file(path, max_bytes=LIMIT)


def test_supported_suffixes() -> None:
    assert {".txt", ".md", ".html", ".pdf", ".json", ".jsonl", ""} <= SUPPORTED_SUFFIXES
    assert ".docx" not in SUPPORTED_SUFFIXES


# --- size limit ------------------------------------------------------------------------------


def test_too_large_file_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "big.txt", "x" * 2048)
    with pytest.raises(FileTooLargeError) as caught:
        parse_file(path, max_bytes=1024)
    assert caught.value.message == (
        f"{path.as_posix()}: is 2.0 KB; the limit is 1.0 KB (max_file_bytes)"
    )


def test_too_large_is_checked_before_reading(tmp_path: Path) -> None:
    # A sparse 200 MB file: stat reports the size without the test writing 200 MB.
    path = tmp_path / "huge.txt"
    with path.open("wb") as handle:
        handle.truncate(200 * 1024 * 1024)
    with pytest.raises(FileTooLargeError) as caught:
        parse_file(path, max_bytes=64 * 1024 * 1024)
    assert caught.value.problem == "is 200.0 MB; the limit is 64.0 MB (max_file_bytes)"


def test_file_exactly_at_the_limit_is_read(tmp_path: Path) -> None:
    assert _one(_write(tmp_path / "a.txt", "abcd"), max_bytes=4).text == "abcd"


def test_max_bytes_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="max_bytes"):
        parse_paths([tmp_path], max_bytes=0)


# --- HTML ------------------------------------------------------------------------------------


def test_html_becomes_markdown_titled_by_its_title_element(tmp_path: Path) -> None:
    html = (
        "<html><head><title> Release\n Notes </title><style>p{color:red}</style></head>"
        "<body><h1>Version 2 &mdash; changes</h1><p>See <a href='https://x.org'>the docs</a>"
        " for a long sentence that must not be wrapped at any column whatsoever, "
        "no matter how long it gets.</p><script>var hidden = 1;</script></body></html>"
    )
    document = _one(_write(tmp_path / "notes.html", html))
    assert document.title == "Release Notes"
    assert document.kind == "markdown"
    assert document.metadata == {
        "path": (tmp_path / "notes.html").as_posix(),
        "format": "html",
        "titles": {"title": "Release Notes", "h1": "Version 2 — changes"},
    }
    assert "# Version 2 — changes" in document.text
    assert "[the docs](https://x.org)" in document.text
    assert "no matter how long it gets." in document.text.splitlines()[-1]
    assert "hidden" not in document.text
    assert "color" not in document.text


def test_html_headings_survive_as_markdown_headings(tmp_path: Path) -> None:
    html = (
        "<h1>Child process</h1><p>Spawns things.</p>"
        "<h3 id='exec'><code>exec(command)</code><a class='mark' href='#exec'>#</a></h3>"
        "<ul><li><code>maxBuffer</code> Largest amount of data.</li></ul>"
        "<h4>Lists<a class='headerlink' href='#lists'>\u00b6</a></h4><p>Sphinx's mark.</p>"
    )
    document = _one(_write(tmp_path / "cp.html", html))
    assert document.kind == "markdown"
    headings = [line for line in document.text.split("\n") if line.startswith("#")]
    # A "link to this heading" anchor shown as one symbol is the site's, not the title's.
    assert headings == ["# Child process", "### `exec(command)`", "#### Lists"]
    assert [parse_heading(line) for line in headings] == [
        Heading(level=1, title="Child process"),
        Heading(level=3, title="exec(command)"),
        Heading(level=4, title="Lists"),
    ]


def test_html_without_h1_uses_its_title_element(tmp_path: Path) -> None:
    html = "<title>Release Notes</title><h1><img src='logo.png'></h1><h2>Later</h2><p>x</p>"
    assert _one(_write(tmp_path / "n.html", html)).title == "Release Notes"
    nested = "<h1>  The <em>real</em>\n title </h1><h1>second</h1>"
    assert _one(_write(tmp_path / "m.html", nested)).title == "The real title"
    # A <title> that is the <h1> and the site's name gives the <h1>; one that ends with the
    # <h1> (a banner, or "Site: Page") is kept as written: it holds the page's name either way.
    named = "<title>The real title — Example Docs</title><h1>The <em>real</em> title</h1>"
    assert _one(_write(tmp_path / "s.html", named)).title == "The real title"
    banner = "<title>Wicks - The Book</title><h1>The Book</h1><h2>Wicks</h2>"
    assert _one(_write(tmp_path / "b.html", banner)).title == "Wicks - The Book"


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("# Station handbook\n\nBody.", "Station handbook"),
        ("Intro line.\n\n## Part\n\n# The   *real* [one](x.md)\n\nMore.", "The real one"),
        ("Handbook\n========\n\nBody.", "Handbook"),
        ("```\n# not a title\n```\n\n## Only a level two\n\nBody.", None),
        ("#hashtag is not a heading\n\nBody.", None),
    ],
)
def test_markdown_is_titled_by_its_first_level_one_heading(
    tmp_path: Path, text: str, title: str | None
) -> None:
    assert _one(_write(tmp_path / "guide.md", text)).title == (title or "guide.md")


def test_ids_are_relative_to_the_root_whatever_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "project" / "nodedocs" / "path.md", "# Path\n\nJoin paths.")
    _write(tmp_path / "elsewhere" / "x.txt", "outside")
    root = tmp_path / "project"

    monkeypatch.chdir(root)
    from_project = parse_paths(["nodedocs"], max_bytes=LIMIT, root=root)
    monkeypatch.chdir(root / "nodedocs")
    from_inside = parse_paths(["path.md"], max_bytes=LIMIT, root=root)
    outside = parse_paths(["../../elsewhere/x.txt"], max_bytes=LIMIT, root=root)

    assert [d.id for d in from_project.documents] == ["nodedocs/path.md"]
    assert [d.id for d in from_inside.documents] == ["nodedocs/path.md"]
    assert from_inside.documents[0].metadata["path"] == "nodedocs/path.md"
    assert [d.id for d in outside.documents] == [(tmp_path / "elsewhere" / "x.txt").as_posix()]


def test_html_without_title_uses_file_name(tmp_path: Path) -> None:
    document = _one(_write(tmp_path / "page.htm", "<p>Hello</p>"))
    assert (document.title, document.text) == ("page.htm", "Hello")


def test_html_without_text_is_empty(tmp_path: Path) -> None:
    with pytest.raises(EmptyDocumentError, match="has no text"):
        parse_file(
            _write(tmp_path / "blank.html", "<html><body><div></div></body></html>"),
            max_bytes=LIMIT,
        )


# --- PDF -------------------------------------------------------------------------------------


def test_pdf_text_and_metadata_title(tmp_path: Path, text_pdf: PdfMaker) -> None:
    path = _write(tmp_path / "paper.pdf", text_pdf(["Hello windowpack"], title="A Paper"))
    document = _one(path)
    assert "Hello windowpack" in document.text
    assert document.title == "A Paper"
    assert document.kind == "text"
    assert document.metadata == {"path": path.as_posix(), "format": "pdf", "pages": 1}


def test_pdf_pages_are_joined_by_blank_lines(tmp_path: Path, text_pdf: PdfMaker) -> None:
    path = _write(tmp_path / "two.pdf", text_pdf(["First page", "Second page"]))
    document = _one(path)
    assert document.text == "First page\n\nSecond page"
    assert document.title == "two.pdf"
    assert document.metadata["pages"] == 2


def test_pdf_outline_entries_become_headings_where_their_pages_start(
    tmp_path: Path, outlined_pdf: OutlinedPdfMaker
) -> None:
    outline = [("Intro", 0, 1), ("Methods", 1, 1), ("Setup", 1, 2), ("Results", 3, 1)]
    pages = ["Why we looked.", "How we worked.", "", "What we found."]
    document = _one(_write(tmp_path / "paper.pdf", outlined_pdf(pages, outline)))
    assert document.kind == "markdown"
    assert document.text == (
        "# Intro\n\nWhy we looked.\n\n# Methods\n\n## Setup\n\nHow we worked."
        "\n\n# Results\n\nWhat we found."
    )


def test_pdf_outline_entry_on_a_blank_page_leads_the_next_page(
    tmp_path: Path, outlined_pdf: OutlinedPdfMaker
) -> None:
    pages = ["First words.", "", "Last words."]
    document = _one(_write(tmp_path / "p.pdf", outlined_pdf(pages, [("End", 1, 1)])))
    assert document.text == "First words.\n\n# End\n\nLast words."


def test_pdf_without_text_is_empty(tmp_path: Path) -> None:
    path = _write(tmp_path / "scan.pdf", _blank_pdf())
    with pytest.raises(EmptyDocumentError) as caught:
        parse_file(path, max_bytes=LIMIT)
    assert caught.value.problem == "PDF has no extractable text (scanned images?)"


def test_corrupt_pdf_is_unsupported(tmp_path: Path) -> None:
    path = _write(tmp_path / "broken.pdf", b"%PDF-1.4\nthis is not a pdf body\n")
    with pytest.raises(UnsupportedFileError, match="is not a readable PDF"):
        parse_file(path, max_bytes=LIMIT)


def test_password_protected_pdf_is_unsupported(tmp_path: Path) -> None:
    path = _write(tmp_path / "locked.pdf", _blank_pdf(password="secret"))
    with pytest.raises(UnsupportedFileError, match="encrypted PDF"):
        parse_file(path, max_bytes=LIMIT)


# --- JSON ------------------------------------------------------------------------------------

MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi?"},
    {"role": "assistant", "content": "Hello."},
]


def test_json_message_list_is_a_conversation(tmp_path: Path) -> None:
    path = _write(tmp_path / "chat.json", json.dumps(MESSAGES))
    document = _one(path)
    assert document.kind == "conversation"
    assert document.text == "system: Be brief.\n\nuser: Hi?\n\nassistant: Hello."
    assert document.units == [Span(start=0, end=17), Span(start=19, end=47)]
    assert document.units[1].end == len(document.text)
    assert document.id == path.as_posix()
    assert document.metadata == {"path": path.as_posix(), "format": "json"}
    assert document.title == "chat.json"


def test_json_object_with_messages_is_a_conversation(tmp_path: Path) -> None:
    path = _write(tmp_path / "chat.json", json.dumps({"title": "Greeting", "messages": MESSAGES}))
    document = _one(path)
    assert document.kind == "conversation"
    assert document.title == "Greeting"
    assert document.units is not None and len(document.units) == 2


def test_json_messages_that_do_not_validate_name_index_and_field(tmp_path: Path) -> None:
    bad = {"messages": [{"role": "user", "content": "ok"}, {"role": "assistant", "content": 3}]}
    path = _write(tmp_path / "chat.json", json.dumps(bad))
    with pytest.raises(UnsupportedFileError) as caught:
        parse_file(path, max_bytes=LIMIT)
    assert caught.value.problem.startswith("messages[1]: field 'content' must be a string")


def test_json_empty_messages_is_empty(tmp_path: Path) -> None:
    with pytest.raises(EmptyDocumentError, match="has no messages"):
        parse_file(_write(tmp_path / "c.json", '{"messages": []}'), max_bytes=LIMIT)


def test_json_text_object(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.json", json.dumps({"title": "Memo", "text": "line\r\nnext"}))
    document = _one(path)
    assert (document.kind, document.text, document.title) == ("text", "line\nnext", "Memo")


def test_json_text_object_without_title_uses_file_name(tmp_path: Path) -> None:
    assert _one(_write(tmp_path / "t.json", '{"text": "x"}')).title == "t.json"


def test_json_list_is_records_one_compact_line_each(tmp_path: Path) -> None:
    records = [{"b": 1, "a": "é"}, [1, 2], "plain", {"role": "user"}]
    document = _one(_write(tmp_path / "rows.json", json.dumps(records, indent=2)))
    assert document.kind == "records"
    assert document.metadata["format"] == "json"
    lines = ['{"a": "é", "b": 1}', "[1, 2]", '"plain"', '{"role": "user"}']
    assert document.text == "\n".join(lines)
    assert document.units is not None
    assert [document.text[u.start : u.end] for u in document.units] == lines


def test_json_empty_list_has_no_records(tmp_path: Path) -> None:
    with pytest.raises(EmptyDocumentError, match="has no records"):
        parse_file(_write(tmp_path / "none.json", "[]"), max_bytes=LIMIT)


@pytest.mark.parametrize(
    ("content", "problem"),
    [('"just a string"', "got str"), ('{"config": true}', "neither a 'messages' list")],
)
def test_json_other_shapes_are_unsupported(tmp_path: Path, content: str, problem: str) -> None:
    with pytest.raises(UnsupportedFileError, match=problem):
        parse_file(_write(tmp_path / "x.json", content), max_bytes=LIMIT)


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    path = _write(tmp_path / "bad.json", '[\n  {"a": 1},\n  {"a": }\n]')
    with pytest.raises(UnsupportedFileError) as caught:
        parse_file(path, max_bytes=LIMIT)
    assert caught.value.problem == "invalid JSON at line 3 column 9: Expecting value"


# --- JSONL -----------------------------------------------------------------------------------


def test_jsonl_records_keep_lines_verbatim(tmp_path: Path) -> None:
    content = '{"z": 1,   "a": 2}\r\n\n[ 1,2 ]\n  \n"é"\n'
    document = _one(_write(tmp_path / "rows.jsonl", content))
    assert document.kind == "records"
    assert document.metadata == {"path": (tmp_path / "rows.jsonl").as_posix(), "format": "jsonl"}
    assert document.text == '{"z": 1,   "a": 2}\n[ 1,2 ]\n"é"'
    assert document.units == [Span(start=0, end=18), Span(start=19, end=26), Span(start=27, end=30)]


def test_jsonl_messages_are_a_conversation(tmp_path: Path) -> None:
    content = "\n".join(json.dumps(message) for message in MESSAGES) + "\n"
    document = _one(_write(tmp_path / "chat.jsonl", content))
    assert document.kind == "conversation"
    assert document.text.startswith("system: Be brief.\n\nuser: Hi?")
    assert document.units is not None
    first_turn = document.text[document.units[1].start : document.units[1].end]
    assert first_turn == "user: Hi?\n\nassistant: Hello."


def test_jsonl_mixed_lines_are_records(tmp_path: Path) -> None:
    content = json.dumps(MESSAGES[0]) + "\n" + '{"role": "user"}\n'
    assert _one(_write(tmp_path / "m.jsonl", content)).kind == "records"


def test_invalid_jsonl_names_the_file_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "bad.jsonl", '{"a": 1}\n\n{"a": 2,}\n')
    with pytest.raises(UnsupportedFileError) as caught:
        parse_file(path, max_bytes=LIMIT)
    assert caught.value.problem.startswith("invalid JSON at line 3 column 9:")


# --- paths and folders -----------------------------------------------------------------------


def test_missing_path_is_reported_before_parsing(tmp_path: Path) -> None:
    bad = _write(tmp_path / "binary.txt", b"\x00\x01")
    missing = tmp_path / "nope.txt"
    with pytest.raises(InputPathNotFoundError) as caught:
        parse_paths([bad, missing], max_bytes=LIMIT)
    assert caught.value.path == os.fspath(missing)
    assert "no such file or folder" in caught.value.message


def test_explicit_file_that_cannot_be_parsed_raises(tmp_path: Path) -> None:
    good = _write(tmp_path / "good.txt", "fine")
    empty = _write(tmp_path / "empty.txt", "")
    with pytest.raises(EmptyDocumentError, match=r"empty\.txt: has no text"):
        parse_paths([good, empty], max_bytes=LIMIT)


def test_explicit_files_in_given_order(tmp_path: Path) -> None:
    second = _write(tmp_path / "b.txt", "b")
    first = _write(tmp_path / "a.md", "a")
    result = parse_paths([str(second), first], max_bytes=LIMIT)
    assert [d.id for d in result.documents] == [second.as_posix(), first.as_posix()]
    assert result.skipped == {}


def test_folder_walk_skips_bad_files_and_names_them(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    _write(root / "good.txt", "good text")
    _write(root / "table.xlsx", "x")
    _write(root / "empty.txt", "")
    _write(root / "blob.txt", b"ab\x00cd")
    _write(root / "latin.txt", "ç".encode("latin-1"))
    _write(root / "big.md", "y" * 2048)
    _write(root / "bad.json", "{")
    _write(root / "scan.pdf", _blank_pdf())
    _write(root / "broken.pdf", b"%PDF-1.4 junk")
    _write(root / ".hidden.txt", "secret")
    _write(root / ".git" / "config.txt", "secret")
    result = parse_paths([root], max_bytes=1000)
    assert [d.id for d in result.documents] == [(root / "good.txt").as_posix()]
    expected = {
        "table.xlsx": "unsupported file type",
        "empty.txt": "has no text",
        "blob.txt": "looks binary",
        "latin.txt": "not valid UTF-8",
        "big.md": "is 2.0 KB; the limit is 1000 bytes",
        "bad.json": "invalid JSON at line 1",
        "scan.pdf": "no extractable text",
        "broken.pdf": "not a readable PDF",
    }
    assert set(result.skipped) == {(root / name).as_posix() for name in expected}
    for name, problem in expected.items():
        reason = result.skipped[(root / name).as_posix()]
        assert reason.startswith(f"{(root / name).as_posix()}: ")
        assert problem in reason


def test_folder_with_nothing_parseable_is_fine(tmp_path: Path) -> None:
    _write(tmp_path / "only" / "empty.txt", "")
    result = parse_paths([tmp_path / "only"], max_bytes=LIMIT)
    assert result.documents == []
    assert list(result.skipped) == [(tmp_path / "only" / "empty.txt").as_posix()]


def test_nested_folders_are_walked_in_sorted_order(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    for relative in ["c/x.md", "b.txt", "a-b.txt", "a/z.txt", "a/b/y.txt", "A.txt"]:
        _write(root / relative, relative)
    result = parse_paths([root], max_bytes=LIMIT)
    relative_ids = [Path(d.id or "").relative_to(root).as_posix() for d in result.documents]
    assert relative_ids == ["A.txt", "a/b/y.txt", "a/z.txt", "a-b.txt", "b.txt", "c/x.md"]
    assert [d.text for d in result.documents] == relative_ids
    assert result.documents[-1].kind == "markdown"


def test_ids_are_the_given_path_joined_and_stable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "docs" / "sub" / "a.txt", "alpha")
    _write(tmp_path / "docs" / "b.json", '{"text": "beta"}')
    monkeypatch.chdir(tmp_path)
    first = parse_paths(["./docs/"], max_bytes=LIMIT)
    second = parse_paths([Path("docs")], max_bytes=LIMIT)
    ids = [d.id for d in first.documents]
    assert ids == ["docs/b.json", "docs/sub/a.txt"]
    assert [d.id for d in second.documents] == ids
    assert [d.source for d in first.documents] == ids
    assert [d.metadata["path"] for d in first.documents] == ids


def test_a_file_reached_twice_is_returned_once(tmp_path: Path) -> None:
    path = _write(tmp_path / "d" / "a.txt", "alpha")
    result = parse_paths([tmp_path / "d", path], max_bytes=LIMIT)
    assert [d.id for d in result.documents] == [path.as_posix()]


@pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX symlinks")
def test_linked_folders_are_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _write(root / "a.txt", "alpha")
    (root / "loop").symlink_to(root, target_is_directory=True)
    result = parse_paths([root], max_bytes=LIMIT)
    assert [d.id for d in result.documents] == [(root / "a.txt").as_posix()]
    assert "not followed" in result.skipped[(root / "loop").as_posix()]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
def test_special_files_in_folders_are_skipped_not_read(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _write(root / "a.txt", "alpha")
    os.mkfifo(root / "pipe.txt")
    result = parse_paths([root], max_bytes=LIMIT)
    assert len(result.documents) == 1
    assert "is not a regular file" in result.skipped[(root / "pipe.txt").as_posix()]
