"""An abstractive summarizer that asks an LLM, through llama-index's `LLM` interface.

Any `llama_index.core.llms.LLM` works: an OpenAI-compatible endpoint
(`llama-index-llms-openai-like`), Ollama, a local Hugging Face model... The user builds it and
passes it in; windowpack only calls `llm.complete(prompt)` and reads `llm.metadata.model_name`.
It needs the optional extra `llm` (`pip install 'windowpack[llm]'`); llama-index is imported
only when an `LLMSummarizer` is built, so importing this module never needs it.

Every call is bounded: a per-call timeout enforced here (the LLM's own client timeout, if any,
still applies), a few attempts with exponential backoff, and an output cut to the token
target in the caller's tokenizer, so a summary never exceeds `target_tokens` whatever the
model returns. A call that still fails raises `SummaryFailure`; `summarize_many` returns those
failures in place so that the tree builder can fall back to the extractive summarizer for
just those nodes.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeoutError
from dataclasses import dataclass
from typing import TYPE_CHECKING

from windowpack.errors import InvalidArgumentError, MissingDependencyError
from windowpack.summarizer.base import SummaryFailure
from windowpack.text import TokenCounter

if TYPE_CHECKING:
    from llama_index.core.llms import LLM

__all__ = [
    "PROMPT_TEMPLATE",
    "WORDS_PER_TOKEN",
    "CostEstimate",
    "LLMSummarizer",
    "fit_to_tokens",
    "max_words",
]

# Placeholders: {max_words} (from the token target) and {passages} (numbered, in order).
PROMPT_TEMPLATE = """\
Summarize the numbered passages below into one faithful, dense summary.

Rules:
- Cover the passages in the order given; keep what matters most from each.
- Keep names, numbers, dates, and quoted strings or identifiers exactly as written.
- Use only facts stated in the passages: add nothing, guess nothing, give no opinions.
- Write at most {max_words} words of plain prose.
- Reply with the summary only: no title, no preamble, no closing remarks.

Passages:

{passages}

Summary:"""

# English prose runs at about 0.75 words per token (OpenAI's rule of thumb).
WORDS_PER_TOKEN = 0.75

# The end of a sentence: terminal punctuation, closing quotes/brackets, then space or the end.
_SENTENCE_END = re.compile(r"[.!?\u2026][\"'\u201d\u2019)\]]*(?=\s|$)")
# A cut at a sentence end is preferred unless it would keep less than this share of what fits.
_MIN_SENTENCE_CUT_SHARE = 0.5


@dataclass(frozen=True)
class CostEstimate:
    """What summarizing some jobs will cost at most, before retries.

    `input_tokens` counts each rendered prompt (template plus passages) in the counter's
    tokenizer, which approximates the model's; `output_tokens` is the sum of the targets
    (an upper bound: models usually write less).
    """

    calls: int
    input_tokens: int
    output_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __str__(self) -> str:
        return (
            f"{self.calls:,} LLM calls, ~{self.input_tokens:,} input tokens, "
            f"<= {self.output_tokens:,} output tokens"
        )


class LLMSummarizer:
    """A `Summarizer` that writes each summary with one completion of a llama-index `LLM`.

    `attempts` tries per summary (timeouts, errors and empty replies are retried), sleeping
    `backoff_s`, then twice that, ... between tries. `timeout_s` bounds each try: a call still
    running then is abandoned (its thread is left to finish in the background, so give the
    LLM client a timeout of its own too). `prompt_template` must contain `{max_words}` and
    `{passages}`; its hash is part of `summarizer_id`, so changing it recomputes summaries.
    """

    def __init__(
        self,
        llm: LLM,
        *,
        attempts: int = 3,
        backoff_s: float = 0.5,
        timeout_s: float = 120.0,
        prompt_template: str = PROMPT_TEMPLATE,
    ) -> None:
        try:
            import llama_index.core.llms as llama_index_llms
        except ImportError as error:
            raise MissingDependencyError("llama-index-core", "llm") from error
        if not isinstance(llm, llama_index_llms.LLM):
            raise InvalidArgumentError(
                "llm", f"expected a llama_index.core.llms.LLM, got {type(llm).__name__}"
            )
        if attempts < 1:
            raise InvalidArgumentError("attempts", f"must be at least 1, got {attempts}")
        if backoff_s < 0:
            raise InvalidArgumentError("backoff_s", f"must not be negative, got {backoff_s}")
        if not timeout_s > 0:
            raise InvalidArgumentError("timeout_s", f"must be positive, got {timeout_s}")
        for field in ("{max_words}", "{passages}"):
            if field not in prompt_template:
                raise InvalidArgumentError("prompt_template", f"must contain {field}")
        self._llm = llm
        self._attempts = attempts
        self._backoff_s = backoff_s
        self._timeout_s = timeout_s
        self._template = prompt_template
        self._model_name = str(llm.metadata.model_name)
        template_hash = hashlib.sha256(prompt_template.encode("utf-8")).hexdigest()
        self._id = f"llm-{self._model_name}-{template_hash[:8]}"

    @property
    def summarizer_id(self) -> str:
        """`llm-{model name}-{first 8 hex digits of the prompt template's sha256}`."""
        return self._id

    @property
    def llm(self) -> LLM:
        return self._llm

    def build_prompt(self, children: Sequence[str], target_tokens: int) -> str:
        """The exact prompt sent for these passages and this token target."""
        passages = "\n\n".join(f"[{i}] {text.strip()}" for i, text in enumerate(children, 1))
        return self._template.format(max_words=max_words(target_tokens), passages=passages)

    def summarize(
        self, children: Sequence[str], *, target_tokens: int, counter: TokenCounter
    ) -> str:
        """One summary of `children` (in order) of at most `target_tokens` tokens.

        Raises `SummaryFailure` naming the cause when every attempt failed.
        """
        _check_job(children, target_tokens)
        prompt = self.build_prompt(children, target_tokens)
        causes: list[str] = []
        for attempt in range(1, self._attempts + 1):
            if attempt > 1:
                time.sleep(self._backoff_s * 2 ** (attempt - 2))
            try:
                reply = self._complete_within_timeout(prompt)
            except Exception as error:
                causes.append(_describe(error))
                continue
            summary = fit_to_tokens(reply, target_tokens, counter)
            if summary:
                return summary
            causes.append("the LLM returned an empty summary")
        raise SummaryFailure(
            f"LLM summary with model {self._model_name!r} failed after {self._attempts} "
            f"attempt{'s' if self._attempts > 1 else ''}: {causes[-1]}"
            + (f" (earlier: {'; '.join(causes[:-1])})" if len(causes) > 1 else "")
        )

    def summarize_many(
        self,
        jobs: Sequence[tuple[Sequence[str], int]],
        *,
        counter: TokenCounter,
        max_concurrency: int = 4,
    ) -> list[str | SummaryFailure]:
        """`summarize` for each `(children, target_tokens)` job, at most `max_concurrency`
        at a time; results in input order, with a `SummaryFailure` in place of each summary
        that could not be made (nothing is raised for a failed job).

        Bad arguments (an empty job, a target below 1) raise `InvalidArgumentError` before any
        call is made. The bound counts calls being waited for: a call abandoned at its timeout
        may still be running at the endpoint while its job retries.
        """
        if max_concurrency < 1:
            raise InvalidArgumentError(
                "max_concurrency", f"must be at least 1, got {max_concurrency}"
            )
        for children, target_tokens in jobs:
            _check_job(children, target_tokens)
        if not jobs:
            return []

        def run(job: tuple[Sequence[str], int]) -> str | SummaryFailure:
            children, target_tokens = job
            try:
                return self.summarize(children, target_tokens=target_tokens, counter=counter)
            except SummaryFailure as failure:
                return failure
            except Exception as error:  # e.g. the counter failed: still report, don't raise
                return SummaryFailure(f"LLM summary failed: {_describe(error)}")

        workers = min(max_concurrency, len(jobs))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="wp-llm") as pool:
            return list(pool.map(run, jobs))

    def estimate_cost(
        self, jobs: Sequence[tuple[Sequence[str], int]], *, counter: TokenCounter
    ) -> CostEstimate:
        """Calls and tokens `summarize_many(jobs)` costs if every first attempt succeeds."""
        prompts = [self.build_prompt(children, target) for children, target in jobs]
        return CostEstimate(
            calls=len(jobs),
            input_tokens=sum(counter.count_many(prompts)),
            output_tokens=sum(target for _, target in jobs),
        )

    def _complete_within_timeout(self, prompt: str) -> str:
        """`llm.complete(prompt).text`, or TimeoutError after `timeout_s`.

        The call runs on its own daemon thread: a hung call cannot be interrupted, but it is
        left behind rather than waited for, and it never keeps the process alive.
        """
        future: Future[str] = Future()

        def call() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(self._llm.complete(prompt).text)
            except BaseException as error:
                future.set_exception(error)

        threading.Thread(target=call, name="wp-llm-call", daemon=True).start()
        try:
            return future.result(timeout=self._timeout_s)
        except FutureTimeoutError:
            raise TimeoutError(f"no reply within {self._timeout_s:g} s") from None


def max_words(target_tokens: int) -> int:
    """The word limit written into the prompt for a token target."""
    return max(1, int(target_tokens * WORDS_PER_TOKEN))


def fit_to_tokens(text: str, max_tokens: int, counter: TokenCounter) -> str:
    """`text` stripped, cut to at most `max_tokens` tokens: at the last sentence end that fits
    (unless that keeps less than half of what fits), else at a token boundary."""
    text = text.strip()
    if not text or counter.count(text) <= max_tokens:
        return text
    limit = max_tokens
    while limit >= 1:
        cuts = counter.cut_points(text, limit)
        head = text[: cuts[0]] if cuts else text
        for candidate in (_cut_at_sentence_end(head), head.rstrip()):
            # Re-encoding a prefix can rarely take more tokens than it did inside the text.
            if candidate and counter.count(candidate) <= max_tokens:
                return candidate
        limit -= 1
    return ""


def _cut_at_sentence_end(head: str) -> str:
    ends = [match.end() for match in _SENTENCE_END.finditer(head)]
    if not ends or ends[-1] < _MIN_SENTENCE_CUT_SHARE * len(head.rstrip()):
        return ""
    return head[: ends[-1]]


def _check_job(children: Sequence[str], target_tokens: int) -> None:
    if isinstance(children, str):
        raise InvalidArgumentError("children", "must be a sequence of texts, not one string")
    if not children:
        raise InvalidArgumentError("children", "must hold at least one text")
    if target_tokens < 1:
        raise InvalidArgumentError("target_tokens", f"must be at least 1, got {target_tokens}")


def _describe(error: BaseException) -> str:
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {message}" if message else type(error).__name__
