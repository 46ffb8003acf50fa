"""A document added with the text of another is reported, naming both, and added all the
same: the same folder ingested again under other ids (absolute paths, without `root`) once
doubled a collection in silence."""

from __future__ import annotations

from pathlib import Path

import windowpack as wp

TEXT = "Harbour seals rest on sandbanks at low tide and feed on herring at dusk."
OTHER = "Barn owls hunt voles in the meadow at night and roost in the old mill."


def test_a_text_already_in_the_collection_is_reported_and_still_added(
    hash_store: wp.Store,
) -> None:
    col = hash_store.collection("docs")
    col.add([wp.Document(id="notes/seals.txt", text=TEXT)])

    report = col.add([wp.Document(id="/abs/notes/seals.txt", text=TEXT), wp.Document(text=OTHER)])

    assert report.duplicates == {"/abs/notes/seals.txt": "notes/seals.txt"}
    assert report.added == 2 and len(col) == 3


def test_two_documents_of_one_call_with_one_text(hash_store: wp.Store) -> None:
    report = hash_store.collection("docs").add(
        [
            wp.Document(id="a", text=OTHER),
            wp.Document(id="b", text=TEXT),
            wp.Document(id="c", text=TEXT),
        ]
    )

    assert report.duplicates == {"c": "b"} and report.added == 3


def test_unchanged_and_rewritten_documents_are_no_duplicates(hash_store: wp.Store) -> None:
    col = hash_store.collection("docs")
    col.add([wp.Document(id="x", text=TEXT)])

    again = col.add([wp.Document(id="x", text=TEXT)])  # the same document: unchanged
    # x takes another text in the same call that gives y x's old one: no two hold one text.
    moved = col.add([wp.Document(id="x", text=OTHER), wp.Document(id="y", text=TEXT)])

    assert again.duplicates == {} and again.unchanged == 1
    assert moved.duplicates == {} and (moved.added, moved.replaced) == (1, 1)


def test_a_file_ingested_again_from_another_root(hash_store: wp.Store, tmp_path: Path) -> None:
    folder = tmp_path / "corpus" / "notes"
    folder.mkdir(parents=True)
    (folder / "seals.txt").write_text(TEXT)
    (folder / "owls.txt").write_text(OTHER)
    col = hash_store.collection("docs")
    col.add_files([folder], root=tmp_path / "corpus")

    report = col.add_files([folder], root=tmp_path / "elsewhere")

    assert report.duplicates == {
        str(folder / "owls.txt"): "notes/owls.txt",
        str(folder / "seals.txt"): "notes/seals.txt",
    }
