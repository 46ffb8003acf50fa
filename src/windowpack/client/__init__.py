"""A Python client of the REST service that mirrors the library (extra `client`: httpx).

    import windowpack as wp
    with wp.Client("http://127.0.0.1:8000", api_key="wpk_...") as client:
        docs = client.collection("docs")
        docs.add([wp.Document(text="...", id="notes-1")])
        window = docs.pack("what did ops decide?", budget=8_000)

`AsyncClient` is the same for asyncio. Errors are the library's exception tree, made from the
server's error codes.
"""

from __future__ import annotations

from windowpack.errors import MissingDependencyError

try:
    import httpx  # noqa: F401  (checked here, so a missing extra is named once)
except ImportError as error:
    raise MissingDependencyError("httpx", "client") from error

from windowpack.client._async import (
    AsyncClient,
    AsyncRemoteCollection,
    AsyncRemoteJob,
    AsyncRemoteSession,
)
from windowpack.client._sync import Client, RemoteCollection, RemoteJob, RemoteSession
from windowpack.types import JobState

__all__ = [
    "AsyncClient",
    "AsyncRemoteCollection",
    "AsyncRemoteJob",
    "AsyncRemoteSession",
    "Client",
    "JobState",
    "RemoteCollection",
    "RemoteJob",
    "RemoteSession",
]
