"""The store's own secrets, shared by every process on its database (`store_secrets`).

One today: `session_tokens`, the HMAC key of session tokens (`service.session_tokens`). It is
made on first use, by whichever process asks first: the insert ignores a duplicate, so two
replicas starting together agree on one secret. `rotate` replaces it; tokens signed with the
old one are refused from then on, in every process (each request reads the row: one primary
key look-up, so a rotation takes effect at once, without restarts).
"""

from __future__ import annotations

import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from windowpack.storage.cache_queries import insert_ignoring_duplicates
from windowpack.storage.schema import StoreSecretRow, utc_now

SESSION_TOKENS = "session_tokens"
"""The secret that signs session tokens."""


class StoreSecrets:
    """Read, make and rotate the store's secrets by name."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions

    def get(self, name: str) -> bytes:
        """The secret `name`, made now if the store has none yet."""
        with self._sessions() as session:
            query = select(StoreSecretRow.secret).where(StoreSecretRow.name == name)
            secret = session.scalar(query)
        if secret is not None:
            return secret.encode()
        with self._sessions.begin() as session:
            row = {"name": name, "secret": secrets.token_hex(32), "created_at": utc_now()}
            insert_ignoring_duplicates(session, StoreSecretRow, [row])
        return self.get(name)

    def rotate(self, name: str) -> None:
        """Replace the secret `name` with a new one (made if there was none)."""
        with self._sessions.begin() as session:
            row = session.get(StoreSecretRow, name)
            fresh = secrets.token_hex(32)
            if row is None:
                session.add(StoreSecretRow(name=name, secret=fresh, created_at=utc_now()))
            else:
                row.secret, row.created_at = fresh, utc_now()
