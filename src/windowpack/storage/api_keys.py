"""API keys of the REST service: created, listed, revoked and verified against the database.

A key reads `wpk_<key id>_<secret>`. Only the SHA-256 of the whole key is stored. A fast hash
is enough here because the secret is 256 random bits: unlike a password it cannot be guessed,
so a slow KDF (bcrypt, scrypt) would only add ~100 ms to every request. The key id in the
clear lets verification fetch one row and lets `keys list` / `keys revoke` name a key without
its secret. Verification reads the row on every call, so a revocation takes effect at once,
in every server process sharing the database.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from windowpack.errors import InvalidArgumentError, NotFoundError
from windowpack.storage.schema import ApiKeyRow, utc_now
from windowpack.types import ApiKey, CreatedKey

_KEY = re.compile(r"^wpk_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")


class ApiKeys:
    """The store's API keys."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions

    def create(self, name: str, *, collections: Sequence[str], can_write: bool) -> CreatedKey:
        """A new key for `collections` (`["*"]`: every collection), read-only unless `can_write`."""
        if not name.strip():
            raise InvalidArgumentError("name", "must be a non-empty string")
        if not collections:
            raise InvalidArgumentError("collections", "name at least one collection, or '*'")
        key_id = secrets.token_hex(6)
        secret = f"wpk_{key_id}_{secrets.token_urlsafe(32)}"
        row = ApiKeyRow(
            key_id=key_id,
            name=name,
            secret_hash=_hash(secret),
            collections=sorted(set(collections)),
            can_write=can_write,
            created_at=utc_now(),
        )
        with self._sessions.begin() as session:
            session.add(row)
        return CreatedKey(key=_info(row), secret=secret)

    def list(self) -> list[ApiKey]:
        """Every key, revoked ones included, oldest first."""
        with self._sessions() as session:
            rows = session.scalars(select(ApiKeyRow).order_by(ApiKeyRow.created_at))
            return [_info(row) for row in rows]

    def revoke(self, key_id: str) -> None:
        """Revoke a key by its id; it stops working at the next request."""
        with self._sessions.begin() as session:
            row = session.get(ApiKeyRow, key_id)
            if row is None:
                raise NotFoundError(f"API key {key_id!r} does not exist")
            if row.revoked_at is None:
                row.revoked_at = utc_now()

    def any_created(self) -> bool:
        """Whether a key was ever created here, revoked ones included.

        The REST service stays closed once this is true: revoking every key must not open
        the store to anonymous callers again.
        """
        with self._sessions() as session:
            return session.scalar(select(ApiKeyRow.key_id).limit(1)) is not None

    def any_active(self) -> bool:
        """Whether at least one key is not revoked (then the server requires keys)."""
        with self._sessions() as session:
            query = select(ApiKeyRow.key_id).where(ApiKeyRow.revoked_at.is_(None)).limit(1)
            return session.scalar(query) is not None

    def verify(self, secret: str) -> ApiKey | None:
        """The active key whose secret this is, or None (malformed, unknown or revoked)."""
        match = _KEY.match(secret)
        if match is None:
            return None
        with self._sessions() as session:
            row = session.get(ApiKeyRow, match.group(1))
            if row is None or row.revoked_at is not None:
                return None
            if not hmac.compare_digest(row.secret_hash, _hash(secret)):
                return None
            return _info(row)


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _info(row: ApiKeyRow) -> ApiKey:
    return ApiKey(
        key_id=row.key_id,
        name=row.name,
        collections=tuple(row.collections),
        can_write=row.can_write,
        created_at=row.created_at,
        revoked=row.revoked_at is not None,
    )
