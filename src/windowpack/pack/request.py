"""What determines a window (with the index version): the request, checked when it is made."""

from __future__ import annotations

from dataclasses import dataclass, field

from windowpack.config import EvidenceSettings
from windowpack.errors import InvalidArgumentError
from windowpack.filters import Filter
from windowpack.prompt_cache import cache_minimum
from windowpack.types import BUDGET_RULE, HEADER_STYLES, MAX_BUDGET, MIN_BUDGET, HeaderStyle


@dataclass(frozen=True, kw_only=True)
class PackRequest:
    """Everything that determines a window (with the index version).

    Checked on construction, so a request that exists is valid: the facade builds one per call
    and nothing below checks it again. The query is checked by the facade (as for search): a
    window of passages packed for a framework may have none.
    """

    query: str
    budget: int
    tokenizer: str = "o200k_base"
    overview_tokens: int | None = None
    align: bool | int = False
    """True: the stable tier ends on a multiple of 256 tokens; N: also at least N tokens."""
    evidence: EvidenceSettings = field(default_factory=EvidenceSettings)
    """The query-time stages run after the first look-up (the store's, unless overridden)."""
    provider: str | None = None
    """The provider whose prompt cache the stable tier must reach (`PROMPT_CACHE_MINIMUMS`)."""
    headers: HeaderStyle = HEADER_STYLES[0]
    """What the window says around its passages (`types.HeaderStyle`)."""
    where: Filter | None = None
    """The documents packed: those whose metadata this filter keeps (`filters`); None: all.
    Filters are equal by their canonical key, so the request still keys the window cache."""

    def __post_init__(self) -> None:
        check_budget(self.budget)
        check_headers(self.headers)
        if self.where is not None and not isinstance(self.where, Filter):
            raise InvalidArgumentError("where", "must be a parsed filter (filters.parse_filter)")
        overview = self.overview_tokens
        if overview is not None and (
            isinstance(overview, bool) or not isinstance(overview, int) or overview < 0
        ):
            raise InvalidArgumentError("overview_tokens", f"must be zero or more, got {overview!r}")
        align = self.align
        if not isinstance(align, bool) and (not isinstance(align, int) or align < 1):
            raise InvalidArgumentError(
                "align", f"must be true, false or a positive number of tokens, got {align!r}"
            )
        if self.provider is not None:
            cache_minimum(self.provider)

    @property
    def cache_minimum(self) -> int:
        """The stable tier's minimum length asked by `align=N` or by the provider's cache
        minimum, when half the budget allows it (the rest stays for the question's
        material); else 0."""
        align = 0 if isinstance(self.align, bool) else self.align
        wanted = max(align, cache_minimum(self.provider) if self.provider else 0)
        return wanted if 2 * wanted <= self.budget else 0

    @property
    def pads(self) -> bool:
        """Whether the stable tier is padded: aligned, or made to reach a cache minimum."""
        return bool(self.align) or self.cache_minimum > 0


def check_budget(budget: int) -> None:
    """A budget is a whole number of tokens `types.BUDGET_RULE` allows (not a bool: `True` is
    not 1)."""
    if (
        isinstance(budget, bool)
        or not isinstance(budget, int)
        or not MIN_BUDGET <= budget <= MAX_BUDGET
    ):
        raise InvalidArgumentError(
            "budget", f"must be a whole number {BUDGET_RULE}; got {budget!r}"
        )


def check_headers(headers: object) -> None:
    """A header style is one of `HEADER_STYLES`."""
    if not isinstance(headers, str) or headers not in HEADER_STYLES:
        raise InvalidArgumentError(
            "headers", f"must be one of {', '.join(HEADER_STYLES)}, got {headers!r}"
        )
