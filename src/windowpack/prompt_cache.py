"""Provider prompt caches: how long a prefix each provider caches, and the cache plan that
lays a window's stable tiers out as that provider's request.

A window opens with tiers that do not change between the requests that share them: the
collection overview (the same for every question at one index version and budget), then, in
a session (`Collection.session`), each earlier question's material. An engine's prefix cache
(vLLM, SGLang, llama.cpp) reuses them by itself; a provider's cache needs the prefix to reach
its minimum length and, for Anthropic, explicit breakpoints. The functions here take plain
values (text, tier ends, question) so that `types.Window` can call them without this module
knowing the type.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from windowpack.errors import InvalidArgumentError

PROMPT_CACHE_MINIMUMS: dict[str, int] = {
    "openai": 1024,
    "anthropic": 1024,
    "anthropic-haiku-3.5": 2048,
    "anthropic-opus-4.5": 4096,
    "anthropic-haiku-4.5": 4096,
    "gemini-2.5": 2048,
    "gemini-3": 4096,
}
"""The shortest prompt prefix each provider (or model family) caches, in tokens, as the
providers' documentation stated on `MINIMUMS_CHECKED`: OpenAI's automatic caching from 1,024
tokens; Anthropic's `cache_control` from 1,024 tokens (Claude Sonnet 4.x, Opus 4 and 4.1),
2,048 (Claude Haiku 3.5 and 3) and 4,096 (Claude Opus 4.5, Haiku 4.5); Gemini's implicit
caching from 2,048 (2.5 Flash and Pro) and 4,096 (3.x). Below it the provider silently caches
nothing. Name a provider in `pack(provider=...)` and the stable tier is made that long
whenever the budget allows it."""

MINIMUMS_CHECKED = "2026-12-03"
"""When `PROMPT_CACHE_MINIMUMS` was last checked against the providers' documentation."""

MAX_ANTHROPIC_BREAKPOINTS = 4
"""Anthropic accepts at most four `cache_control` breakpoints in one request."""


@dataclass(frozen=True, slots=True)
class Tier:
    """Where one stable tier of a window ends: the characters and the tokens before it, and
    whether the tier is query-independent (`fixed`: the overview, or a whole lossless
    window) or one question's material in a session."""

    end: int
    tokens: int
    fixed: bool = False


def cache_minimum(provider: str) -> int:
    """The minimum cacheable prefix of `provider`, a key of `PROMPT_CACHE_MINIMUMS`."""
    minimum = PROMPT_CACHE_MINIMUMS.get(provider) if isinstance(provider, str) else None
    if minimum is None:
        known = ", ".join(PROMPT_CACHE_MINIMUMS)
        raise InvalidArgumentError("provider", f"unknown provider {provider!r}: use one of {known}")
    return minimum


def provider_family(provider: str) -> str:
    """ "anthropic", "openai" or "gemini": the request shape a provider's cache plan takes."""
    cache_minimum(provider)
    return provider.split("-", 1)[0]


def chat_messages(
    text: str,
    tiers: Sequence[Tier],
    question: str,
    *,
    provider: str | None = None,
    cache_control: bool = False,
    include_question: bool = True,
) -> list[dict[str, Any]]:
    """The window as chat messages: its query-independent first tier (the overview, when
    `tiers` starts with a `fixed` one) as a system message, the rest of the window as one
    user message whose text parts end where the later stable tiers end, then the question.

    With an Anthropic `provider`, the parts ending the breakpoints `breakpoints` picks carry
    `cache_control`; `cache_control=True` without a provider marks the system message alone.
    """
    first, parts = _split(text, tiers)
    anthropic = provider is not None and provider_family(provider) == "anthropic"
    marked = dict(breakpoints(tiers)) if anthropic else {}
    messages: list[dict[str, Any]] = []
    if first is not None:
        part = _part(first[1], marked.get(first[0]))
        if cache_control and provider is None:
            part["cache_control"] = {"type": "ephemeral"}
        messages.append({"role": "system", "content": [part]})
    content = [_part(part_text, marked.get(end)) for end, part_text in parts]
    if content:
        messages.append({"role": "user", "content": content})
    if include_question and question:
        messages.append({"role": "user", "content": [{"type": "text", "text": question}]})
    return messages


def cache_plan(
    text: str,
    tiers: Sequence[Tier],
    question: str,
    *,
    provider: str,
    tokenizer: str,
    versions: Sequence[tuple[str, int]],
) -> dict[str, Any]:
    """What to send `provider` so that its cache reuses the window's stable tiers.

    `request` holds the request fields in the provider's own API: Anthropic's `system` blocks
    and `messages` with `cache_control` breakpoints; OpenAI's `messages` and a
    `prompt_cache_key` (the same for every request that shares the first tier, so that they
    reach the same cache); Gemini's `messages` for its OpenAI-compatible endpoint (its cache is
    implicit). `breakpoints` are the characters of the window before each cache breakpoint,
    `stable_tokens` the tokens before the last stable tier's end, and `reaches_minimum` whether
    that prefix is long enough for the provider to cache it at all.
    """
    family = provider_family(provider)
    messages = chat_messages(text, tiers, question, provider=provider)
    request: dict[str, Any] = {"messages": messages}
    if family == "anthropic" and messages and messages[0]["role"] == "system":
        request = {"system": messages[0]["content"], "messages": messages[1:]}
    if family == "openai":
        request["prompt_cache_key"] = prompt_cache_key(text, tiers, tokenizer, versions)
    stable = tiers[-1].tokens if tiers else 0
    if family == "anthropic":
        ends = [end for end, _ in breakpoints(tiers)]
    else:
        ends = [tier.end for tier in tiers]
    return {
        "provider": provider,
        "request": request,
        "breakpoints": ends,
        "stable_tokens": stable,
        "reaches_minimum": stable >= cache_minimum(provider),
    }


def breakpoints(tiers: Sequence[Tier]) -> list[tuple[int, dict[str, str]]]:
    """Where Anthropic breakpoints go (character offsets) and their `cache_control`: the end
    of the query-independent first tier for an hour, then the ends of the last session tiers
    for five minutes (Anthropic wants longer lives first), at most
    `MAX_ANTHROPIC_BREAKPOINTS` in all. The last two matter most in a session: the previous
    window ends at one (a cache hit) and this window at the other (a write for the next)."""
    fixed = [tier for tier in tiers if tier.fixed][:1]
    later = [tier for tier in tiers if not tier.fixed]
    later = later[-(MAX_ANTHROPIC_BREAKPOINTS - len(fixed)) :]
    marks = [(tier.end, {"type": "ephemeral", "ttl": "1h"}) for tier in fixed]
    return marks + [(tier.end, {"type": "ephemeral", "ttl": "5m"}) for tier in later]


def prompt_cache_key(
    text: str, tiers: Sequence[Tier], tokenizer: str, versions: Sequence[tuple[str, int]]
) -> str:
    """A key naming the first stable tier's bytes at these collection versions: requests that
    share it route to the same OpenAI cache."""
    first = text[: tiers[0].end] if tiers else ""
    digest = hashlib.sha256(repr((tokenizer, tuple(versions), first)).encode()).hexdigest()
    return f"windowpack-{digest[:32]}"


def _part(text: str, cache_control: dict[str, str] | None) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "text", "text": text}
    if cache_control is not None:
        part["cache_control"] = cache_control
    return part


def _split(
    text: str, tiers: Sequence[Tier]
) -> tuple[tuple[int, str] | None, list[tuple[int, str]]]:
    """The query-independent first tier (its end and text) if the window has one, and the
    rest of the text cut at the later tiers' ends."""
    fixed = tiers[0].end if tiers and tiers[0].fixed else 0
    ends = [tier.end for tier in tiers if fixed < tier.end < len(text)]
    cuts = [fixed, *ends, len(text)]
    parts = [(end, text[start:end]) for start, end in itertools.pairwise(cuts)]
    first = (fixed, text[:fixed]) if fixed else None
    return first, [(end, part) for end, part in parts if part]
