"""What a job ingests, as it is stored in the job table, and running it through the facade.

A job's input is data, never a closure: a worker in another process (or after a restart)
reads it from the database. Documents sent as JSON are kept whole in the manifest; uploaded
files stay in their upload folder, which the job removes when it ends. A worker runs the same
facade calls (`Collection.add`, `Collection.add_files`) as the library.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from windowpack.errors import CollectionDeletedError
from windowpack.service import Store
from windowpack.storage import repository
from windowpack.types import Document, IngestProgress, IngestReport, Span

ProgressSink = Callable[[IngestProgress], None]


@dataclass(frozen=True)
class DocumentsInput:
    """Documents to add (upserted by id) in one transaction."""

    documents: Sequence[Document]

    kind = "documents"

    @property
    def count(self) -> int:
        return len(self.documents)

    @cached_property
    def documents_json(self) -> list[dict[str, Any]]:
        """The documents as the manifest holds them (made once: a request's hash reads it too)."""
        return [asdict(document) for document in self.documents]

    def manifest(self) -> dict[str, Any]:
        return {"documents": self.documents_json}

    def run(self, store: Store, name: str, progress: ProgressSink) -> IngestReport:
        return store.collection(name, create=False).add(self.documents, progress=progress)

    def cleanup(self) -> None:
        """Nothing is kept outside the database for documents."""


@dataclass(frozen=True)
class FilesInput:
    """Files saved in `folder`, ingested with ids relative to it.

    With `paths`, each file is named and any bad one fails the whole job (the direct upload's
    rule); without, the folder is ingested and bad files are skipped and listed.
    """

    folder: Path
    paths: Sequence[Path] | None
    count: int

    kind = "files"

    def manifest(self) -> dict[str, Any]:
        named = None if self.paths is None else [str(path) for path in self.paths]
        return {"folder": str(self.folder), "paths": named, "count": self.count}

    def run(self, store: Store, name: str, progress: ProgressSink) -> IngestReport:
        targets = [self.folder] if self.paths is None else list(self.paths)
        collection = store.collection(name, create=False)
        return collection.add_files(targets, progress=progress, root=self.folder)

    def cleanup(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


JobInput = DocumentsInput | FilesInput


def input_of(kind: str, manifest: Mapping[str, Any]) -> JobInput:
    """The input a job row's `kind` and `manifest` describe."""
    if kind == DocumentsInput.kind:
        return DocumentsInput([_document(item) for item in manifest["documents"]])
    if kind == FilesInput.kind:
        paths = manifest.get("paths")
        return FilesInput(
            folder=Path(manifest["folder"]),
            paths=None if paths is None else [Path(path) for path in paths],
            count=int(manifest.get("count", 0)),
        )
    raise ValueError(f"unknown job kind {kind!r}")


def collection_identity(store: Store, name: str) -> str | None:
    """What tells collection `name` from one made again under its name after a delete (SQLite
    gives the new one the old id): its id and creation time; None while it does not exist."""
    with store.sessions() as session:
        row = repository.get_collection(session, name)
    return None if row is None else f"{row.id}@{row.created_at.isoformat()}"


def run_checked(
    job_input: JobInput, store: Store, name: str, identity: str | None, progress: ProgressSink
) -> IngestReport:
    """Run `job_input` into collection `name`, refusing one that was deleted (and perhaps
    made again under the same name) since the job was accepted."""
    if identity is not None and collection_identity(store, name) != identity:
        raise CollectionDeletedError(name)
    return job_input.run(store, name, progress)


def _document(data: Mapping[str, Any]) -> Document:
    units = data.get("units")
    return Document(
        text=data["text"],
        title=data.get("title"),
        id=data.get("id"),
        metadata=dict(data.get("metadata") or {}),
        kind=data.get("kind", "text"),
        units=None if units is None else [Span(start=u["start"], end=u["end"]) for u in units],
        source=data.get("source"),
    )
