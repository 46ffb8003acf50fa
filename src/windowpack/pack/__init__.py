"""Packing: the best window for one question within a token budget (design §4, §5).

The component's public surface; everything else in `windowpack.pack` is its own business.

- `Packer` packs collections (shared per-version states, a window cache, retries while writes
  land); the facade owns one per store.
- `PackRequest` is what determines a window; it is checked when made.
- `pack_passages` packs text retrieved elsewhere (another framework's nodes) with the same
  allocator, layout and exact count.
"""

from windowpack.pack.layout import SEPARATOR
from windowpack.pack.packer import Packer, Source
from windowpack.pack.passages import PackedPassages, Passage, pack_passages
from windowpack.pack.request import MAX_BUDGET, PackRequest, check_budget

__all__ = [
    "MAX_BUDGET",
    "SEPARATOR",
    "PackRequest",
    "PackedPassages",
    "Packer",
    "Passage",
    "Source",
    "check_budget",
    "pack_passages",
]
