"""What a model's card says of the languages it was trained on.

A sentence-transformers model folder carries its Hugging Face model card, `README.md`, whose
YAML front matter names the training languages (`language: en`, or a list for a multilingual
model). Retrieval reads it to know whether the model's cosines mean anything over a
collection's language (`search.retrieve`).
"""

from __future__ import annotations

import logging
from pathlib import Path

_LOG = logging.getLogger(__name__)
_FENCE = "---"


def card_languages(model_folder: str | Path) -> frozenset[str] | None:
    """The lower-cased language codes the card in `model_folder` names; None when there is no
    readable card or it names none (a model not known to be limited to some languages)."""
    card = Path(model_folder) / "README.md"
    try:
        text = card.read_text(encoding="utf-8")
    except OSError:
        return None
    lines = text.splitlines()
    if not lines or lines[0].strip() != _FENCE:
        return None
    try:
        end = next(i for i, line in enumerate(lines[1:], start=1) if line.strip() == _FENCE)
    except StopIteration:
        return None
    import yaml  # a card is read once per process: keep the ~30 ms import off `import windowpack`

    try:
        metadata = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as error:
        _LOG.info("the model card %s has no readable metadata: %s", card, error)
        return None
    named = metadata.get("language") if isinstance(metadata, dict) else None
    if isinstance(named, str):
        named = [named]
    if not isinstance(named, list):
        return None
    codes = frozenset(
        code.strip().lower() for code in named if isinstance(code, str) and code.strip()
    )
    return codes or None
