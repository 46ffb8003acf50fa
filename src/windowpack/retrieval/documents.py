"""Checking documents before they are stored, and recognising unchanged ones."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from windowpack.errors import EmptyDocumentError, InvalidInputError
from windowpack.text.hashing import content_hash
from windowpack.types import Document


def checked_identity(document: Document, index: int) -> tuple[str, str]:
    """(stable id, text hash) of a valid document; errors name the document and the field.

    Without an id, the id is derived from the text, so re-adding the same text is a no-op.
    """
    label = document.id or document.title or f"documents[{index}]"
    if not isinstance(document.text, str):
        raise InvalidInputError(f"{label}: text must be a string")
    if not document.text.strip():
        raise EmptyDocumentError(label, "has no text")
    try:
        json.dumps(document.metadata)
    except (TypeError, ValueError) as error:
        raise InvalidInputError(f"{label}: metadata is not JSON-serialisable: {error}") from error
    for unit in document.units or []:
        if not 0 <= unit.start <= unit.end <= len(document.text):
            raise InvalidInputError(f"{label}: unit span {unit} is outside the text")
    text_hash = content_hash(document.text)
    external_id = document.id if document.id is not None else f"sha256:{text_hash[:32]}"
    if not external_id.strip():
        raise InvalidInputError(f"documents[{index}]: id must not be empty")
    return external_id, text_hash


def reject_duplicate_ids(external_ids: Iterable[str]) -> None:
    seen: set[str] = set()
    for external_id in external_ids:
        if external_id in seen:
            raise InvalidInputError(f"document id {external_id!r} appears twice in one add")
        seen.add(external_id)


def fingerprint(
    text_hash: str,
    title: str | None,
    kind: str,
    metadata: dict[str, Any],
    units: Sequence[Sequence[int]] | None,
) -> str:
    """What decides whether a stored document is unchanged: text, title, kind, metadata, units."""
    units_list = [list(unit) for unit in units] if units else None
    encoded = json.dumps([text_hash, title, kind, metadata, units_list], sort_keys=True)
    return hashlib.sha256(encoded.encode("utf-8")).hexdigest()
