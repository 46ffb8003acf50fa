"""Documents: add as JSON, files or a conversation (now or as a job), list by page, get,
upsert, delete; and the summary tree rebuilt. Every write is a job; an add to a collection that
does not exist creates it, as a first write does in the library."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, Header, Query, Response, UploadFile
from fastapi import Path as PathParam

from windowpack.api.deps import AccessDep, ApiDep, NewCollectionDep, Write
from windowpack.api.routes.collections import CollectionName
from windowpack.api.schemas import (
    ConversationIn,
    DocumentOut,
    DocumentPage,
    DocumentsDeleteIn,
    DocumentsIn,
    DocumentUpsert,
    JobOut,
    LookupDocumentId,
    NewDocumentId,
)
from windowpack.api.uploads import save_uploads
from windowpack.jobs import ConversationInput, DocumentsInput, FilesInput, TreeInput, request_hash
from windowpack.types import DeleteReport, IngestReport

router = APIRouter(tags=["documents"])
DocumentId = Annotated[
    LookupDocumentId, PathParam(min_length=1, max_length=1024, description="Document id.")
]
NewDocumentIdPath = Annotated[
    NewDocumentId,
    PathParam(description="Document id: no '.' or '..' segment, control character or '//'."),
]
Background = Annotated[
    bool | None,
    Query(description="Run as a job (202); default: only inputs over the server's threshold."),
]
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=255,
        pattern=r"^[!-~]+$",
        description=(
            "Any string of printable ASCII the client makes up per request: a retry with the "
            "same key (same collection, same body) answers the job the first one made, so it "
            "is never ingested twice. The same key with another body is a 409."
        ),
    ),
]
INGESTED: dict[int | str, dict[str, Any]] = {
    200: {"model": IngestReport, "description": "Ingested; what was added"},
    202: {"model": JobOut, "description": "Accepted as a job: poll Location"},
}


@router.post("/collections/{name}/documents", response_model=None, responses=INGESTED)
async def add_documents(
    name: CollectionName,
    body: DocumentsIn,
    access: AccessDep,
    api: ApiDep,
    new: NewCollectionDep,
    background: Background = None,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    """Add documents in one transaction; one whose id exists is replaced if it changed. A
    document of `kind` conversation whose text is a transcript (`User: ...` lines) has its
    turns as units, as `POST .../conversations` gives them."""

    def prepare() -> Write:
        documents = DocumentsInput([item.to_document(item.id) for item in body.documents])
        return Write(
            collection=new.target(access, name),
            job_input=documents,
            background=api.in_background(background, sum(len(d.text) for d in documents.documents)),
            request_hash=request_hash("documents", documents.documents_json),
        )

    return await api.ingest(prepare, idempotency_key)


@router.post("/collections/{name}/files", response_model=None, responses=INGESTED)
async def upload_files(
    name: CollectionName,
    files: Annotated[
        list[UploadFile],
        File(
            description="txt, md, html, pdf, json, jsonl; each file's name is its id: a "
            "relative path (`guide/index.md`) keeps its folders"
        ),
    ],
    access: AccessDep,
    api: ApiDep,
    new: NewCollectionDep,
    background: Background = None,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    """Upload files. Now: a bad file is a 4xx and nothing is stored. As a job: bad files are
    listed in the job's `failures` and the rest is ingested."""

    def prepare() -> Write:
        collection = new.target(access, name)
        saved = save_uploads(files, api.upload_dir)
        in_job = api.in_background(background, saved.size)
        # A job ingests the folder (bad files skipped and reported); a direct call names each
        # file (any bad one fails the whole call, atomically).
        paths = None if in_job else saved.paths
        return Write(
            collection=collection,
            job_input=FilesInput(folder=saved.folder, paths=paths, count=len(saved.paths)),
            background=in_job,
            request_hash=request_hash("files", in_job, saved.digest),
        )

    return await api.ingest(prepare, idempotency_key)


@router.post("/collections/{name}/conversations", response_model=None, responses=INGESTED)
async def add_conversation(
    name: CollectionName,
    body: ConversationIn,
    access: AccessDep,
    api: ApiDep,
    new: NewCollectionDep,
    background: Background = None,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    """Add a chat as one document (`kind` conversation): each turn, a request with its reply,
    is a unit that chunks never cross and windows keep whole."""

    def prepare() -> Write:
        chat = ConversationInput(body.chat(), id=body.id, title=body.title, metadata=body.metadata)
        return Write(
            collection=new.target(access, name),
            job_input=chat,
            background=api.in_background(background, body.size),
            request_hash=request_hash("conversation", chat.manifest()),
        )

    return await api.ingest(prepare, idempotency_key)


@router.post("/collections/{name}/tree:rebuild", response_model=None, responses=INGESTED)
async def rebuild_tree(
    name: CollectionName,
    access: AccessDep,
    api: ApiDep,
    background: Background = None,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    """Rebuild every summary node with the server's summarizer, atomically (readers see the
    old tree until the new one is written)."""

    def prepare() -> Write:
        return Write(
            collection=access.write(name),
            job_input=TreeInput(),
            background=bool(background),
            request_hash=request_hash("tree"),
        )

    return await api.ingest(prepare, idempotency_key)


@router.get("/collections/{name}/documents")
def list_documents(
    name: CollectionName,
    access: AccessDep,
    api: ApiDep,
    offset: Annotated[int, Query(ge=0, le=2**53)] = 0,
    limit: Annotated[int, Query(ge=1)] = 100,
) -> DocumentPage:
    """A page of documents in collection order, without their text."""
    api.check_limit("limit", limit, api.settings.max_page)
    collection = access.read(name)
    total = len(collection)
    items = collection.documents(offset=offset, limit=limit)
    following = offset + len(items)
    return DocumentPage(
        items=items,
        total=total,
        offset=offset,
        limit=limit,
        next_offset=following if following < total else None,
    )


@router.get("/collections/{name}/documents/{document_id:path}")
def get_document(name: CollectionName, document_id: DocumentId, access: AccessDep) -> DocumentOut:
    """One document with its text."""
    return DocumentOut.of(access.read(name).get(document_id))


@router.put(
    "/collections/{name}/documents/{document_id:path}", response_model=None, responses=INGESTED
)
async def upsert_document(
    name: CollectionName,
    document_id: NewDocumentIdPath,
    body: DocumentUpsert,
    access: AccessDep,
    api: ApiDep,
    new: NewCollectionDep,
    background: Background = None,
    idempotency_key: IdempotencyKey = None,
) -> Response:
    """Store this document under `document_id`: added, replaced if changed, else unchanged."""

    def prepare() -> Write:
        document = DocumentsInput([body.to_document(document_id)])
        return Write(
            collection=new.target(access, name),
            job_input=document,
            background=api.in_background(background, len(body.text)),
            request_hash=request_hash("document", document.documents_json[0]),
        )

    return await api.ingest(prepare, idempotency_key)


@router.post("/collections/{name}/documents:delete")
def delete_documents(
    name: CollectionName, body: DocumentsDeleteIn, access: AccessDep
) -> DeleteReport:
    """Delete documents by `ids`, by `where` filter, or both (the listed documents the filter
    keeps), in one transaction and one index version; ids not stored are reported, not an
    error, and a call that deletes nothing leaves the version as it was. A filter that keeps
    every document needs `all: true`."""
    return access.write(name).delete(body.ids, where=body.where, all=body.all)


@router.delete("/collections/{name}/documents/{document_id:path}", status_code=204)
def delete_document(name: CollectionName, document_id: DocumentId, access: AccessDep) -> Response:
    """Delete one document; its summaries go and the collection levels regroup."""
    access.write(name).delete(document_id)
    return Response(status_code=204)
