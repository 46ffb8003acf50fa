"""`LlamaCppReader`: an LLM reader in process, on llama.cpp (the `reader` extra).

It asks what `OpenAIReader` asks (`reader_messages`: the instruction, then the window and
the question), laid out by the model's own chat template, and answers greedily. By default
the model is the bundled SmolLM2-135M-Instruct: a weak model that copies a value stated in
its context (a needle's number, an MRCR reply) but reasons little, so its figures are a
floor for real readers, reported beside the deterministic reader's, never instead of them.

A window whose prompt and longest answer (`max_tokens` for an MRCR reply, fewer for a few
values) do not fit the model's `n_ctx` is answered "" (and `fits` says so beforehand, for the
report to count it): the model's tokens are not the eval's tokenizer's, so a window within
the budget can still be too long for it.
"""

from __future__ import annotations

from pathlib import Path

from windowpack.errors import InvalidArgumentError
from windowpack.evals.cases import Case
from windowpack.evals.engine import DEFAULT_N_CTX, LlamaEngine
from windowpack.evals.local_model import MODEL_NAME
from windowpack.evals.readers import reader_messages

# Room for an MRCR reply (a few hundred tokens) beside an 8K window in DEFAULT_N_CTX.
DEFAULT_MAX_TOKENS = 512
# Every other answer is a few values or facts: a small model asked for more rambles on, and
# each token it generates costs as much as a few hundred read.
SHORT_ANSWER_TOKENS = 128


class LlamaCppReader:
    """A `BoundedReader` on a local GGUF model, greedy (temperature 0)."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        n_threads: int | None = None,
    ) -> None:
        """`model_path`: a local `.gguf` file (default: the bundled SmolLM2-135M-Instruct);
        `max_tokens`: the longest answer (an MRCR reply), kept free in `n_ctx` beside the
        window; other answers get at most `SHORT_ANSWER_TOKENS` of it."""
        if max_tokens < 1:
            raise InvalidArgumentError("max_tokens", f"must be at least 1, got {max_tokens}")
        if max_tokens >= n_ctx:
            raise InvalidArgumentError(
                "max_tokens", f"must be below n_ctx {n_ctx:,}, got {max_tokens:,}"
            )
        self.max_tokens = max_tokens
        self.engine = LlamaEngine(model_path, n_ctx, n_threads)
        model = MODEL_NAME if model_path is None else Path(model_path).stem
        self.name = f"llama-cpp ({model}, n_ctx {n_ctx:,})"

    def prompt_text(self, case: Case, context: str) -> str:
        """The prompt the model runs for `case` over `context`."""
        return self.engine.chat_prompt(reader_messages(case, context))

    def answer_tokens(self, case: Case) -> int:
        """The longest answer to `case`: a copied MRCR reply, or a few values."""
        return self.max_tokens if case.is_mrcr else min(self.max_tokens, SHORT_ANSWER_TOKENS)

    def fits(self, case: Case, context: str) -> bool:
        """Whether the prompt and the longest answer fit the model's context."""
        prompt = self.engine.tokenize(self.prompt_text(case, context))
        return len(prompt) + self.answer_tokens(case) <= self.engine.n_ctx

    def answer(self, case: Case, context: str) -> str:
        prompt = self.prompt_text(case, context)
        limit = self.answer_tokens(case)
        if len(self.engine.tokenize(prompt)) + limit > self.engine.n_ctx:
            return ""
        return self.engine.prompt(prompt, limit).text.strip()
