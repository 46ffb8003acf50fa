"""Collections: create, list, get with stats, delete."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from windowpack.api.deps import AccessDep, ApiDep
from windowpack.api.schemas import CollectionCreate, CollectionList
from windowpack.errors import InvalidArgumentError
from windowpack.types import CollectionStats

router = APIRouter(tags=["collections"])
CollectionName = Annotated[str, Path(min_length=1, max_length=64, description="Collection name.")]
Confirm = Annotated[
    str | None, Query(description="The collection's name again: no deletion without it.")
]


@router.post("/collections", status_code=201)
def create_collection(body: CollectionCreate, access: AccessDep) -> CollectionStats:
    """Create a collection; its tokenizer and chunk size are fixed from then on."""
    access.require_create(body.name)
    created = access.store.create_collection(
        body.name, tokenizer=body.tokenizer, chunk_tokens=body.chunk_tokens
    )
    return created.stats()


@router.get("/collections")
def list_collections(access: AccessDep) -> CollectionList:
    """The collections this caller may see, sorted by name."""
    return CollectionList(collections=access.visible(access.store.collections()))


@router.get("/collections/{name}")
def get_collection(name: CollectionName, access: AccessDep) -> CollectionStats:
    """Settings and size: documents, chunks, tokens and the current index version."""
    return access.read(name).stats()


@router.delete("/collections/{name}", status_code=204)
def delete_collection(
    name: CollectionName, access: AccessDep, api: ApiDep, confirm: Confirm = None
) -> Response:
    """Delete a collection with its documents, tree and index files; `confirm` must repeat
    its name. A URL that lost its last segments (a client resolving `documents/..`) then
    deletes nothing."""
    access.write(name)
    if confirm != name:
        raise InvalidArgumentError(
            "confirm", f"deleting collection {name!r} needs ?confirm={name} (its name again)"
        )
    api.store.delete_collection(name)
    return Response(status_code=204)
