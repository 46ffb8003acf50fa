"""A conversation's follow-up questions packed so that each window extends the last one."""

from __future__ import annotations

from collections.abc import Sequence

from windowpack.pack import SessionPlan, SessionState
from windowpack.service.context import StoreContext, Where
from windowpack.service.session_tokens import SessionTokens
from windowpack.storage import SESSION_TOKENS, StoreSecrets
from windowpack.types import Window


class WindowSession:
    """Follow-up questions in one conversation over one or more collections.

    `pack(question)` returns a window that starts with the previous window's text, byte for
    byte, and appends the chunks the new question needs that are not in it yet, while the
    budget allows: an engine's prefix cache (or a provider's, at the breakpoints of
    `window.cache_plan(provider)`) then reuses all of the previous window. `extends` says
    whether the last window did; when it did not, `reason` says why it was packed afresh (no
    room left for another question's material, a write to a collection). Every window is
    within `budget`, counted exactly. `token` is the session's state as an opaque string,
    signed with the store's secret: `Collection.session(token=...)` (or the REST API) resumes
    from it in another process on the same store (`service.session_tokens`).
    """

    def __init__(
        self,
        context: StoreContext,
        collections: Sequence[tuple[int, str]],
        plan: SessionPlan,
        tokens: SessionTokens,
        state: SessionState | None = None,
    ) -> None:
        self._context = context
        self._tokens = tokens
        self._collections = list(collections)
        self._plan = plan
        self._state = state
        self.window: Window | None = None
        """The last window packed (None before the first question)."""
        self.extends = False
        """Whether the last window starts with the previous one's text."""
        self.reason: str | None = None
        """Why the last window was packed afresh (None when it extends, or was the first)."""

    @property
    def budget(self) -> int:
        return self._plan.request.budget

    @property
    def token(self) -> str | None:
        """The session's state as an opaque string (None before the first question)."""
        return self._tokens.encode(self._state) if self._state is not None else None

    def pack(self, query: str) -> Window:
        """The window for `query`, extending the last one when the budget allows."""
        found = self._context.pack_session(self._collections, query, self._plan, self._state)
        self._state = found.state
        self.window, self.extends, self.reason = found.window, found.extends, found.reason
        return found.window


def new_session(
    context: StoreContext,
    collections: Sequence[tuple[int, str]],
    *,
    budget: int,
    tokenizer: str,
    provider: str | None,
    overview_tokens: int | None,
    first_tokens: int | None,
    follow_up_tokens: int | None,
    token: str | None,
    where: Where = None,
    scope: str = "",
) -> WindowSession:
    """A session over `collections`, checked here; resumed from `token` when one is given.
    With `where` every window holds only the documents that metadata filter keeps: a token
    resumes with the same filter (with another, the next window is packed afresh). Tokens are
    signed for `scope` (the REST service's API key id) and refused under another."""
    request = context.pack_request(
        budget=budget,
        tokenizer=tokenizer,
        overview_tokens=overview_tokens,
        provider=provider,
        where=where,
    )
    plan = SessionPlan.of(request, first_tokens=first_tokens, follow_up_tokens=follow_up_tokens)
    tokens = SessionTokens(secret=StoreSecrets(context.sessions).get(SESSION_TOKENS), scope=scope)
    names = [name for _, name in collections]
    state = None if token is None else tokens.decode(token, collections=names, budget=budget)
    return WindowSession(context, collections, plan, tokens, state)
