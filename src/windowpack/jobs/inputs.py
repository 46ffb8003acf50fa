"""What a job ingests, as it is stored in the job table, and running it through the facade.

A job's input is data, never a closure: a worker in another process (or after a restart)
reads it from the database. Documents sent as JSON are kept whole in the manifest; uploaded
files stay in their upload folder, which the job removes when it ends. A worker runs the same
facade calls (`Collection.add`, `add_files`, `add_conversation`, `rebuild_tree`) as the
library, into the collection as it was when the job was accepted, or, for a collection the
job's write creates (as a first write does in the library), into a new one with the settings
it was accepted with.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from windowpack.errors import CollectionDeletedError
from windowpack.service import Collection, Store
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

    def run(self, collection: Collection, progress: ProgressSink) -> IngestReport:
        return collection.add(self.documents, progress=progress)

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

    def run(self, collection: Collection, progress: ProgressSink) -> IngestReport:
        targets = [self.folder] if self.paths is None else list(self.paths)
        return collection.add_files(targets, progress=progress, root=self.folder)

    def cleanup(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass(frozen=True)
class ConversationInput:
    """A chat to add as one document (`Collection.add_conversation`): `messages` (a list of
    `{role, content}`) or one transcript text, with the document's id, title and metadata."""

    messages: Sequence[Mapping[str, Any]] | str
    id: str | None = None
    title: str | None = None
    metadata: Mapping[str, Any] | None = None

    kind = "conversation"
    count = 1

    def manifest(self) -> dict[str, Any]:
        messages = self.messages if isinstance(self.messages, str) else list(self.messages)
        metadata = dict(self.metadata) if self.metadata is not None else None
        return {"messages": messages, "id": self.id, "title": self.title, "metadata": metadata}

    def run(self, collection: Collection, progress: ProgressSink) -> IngestReport:
        metadata = dict(self.metadata) if self.metadata is not None else None
        return collection.add_conversation(
            self.messages, id=self.id, title=self.title, metadata=metadata, progress=progress
        )

    def cleanup(self) -> None:
        """Nothing is kept outside the database for a conversation."""


@dataclass(frozen=True)
class TreeInput:
    """Rebuild the collection's summary tree with the store's summarizer
    (`Collection.rebuild_tree`)."""

    kind = "tree"
    count = 0

    def manifest(self) -> dict[str, Any]:
        return {}

    def run(self, collection: Collection, progress: ProgressSink) -> IngestReport:
        return collection.rebuild_tree(progress=progress)

    def cleanup(self) -> None:
        """Nothing is kept outside the database for a rebuild."""


JobInput = DocumentsInput | FilesInput | ConversationInput | TreeInput


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
    if kind == ConversationInput.kind:
        return ConversationInput(
            manifest["messages"],
            id=manifest.get("id"),
            title=manifest.get("title"),
            metadata=manifest.get("metadata"),
        )
    if kind == TreeInput.kind:
        return TreeInput()
    raise ValueError(f"unknown job kind {kind!r}")


def collection_identity(store: Store, name: str) -> str | None:
    """What tells collection `name` from one made again under its name after a delete (SQLite
    gives the new one the old id): its id and creation time; None while it does not exist."""
    with store.sessions() as session:
        row = repository.get_collection(session, name)
    return None if row is None else f"{row.id}@{row.created_at.isoformat()}"


def accepted_for(store: Store, collection: Collection) -> dict[str, Any]:
    """What a job's manifest keeps of the collection it was accepted for: its identity, or,
    when the job's write is to create it, the settings to create it with."""
    identity = collection_identity(store, collection.name)
    if identity is not None:
        return {"collection": identity}
    settings = {"tokenizer": collection.tokenizer, "chunk_tokens": collection.chunk_tokens}
    return {"collection": None, "new_collection": settings}


def run_checked(
    job_input: JobInput,
    store: Store,
    name: str,
    manifest: Mapping[str, Any],
    progress: ProgressSink,
) -> IngestReport:
    """Run `job_input` into collection `name` (`manifest`: what `accepted_for` kept),
    refusing one that was deleted (and perhaps made again under the same name) since the job
    was accepted; a collection the job's write creates is created as a first write creates
    it in the library (or, made meanwhile by another write, used if its settings agree)."""
    identity = manifest.get("collection")
    if identity is not None:
        if collection_identity(store, name) != identity:
            raise CollectionDeletedError(name)
        collection = store.collection(name, create=False)
    else:
        settings = manifest.get("new_collection") or {}
        collection = store.collection(
            name, tokenizer=settings.get("tokenizer"), chunk_tokens=settings.get("chunk_tokens")
        )
    return job_input.run(collection, progress)


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
