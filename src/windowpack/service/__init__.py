"""The facade shared by the library, the CLI and the REST API: `open`, `Store`, `Collection`.

A `Store` wires its parts once into a `StoreContext` (database sessions, embedder, indexes,
packer, write lock, summarizers) and hands that to each `Collection`; the facade checks the
caller's arguments once, here at the edge, and delegates the work to the components.
`SessionTokens` signs and reads a session's state as the token clients carry.
"""

from windowpack.service.collection import Collection
from windowpack.service.context import StoreContext
from windowpack.service.session import WindowSession
from windowpack.service.session_tokens import SessionTokens
from windowpack.service.store import Store, open

__all__ = ["Collection", "SessionTokens", "Store", "StoreContext", "WindowSession", "open"]
