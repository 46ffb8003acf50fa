"""Collection.add_llama_documents: llama-index documents in, ids and metadata kept, upserts."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core import Document as LlamaDocument
from llama_index.core import SimpleDirectoryReader

import windowpack as wp


def test_ids_titles_and_metadata_are_kept(
    empty_collection: wp.Collection, llama_documents: list[LlamaDocument]
) -> None:
    report = empty_collection.add_llama_documents(llama_documents)

    assert report.added == len(llama_documents)
    for original in llama_documents:
        stored = empty_collection.get(original.id_)
        assert stored.text == original.text
        assert stored.metadata == original.metadata
        assert stored.title == original.metadata["file_name"]


def test_re_adding_upserts_by_id(
    empty_collection: wp.Collection, llama_documents: list[LlamaDocument]
) -> None:
    empty_collection.add_llama_documents(llama_documents)
    changed = LlamaDocument(
        text="The ferry now runs on Wednesdays too.", id_=llama_documents[1].id_, metadata={}
    )

    unchanged = empty_collection.add_llama_documents(llama_documents[:1])
    replaced = empty_collection.add_llama_documents([changed])

    assert (unchanged.unchanged, unchanged.added) == (1, 0)
    assert (replaced.replaced, replaced.added) == (1, 0)
    assert len(empty_collection) == len(llama_documents)
    assert empty_collection.get(changed.id_).text == changed.text


def test_a_folder_read_by_llama_index(empty_collection: wp.Collection, tmp_path: Path) -> None:
    (tmp_path / "guide.md").write_text("# Guide\n\nBoil the kettle first.\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("The kettle is in the galley.\n", encoding="utf-8")
    documents = SimpleDirectoryReader(str(tmp_path), filename_as_id=True).load_data()

    empty_collection.add_llama_documents(documents)

    # Named as add_files names them: relative to the store's root (tmp_path holds the store).
    infos = {info.id: info for info in empty_collection.documents()}
    assert set(infos) == {"guide.md", "notes.txt"}
    assert empty_collection.get("guide.md").kind == "markdown"
    assert infos["guide.md"].metadata["file_name"] == "guide.md"
    assert infos["guide.md"].title == "Guide"  # its first level-1 heading, as a file's


def test_something_else_is_rejected_naming_it(empty_collection: wp.Collection) -> None:
    with pytest.raises(wp.InvalidInputError, match=r"documents\[1\].*dict"):
        empty_collection.add_llama_documents(
            [LlamaDocument(text="fine", id_="ok"), {"text": "not a document"}]
        )
    assert len(empty_collection) == 0  # nothing of the call was stored
