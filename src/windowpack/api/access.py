"""Who is calling and what they may touch: API keys scoped to collections, read or write.

Keys are required when the settings say so or a key was ever created in the store, revoked
or not (checked on every request, so a key created with `windowpack keys` counts at once;
`allow_anonymous_after_revocation` goes back to "while one is active"). A key sees only its
collections: for any other one it gets exactly the 404 an absent collection gives, so it
cannot learn that the collection exists. Writing with a read-only key is a 403. An add to a
collection that does not exist creates it, as a first write does in the library, when the key
may create that name (a write key in whose scope it is).

A caller without a key (a keyless server, which listens on loopback only) is also held to
where the request came from: its Host must be a loopback name (a DNS-rebinding page
reaches the server under its own host name) and an Origin header, if sent, must be this
same host (a cross-origin page must not write to, or make work for, the store). The pages
outside the API's routes (the inspector, the docs, the schema, health) follow the same Host
rule (`KeylessPages`): nothing there is secret, but a keyless server answers loopback only.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from windowpack.api.errors import error_response
from windowpack.api.settings import ApiSettings
from windowpack.errors import (
    AuthenticationError,
    CollectionNotFoundError,
    PermissionDeniedError,
)
from windowpack.service import Collection, Store
from windowpack.types import ALL_COLLECTIONS, ApiKey

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})
"""Host names (without port) a keyless server answers to."""


@dataclass(frozen=True)
class Access:
    """The caller of one request: its key, or None when the server runs without keys."""

    store: Store
    key: ApiKey | None

    @property
    def scope(self) -> str:
        """Whom a session token is signed for: the key's id ('' without keys), so that a
        token one key was given is refused to another."""
        return self.key.key_id if self.key is not None else ""

    def can_see(self, name: str) -> bool:
        return self.key is None or self.key.can_see(name)

    def read(self, name: str) -> Collection:
        """The existing collection `name`, if the caller may read it.

        Absent or out of scope, the answer is the same 404, naming only the collections the
        caller may see.
        """
        if self.can_see(name):
            with contextlib.suppress(CollectionNotFoundError):
                return self.store.collection(name, create=False)
        raise CollectionNotFoundError(name, existing=self.visible(self.store.collections()))

    def write(self, name: str) -> Collection:
        """The existing collection `name`, if the caller may write to it."""
        collection = self.read(name)
        self.require_write(name)
        return collection

    def add_target(
        self, name: str, *, tokenizer: str | None = None, chunk_tokens: int | None = None
    ) -> Collection:
        """The collection an add writes to, if the caller may: as in the library, one that
        does not exist yet is created by this first write, with `tokenizer` and
        `chunk_tokens` (checked against an existing one's), which needs a write key in whose
        scope the name is. Out of scope, the answer is `read`'s 404."""
        if not self.can_see(name):
            self.read(name)  # raises the same 404 as for an absent collection
        if name in self.store.collections():
            self.require_write(name)
        else:
            self.require_create(name)
        return self.store.collection(name, tokenizer=tokenizer, chunk_tokens=chunk_tokens)

    def require_create(self, name: str) -> None:
        """The caller may create `name`: a write key in whose scope the name is."""
        if self.key is not None and not self.key.can_see(name):
            # 403 whether or not `name` exists, so the answer tells nothing about other tenants.
            raise PermissionDeniedError(
                f"API key {self.key.key_id!r} may not create collection {name!r}"
            )
        self.require_write(name)

    def require_write(self, name: str) -> None:
        if self.key is not None and not self.key.can_write:
            raise PermissionDeniedError(
                f"API key {self.key.key_id!r} may read collection {name!r} but not write to it"
            )

    def require_every_collection(self, what: str) -> None:
        """Only a key for every collection ('*') may see `what` (it names all collections)."""
        if self.key is not None and ALL_COLLECTIONS not in self.key.collections:
            raise PermissionDeniedError(f"{what} needs an API key for every collection ('*')")

    def visible(self, names: list[str]) -> list[str]:
        return [name for name in names if self.can_see(name)]


def keys_required(store: Store, settings: ApiSettings) -> bool:
    """Whether a request must present an API key (module docstring)."""
    if settings.require_keys:
        return True
    if settings.allow_anonymous_after_revocation:
        return store.api_keys.any_active()
    return store.api_keys.any_created()


@dataclass(frozen=True)
class Caller:
    """What one request presented: its key (or None) and the headers saying where it is from."""

    key: str | None
    host: str | None
    origin: str | None


def authenticate(store: Store, caller: Caller, *, settings: ApiSettings) -> Access:
    """The caller's access for one request: its key's, or anonymous if no key is needed."""
    if caller.key is not None:
        key = store.api_keys.verify(caller.key)
        if key is None:
            raise AuthenticationError("the API key is unknown or revoked")
        return Access(store, key)
    if keys_required(store, settings):
        raise AuthenticationError(
            "this server requires an API key: send 'Authorization: Bearer <key>'"
        )
    check_local_origin(caller.host, caller.origin)
    return Access(store, None)


def check_local_origin(host: str | None, origin: str | None) -> None:
    """Refuse (403) a keyless request not addressed to loopback, or from another origin."""
    if host is None or _host_name(host) not in LOOPBACK_HOSTS:
        raise PermissionDeniedError(
            f"this server has no API keys and answers only requests addressed to localhost, "
            f"127.0.0.1 or [::1]; the Host header was {host!r}"
        )
    if origin is not None and origin.lower() not in {
        f"http://{host.lower()}",
        f"https://{host.lower()}",
    }:
        raise PermissionDeniedError(
            f"this server has no API keys and refuses requests from other origins: "
            f"the Origin header was {origin!r}, this server is {host!r}"
        )


def _host_name(host: str) -> str:
    """`localhost:8000` -> `localhost`; `[::1]:8000` -> `[::1]` (lower case)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    name, _, port = host.partition(":")
    return name if port.isdigit() or not port else host


class KeylessPages:
    """On a keyless server, refuse (403) a page outside the API's routes requested under a
    foreign Host name, as the routes do (`check_local_origin`). `/v1` and `/mcp` check their
    callers themselves, keys included."""

    _CHECKED_BY_ROUTES = ("/v1/", "/mcp")

    def __init__(self, app: ASGIApp, *, store: Store, settings: ApiSettings) -> None:
        self.app, self.store, self.settings = app, store, settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not scope["path"].startswith(self._CHECKED_BY_ROUTES):
            host = Headers(scope=scope).get("host")
            try:
                if not await run_in_threadpool(keys_required, self.store, self.settings):
                    check_local_origin(host, None)
            except PermissionDeniedError as error:
                response = error_response(error.http_status, error.code, error.message)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
