"""Checking documents before they are stored, and recognising unchanged ones."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from windowpack.errors import EmptyDocumentError, InvalidArgumentError, InvalidInputError
from windowpack.text import content_hash, storable
from windowpack.types import Document


def checked_identity(document: Document, index: int) -> tuple[str, str]:
    """(stable id, text hash) of a valid document; errors name the document and the field.

    Without an id, the id is derived from the text, so re-adding the same text is a no-op.
    What is refused, and why, is in `text.storable`: nothing a database or a URL cannot hold
    faithfully gets stored, so no later read can fail on it.
    """
    label = document.id or document.title or f"documents[{index}]"
    if not isinstance(document.text, str):
        raise InvalidInputError(f"{label}: text must be a string")
    if not document.text.strip():
        raise EmptyDocumentError(label, "has no text")
    _check_fields(document, index)
    for unit in document.units or []:
        if not 0 <= unit.start <= unit.end <= len(document.text):
            raise InvalidInputError(f"{label}: unit span {unit} is outside the text")
    text_hash = content_hash(document.text)
    external_id = document.id if document.id is not None else f"sha256:{text_hash[:32]}"
    return external_id, text_hash


def _check_fields(document: Document, index: int) -> None:
    """Text, id, title and metadata storable on every database (`text.storable`)."""
    if document.id is not None and not isinstance(document.id, str):
        raise InvalidArgumentError(f"documents[{index}].id", "must be a string")
    if document.title is not None and not isinstance(document.title, str):
        raise InvalidArgumentError(f"documents[{index}].title", "must be a string")
    problems = {
        "text": storable.text_problem(document.text),
        "id": storable.id_problem(document.id) if document.id is not None else None,
        "title": storable.title_problem(document.title) if document.title else None,
    }
    for name, problem in problems.items():
        if problem is not None:
            raise InvalidArgumentError(f"documents[{index}].{name}", problem + _naming(document))
    found = storable.metadata_problem(document.metadata)
    if found is not None:
        where, problem = found
        raise InvalidArgumentError(f"documents[{index}].{where}", problem + _naming(document))


def _naming(document: Document) -> str:
    """Which document, when the caller gave it a name ("" when not)."""
    name = document.id if document.id is not None else document.title
    if name is None or storable.text_problem(name) is not None:
        return ""
    return f" (document {name[:80]!r})"


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
