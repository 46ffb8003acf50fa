"""Parsing the eval grid from text, as the CLI takes it: `2k,8k,128K,1M`, `0,25,50,100`."""

from __future__ import annotations

import re

from windowpack.errors import InvalidArgumentError
from windowpack.types import BUDGET_RULE, MAX_BUDGET

_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([kKmM]?)$")
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20}  # binary, as model context sizes are quoted
MAX_TOKENS = 10 * (1 << 20)


def parse_token_sizes(text: str, argument: str, *, allow_full: bool = False) -> list[int | None]:
    """`"2k,8k,1M"` → [2048, 8192, 1048576]; `"full"` → None where `allow_full`."""
    sizes: list[int | None] = []
    for part in _parts(text, argument):
        if allow_full and part.lower() == "full":
            sizes.append(None)
            continue
        match = _SIZE.match(part)
        if match is None:
            raise InvalidArgumentError(argument, f"{part!r} is not a size like 8k, 128K or 1M")
        tokens = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
        if not 1 <= tokens <= MAX_TOKENS:
            raise InvalidArgumentError(argument, f"{part} is outside 1 to 10M tokens")
        sizes.append(tokens)
    return sizes


def parse_budgets(text: str) -> list[int]:
    """`"2k,8k,1M"` → [2048, 8192, 1048576]: each a budget `types.BUDGET_RULE` allows."""
    budgets = [size for size in parse_token_sizes(text, "budgets") if size is not None]
    for budget in budgets:
        if budget > MAX_BUDGET:
            raise InvalidArgumentError("budgets", f"{budget:,} is not a budget {BUDGET_RULE}")
    return budgets


def parse_depths(text: str) -> list[float]:
    """Percentages `"0,25,100"` → fractions [0.0, 0.25, 1.0]."""
    depths = []
    for part in _parts(text, "depths"):
        try:
            percent = float(part.rstrip("%"))
        except ValueError:
            raise InvalidArgumentError("depths", f"{part!r} is not a percentage") from None
        if not 0.0 <= percent <= 100.0:
            raise InvalidArgumentError("depths", f"{part} is outside 0 to 100")
        depths.append(percent / 100.0)
    return depths


def parse_counts(text: str, argument: str, *, largest: int) -> list[int]:
    """`"2,4,8"` → [2, 4, 8], each a whole number from 1 to `largest`."""
    counts = []
    for part in _parts(text, argument):
        if not part.isdigit() or not 1 <= int(part) <= largest:
            raise InvalidArgumentError(argument, f"{part!r} is not a whole number 1 to {largest}")
        counts.append(int(part))
    return counts


def parse_names(text: str, argument: str, choices: tuple[str, ...]) -> list[str]:
    names = _parts(text, argument)
    unknown = [name for name in names if name not in choices]
    if unknown:
        raise InvalidArgumentError(
            argument, f"{', '.join(unknown)} not known; choose from {', '.join(choices)}"
        )
    return names


def _parts(text: str, argument: str) -> list[str]:
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts:
        raise InvalidArgumentError(argument, "give a comma-separated list")
    return list(dict.fromkeys(parts))


def size_label(tokens: int) -> str:
    """2048 → "2K", 1048576 → "1M", 3000 → "3000": a size as the options write it."""
    for unit, size in (("M", 1 << 20), ("K", 1 << 10)):
        if tokens % size == 0:
            return f"{tokens // size}{unit}"
    return f"{tokens:,}"
