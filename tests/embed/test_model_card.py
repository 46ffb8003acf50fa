"""The languages a model card names (`embed.model_card`), on written cards and on the
bundled all-MiniLM-L6-v2's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from windowpack.embed import bundled_model_path, get_embedder, model_languages
from windowpack.embed.model_card import card_languages


def _card(folder: Path, text: str) -> Path:
    (folder / "README.md").write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("card", "languages"),
    [
        ("---\nlanguage: en\nlicense: mit\n---\n# A model\n", {"en"}),
        ("---\nlanguage:\n- DE\n- fr\n---\n", {"de", "fr"}),
        ("---\nlicense: mit\n---\n", None),
        ("# A model with no metadata\nlanguage: en\n", None),
        ("---\nlanguage: [en\n---\n", None),  # unreadable YAML
        ("---\nlanguage: en\n", None),  # the front matter never closes
        ("---\nlanguage: 3\n---\n", None),
    ],
)
def test_a_card_names_its_languages(tmp_path: Path, card: str, languages: set[str] | None) -> None:
    found = card_languages(_card(tmp_path, card))
    assert found == (frozenset(languages) if languages else None)


def test_a_folder_without_a_card_names_none(tmp_path: Path) -> None:
    assert card_languages(tmp_path) is None
    assert card_languages(tmp_path / "missing") is None


def test_the_bundled_model_was_trained_on_english() -> None:
    assert card_languages(bundled_model_path()) == frozenset({"en"})
    assert model_languages(get_embedder()) == frozenset({"en"})
    assert model_languages(get_embedder("hash")) is None
