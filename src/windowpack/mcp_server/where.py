"""The one place the tools hand a metadata filter to the facade.

The tools take a filter as `filter` (Chroma's `where` shape, checked by
`filters.parse_filter` naming `filter`) and pass it on as the facade's `where=` keyword.
A facade method that does not take `where=` yet gets no filter: the call is refused naming
`filter` rather than answered unfiltered, which would look like a filtered answer.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from windowpack.errors import InvalidArgumentError
from windowpack.filters import Filter


def where_keyword(method: Callable[..., Any], where: Filter | None) -> dict[str, Any]:
    """The `where=` keyword argument of a call to `method` (`Store.pack`,
    `Collection.search`): none without a filter."""
    if where is None:
        return {}
    if "where" not in inspect.signature(method).parameters:
        raise InvalidArgumentError(
            "filter", "this windowpack's search and pack take no metadata filter yet"
        )
    return {"where": where}
