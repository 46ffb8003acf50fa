"""The REST service: `create_app(ApiSettings(...))` builds the FastAPI app over one store.

Importing this package imports FastAPI; `import windowpack` never does.
"""

from __future__ import annotations

from windowpack.api.app import create_app
from windowpack.api.server import serve
from windowpack.api.settings import ApiSettings

__all__ = ["ApiSettings", "create_app", "serve"]
