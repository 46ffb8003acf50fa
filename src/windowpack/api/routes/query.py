"""Search, pack and session packs (one collection or several), and the summary tree."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Response
from fastapi import Path as PathParam

from windowpack.api.deps import AccessDep, ApiDep
from windowpack.api.routes.collections import CollectionName
from windowpack.api.schemas import (
    MultiPackIn,
    MultiSessionPackIn,
    PackIn,
    PackOut,
    SearchIn,
    SessionOptions,
    SessionPackIn,
    SessionPackOut,
)
from windowpack.service import WindowSession
from windowpack.types import Hit, TreeNode, TreeOverview

router = APIRouter(tags=["query"])


@router.post("/collections/{name}/search")
def search(name: CollectionName, body: SearchIn, access: AccessDep, api: ApiDep) -> list[Hit]:
    """The k most relevant verbatim chunks (and summaries, if asked), best first."""
    api.check_limit("k", body.k, api.settings.max_k)
    return access.read(name).search(
        body.query, body.k, include_summaries=body.include_summaries, where=body.where
    )


@router.post("/collections/{name}/pack", response_model=PackOut)
def pack(name: CollectionName, body: PackIn, access: AccessDep, api: ApiDep) -> Response:
    """The best window for the question within the budget: relevant chunks verbatim,
    summaries of the rest, in document order, the query-independent tier first."""
    api.check_limit("budget", body.budget, api.settings.max_budget)
    window = access.read(name).pack(body.query, **body.window_options())
    return _json(PackOut.of(window, body))


@router.post("/pack", response_model=PackOut)
def pack_collections(body: MultiPackIn, access: AccessDep, api: ApiDep) -> Response:
    """One window over several collections; the budget follows relevance across them."""
    api.check_limit("budget", body.budget, api.settings.max_budget)
    for name in body.collections:
        access.read(name)
    window = api.store.pack(body.query, collections=body.collections, **body.window_options())
    return _json(PackOut.of(window, body))


@router.post("/collections/{name}/sessions/pack", response_model=SessionPackOut)
def pack_session(
    name: CollectionName, body: SessionPackIn, access: AccessDep, api: ApiDep
) -> Response:
    """The window for one question of a conversation: the previous answer's window, byte for
    byte, then what this question needs that it does not show yet, while the budget allows;
    else packed afresh, saying why. Send back the answer's `session` with the next question.
    Stateless: the token holds all the server needs, so any replica answers, after restarts
    too."""
    api.check_limit("budget", body.budget, api.settings.max_budget)
    session = access.read(name).session(**body.session_options(), scope=access.scope)
    return _session_json(session, body)


@router.post("/sessions/pack", response_model=SessionPackOut)
def pack_collections_session(body: MultiSessionPackIn, access: AccessDep, api: ApiDep) -> Response:
    """A session pack over several collections, as `/v1/pack` is a pack over several."""
    api.check_limit("budget", body.budget, api.settings.max_budget)
    for name in body.collections:
        access.read(name)
    session = api.store.session(
        collections=body.collections, **body.session_options(), scope=access.scope
    )
    return _session_json(session, body)


@router.get("/collections/{name}/tree")
def tree(name: CollectionName, access: AccessDep) -> TreeOverview:
    """The summary tree's shape: per level, node counts and tokens; the root's id."""
    return access.read(name).tree()


@router.get("/collections/{name}/tree/nodes/{node_id}")
def tree_node(
    name: CollectionName,
    node_id: Annotated[int, PathParam(ge=0, le=2**53)],
    access: AccessDep,
) -> TreeNode:
    """One summary node: its text, the span it stands for, its parent and its children."""
    return access.read(name).node(node_id)


def _session_json(session: WindowSession, body: SessionOptions) -> Response:
    window = session.pack(body.query)
    assert session.token is not None, "a session that packed a question has a state"
    answer = SessionPackOut.of_session(
        window, body, token=session.token, extends=session.extends, reason=session.reason
    )
    return _json(answer)


def _json(window: PackOut) -> Response:
    """The window serialised once by pydantic. Returned as a model, FastAPI would validate
    and encode it again: a 128K window is ~0.8 MB of JSON, and that doubled its cost."""
    return Response(window.model_dump_json(), media_type="application/json")
