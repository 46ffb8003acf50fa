"""Who is calling and what they may touch: API keys scoped to collections, read or write.

Keys are required when the settings say so or the store holds any active key (checked on
every request, so a key created or revoked with `windowpack keys` counts at once). A key sees
only its collections: for any other one it gets exactly the 404 an absent collection gives,
so it cannot learn that the collection exists. Writing with a read-only key is a 403.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from windowpack.errors import (
    AuthenticationError,
    CollectionNotFoundError,
    PermissionDeniedError,
)
from windowpack.service import Collection, Store
from windowpack.types import ALL_COLLECTIONS, ApiKey


@dataclass(frozen=True)
class Access:
    """The caller of one request: its key, or None when the server runs without keys."""

    store: Store
    key: ApiKey | None

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


def authenticate(store: Store, presented: str | None, *, require_keys: bool) -> Access:
    """The caller for a request that presented `presented` (the key, or None)."""
    if presented is not None:
        key = store.api_keys.verify(presented)
        if key is None:
            raise AuthenticationError("the API key is unknown or revoked")
        return Access(store, key)
    if require_keys or store.api_keys.any_active():
        raise AuthenticationError(
            "this server requires an API key: send 'Authorization: Bearer <key>'"
        )
    return Access(store, None)
