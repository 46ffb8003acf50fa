"""The facade shared by the library, the CLI and the REST API: `open`, `Store`, `Collection`.

A `Store` wires its parts once into a `StoreContext` (database sessions, embedder, indexes,
packer, write lock, summarizers) and hands that to each `Collection`; the facade checks the
caller's arguments once, here at the edge, and delegates the work to the components.
"""

from windowpack.service.collection import Collection
from windowpack.service.context import StoreContext
from windowpack.service.session import WindowSession
from windowpack.service.store import Store, open

__all__ = ["Collection", "Store", "StoreContext", "WindowSession", "open"]
