"""Groups of documents by their ids, so a collection's root can say what each part holds.

A collection's root lists its documents' titles and first lines; past a few dozen documents
they do not fit, and thinning them (every k-th) left the 85 PostgreSQL pages' root naming
five pages. Ids say how a collection is made: `pgdocs/sql-abort.html` and
`pgdocs/sql-alterdomain.html` are two of the SQL command pages, `pgdocs/tutorial-agg.html`
a tutorial page. A document's group is its folder and the name prefix it shares with
others (`pgdocs/sql-*`), and the root lists each group with its count.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_ID_WORD = re.compile(r"[^\W_]+|[\W_]+")


def document_groups(ids: Sequence[str]) -> list[str]:
    """Each document's group, from the ids in collection order: the folder and the name
    prefix its name shares with others (`pgdocs/sql-abort.html` in `pgdocs/sql-*`; "" for
    a document that shares its first word with none); the folder alone when no two names
    share a first word; "" for all when no two documents share a folder either."""
    parsed = [_folder_and_words(document_id) for document_id in ids]
    by_word: dict[tuple[str, str], list[int]] = {}
    for position, (folder, words) in enumerate(parsed):
        by_word.setdefault((folder, words[0] if words else ""), []).append(position)
    if len(by_word) < len(ids):
        labels = [""] * len(ids)
        for (folder, _), members in by_word.items():
            prefix = _common_prefix([parsed[m][1] for m in members]) if len(members) > 1 else ""
            for member in members:
                labels[member] = f"{folder}{prefix}*" if len(members) > 1 else ""
        return labels
    folders = [folder for folder, _ in parsed]
    if 1 < len(set(folders)) < len(ids):
        return [f"{folder}*" for folder in folders]
    return [""] * len(ids)


def _folder_and_words(document_id: str) -> tuple[str, list[str]]:
    """An id's folder (with its `/`) and its name split into words and separators, without
    the extension: `pgdocs/sql-abort.html` is `pgdocs/`, [`sql`, `-`, `abort`]."""
    folder, _, name = document_id.rpartition("/")
    stem = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
    return (f"{folder}/" if folder else ""), _ID_WORD.findall(stem)


def _common_prefix(names: list[list[str]]) -> str:
    """The words (with the separators after them) that every name starts with."""
    shortest = min(len(name) for name in names)
    taken: list[str] = []
    for position in range(shortest):
        part = names[0][position]
        if any(name[position] != part for name in names):
            break
        taken.append(part)
    # A prefix ends after a separator: `sql-` (not `sql`), so the star reads as "the rest".
    while taken and taken[-1][0].isalnum():
        taken.pop()
    return "".join(taken) or names[0][0]
