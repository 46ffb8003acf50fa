"""Loading haystacks from each supported form, and cutting them to a token length."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from windowpack.errors import InputPathNotFoundError, InvalidArgumentError, UnsupportedFileError
from windowpack.evals import Haystack, generated_haystack, load_haystack
from windowpack.evals.haystack import PASSAGE_CHARS, insert_at_depth, passages_of_length
from windowpack.text.tokens import TokenCounter

LONG = "A sentence of filler text. " * 8_000  # ~216K chars: over the split threshold


def test_folder_of_txt_files_gives_one_passage_each_in_name_order(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("Second file.")
    (tmp_path / "a.txt").write_text("First file.")
    (tmp_path / "notes.md").write_text("Not a haystack file.")
    assert load_haystack(tmp_path).passages == ("First file.", "Second file.")


def test_json_text_is_split_into_passages(tmp_path: Path) -> None:
    path = tmp_path / "essays.json"
    path.write_text(json.dumps({"text": LONG}))
    haystack = load_haystack(path)
    assert len(haystack.passages) > 5
    assert all(len(p) <= PASSAGE_CHARS * 3 // 2 for p in haystack.passages)
    assert "".join(haystack.passages).replace(" ", "") == LONG.replace(" ", "")


def test_jsonl_of_strings_and_objects(tmp_path: Path) -> None:
    path = tmp_path / "passages.jsonl"
    path.write_text('"plain passage"\n\n{"text": "object passage", "id": 3}\n')
    assert load_haystack(path).passages == ("plain passage", "object passage")


@pytest.mark.parametrize(
    ("name", "content", "error"),
    [
        ("bad.json", '{"title": "no text"}', UnsupportedFileError),
        ("bad.jsonl", "[1, 2]\n", UnsupportedFileError),
        ("bad.csv", "a,b", UnsupportedFileError),
        ("empty.txt", "   ", InvalidArgumentError),
    ],
)
def test_bad_haystacks_name_the_file(
    tmp_path: Path, name: str, content: str, error: type[Exception]
) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(error, match=name):
        load_haystack(path)


def test_missing_path_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputPathNotFoundError, match="absent"):
        load_haystack(tmp_path / "absent")


def test_generated_haystack_is_seeded() -> None:
    assert generated_haystack(seed=1, chars=5_000) == generated_haystack(seed=1, chars=5_000)
    assert generated_haystack(seed=1, chars=5_000) != generated_haystack(seed=2, chars=5_000)
    assert load_haystack(None, seed=4) == generated_haystack(seed=4)


@pytest.mark.parametrize("tokens", [1_000, 9_000, 40_000])
def test_passages_of_length_fit_and_end_on_a_sentence(
    small_haystack: Haystack, counter: TokenCounter, tokens: int
) -> None:
    passages = passages_of_length(small_haystack, tokens, counter)
    total = sum(counter.count_many(passages))
    assert tokens - 60 <= total <= tokens
    assert passages[-1].endswith(".")
    assert small_haystack.passages[0].startswith(passages[0])


def test_insert_at_depth_keeps_every_other_passage(
    small_haystack: Haystack, counter: TokenCounter
) -> None:
    passages = list(small_haystack.passages)
    planted = insert_at_depth(passages, counter, "NEEDLE SENTENCE.", 0.5)
    changed = [i for i, (a, b) in enumerate(zip(passages, planted, strict=True)) if a != b]
    assert len(changed) == 1 and "NEEDLE SENTENCE." in planted[changed[0]]
