"""Packing: the best window for one question within a token budget (design §4, §5).

The component's public surface; everything else in `windowpack.pack` is its own business.

- `Packer` packs collections (shared per-version states, a window cache, retries while writes
  land); the facade owns one per store.
- `PackRequest` is what determines a window; it is checked when made.
- `scored_corpora` scores a version's chunks for one question: the first look-up and the
  evidence stages (second hop, reranker) a pack runs; diagnostics call it to see a ranking.
- `SessionPlan`, `SessionState`, `SessionWindow`: follow-up questions whose windows extend
  the previous one byte for byte (`Packer.pack_session`).
- `pack_passages` packs text retrieved elsewhere (another framework's nodes) with the same
  allocator, layout and exact count.
"""

from windowpack.pack.layout import SEPARATOR
from windowpack.pack.loading import load_state
from windowpack.pack.packer import Packer, Source
from windowpack.pack.passages import PackedPassages, Passage, pack_passages
from windowpack.pack.request import PackRequest, check_budget
from windowpack.pack.scoring import Scored, scored_corpora
from windowpack.pack.session import SessionPlan, SessionState, SessionWindow
from windowpack.pack.state import PackingState
from windowpack.pack.timing import timed_calls

__all__ = [
    "SEPARATOR",
    "PackRequest",
    "PackedPassages",
    "Packer",
    "PackingState",
    "Passage",
    "Scored",
    "SessionPlan",
    "SessionState",
    "SessionWindow",
    "Source",
    "check_budget",
    "load_state",
    "pack_passages",
    "scored_corpora",
    "timed_calls",
]
