"""A probe of a real inference engine: llama.cpp in process, and what its prompt cache saves.

`LlamaEngine` wraps one `llama_cpp.Llama` (the `reader` extra; by default the bundled
SmolLM2-135M-Instruct). Between consecutive calls llama-cpp-python keeps the KV cache of the
last prompt (llama.cpp's slot cache; `Llama.generate`'s "prefix-match hit"): a prompt that
starts with the same tokens as the cached ones evaluates only the rest. That is the reuse a
server with prefix caching (vLLM, SGLang, `llama_cpp.server`) gives follow-up requests, and
`prompt` measures it from llama.cpp's own counters:

- `evaluated_tokens` is read from `llama_perf_context` at the first sampled token, after a
  `llama_perf_context_reset`: every decode so far belongs to the prompt. On this build
  (llama-cpp-python 0.3.36) a decode of one token counts in `n_eval` and a larger one in
  `n_p_eval`, and both read at least 1 even when nothing ran; a counter whose time is 0 ms
  counted nothing. So the prompt tokens evaluated are `n_p_eval` (if its time is not 0)
  plus `n_eval` (if its time is not 0), which holds for a cold prompt, a prompt over many
  batches, a one-token suffix and an exact repeat (checked in tests/test_engine.py).
- `cached_tokens` is the rest of the prompt: `prompt_tokens - evaluated_tokens`.

A prompt that the cache holds entirely: when the cache holds exactly that prompt and its
logits are live (the previous call sampled right after it, as `max_tokens=1` does),
llama-cpp-python samples at once: evaluated 0, cached all. When the cache holds more (a
longer earlier prompt, or reply tokens decoded by `max_tokens > 1`), it keeps all but the
prompt's last token and evaluates that one again for fresh logits: evaluated 1, cached
`prompt_tokens - 1`. Decoded reply tokens stay in the cache, so a follow-up that repeats
the previous prompt and reply verbatim reuses them too.

llama_cpp is imported only when an engine is made (`windowpack.text.load_llama`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from windowpack.errors import InvalidArgumentError
from windowpack.evals.local_model import bundled_model_path
from windowpack.text import load_llama

if TYPE_CHECKING:
    import llama_cpp

# The bundled model's 8,192 training tokens plus room for a 512-token answer: an 8K window
# in the model's own tokens fits with its reply.
DEFAULT_N_CTX = 8704


@dataclass(frozen=True, kw_only=True)
class EngineReply:
    """One prompt as the engine ran it."""

    prompt_tokens: int  # the engine's tokenization of the prompt, BOS included
    evaluated_tokens: int  # prompt tokens llama.cpp decoded (its perf counters)
    cached_tokens: int  # prompt tokens served from the KV cache of the previous call
    ttft_s: float  # from the call to the first sampled token
    text: str  # the completion (greedy)


class LlamaEngine:
    """One in-process llama.cpp model, its KV cache kept from call to call.

    Not thread-safe: one caller at a time, as one llama.cpp slot serves one request."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        *,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        """`model_path`: a local GGUF file (default: the bundled SmolLM2-135M-Instruct);
        `n_threads`: llama.cpp's threads for prompt and generation (default: its own
        choice, half the cores); `clock` times the first token (tests pass a fake one)."""
        if n_ctx < 2:
            raise InvalidArgumentError("n_ctx", f"must be at least 2, got {n_ctx}")
        if n_threads is not None and n_threads < 1:
            raise InvalidArgumentError("n_threads", f"must be at least 1, got {n_threads}")
        path = bundled_model_path() if model_path is None else Path(model_path)
        options: dict[str, Any] = {"n_ctx": n_ctx}
        if n_threads is not None:
            options |= {"n_threads": n_threads, "n_threads_batch": n_threads}
        self.model_path = path
        self.n_ctx = n_ctx
        self._clock = clock
        self._llama = load_llama(path, argument="model_path", **options)
        import llama_cpp

        self._llama_cpp = llama_cpp
        vocab = llama_cpp.llama_model_get_vocab(self._llama.model)
        adds_bos = vocab is not None and llama_cpp.llama_vocab_get_add_bos(vocab)
        self.bos_tokens = 1 if adds_bos and self._llama.token_bos() != -1 else 0

    def tokenize(self, text: str) -> list[int]:
        """The prompt tokens of `text` as `create_completion` makes them: BOS when the model
        adds one, then the text with special-token strings as special tokens."""
        tokens = self._llama.tokenize(text.encode(), add_bos=False, special=True)
        return [self._llama.token_bos()] * self.bos_tokens + tokens

    def chat_prompt(self, messages: Sequence[Mapping[str, str]]) -> str:
        """`messages` (role, content) as the model's chat template lays them out, ready for
        the assistant's turn: the prompt `create_chat_completion` would run. A model with
        no template gets the contents one after another, separated by blank lines."""
        template = self._llama.metadata.get("tokenizer.chat_template")
        if template is None:
            return "\n\n".join(message["content"] for message in messages) + "\n\n"
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        def text_of(token: int) -> str:
            if token == -1:
                return ""
            return self._llama.detokenize([token], special=True).decode(errors="replace")

        formatter = Jinja2ChatFormatter(
            template=template,
            eos_token=text_of(self._llama.token_eos()),
            bos_token=text_of(self._llama.token_bos()),
        )
        chat = [{"role": message["role"], "content": message["content"]} for message in messages]
        return formatter(messages=chat).prompt  # type: ignore[arg-type]

    def prompt(self, text: str, max_tokens: int = 1) -> EngineReply:
        """Run `text` greedily for up to `max_tokens` tokens, reusing the cached prefix."""
        if not text:
            raise InvalidArgumentError("text", "must not be empty")
        if max_tokens < 1:
            raise InvalidArgumentError("max_tokens", f"must be at least 1, got {max_tokens}")
        tokens = self.tokenize(text)
        if len(tokens) >= self.n_ctx:
            raise InvalidArgumentError(
                "text", f"{len(tokens):,} tokens do not fit the engine's n_ctx {self.n_ctx:,}"
            )
        first: list[tuple[float, int]] = []

        def at_first_token(input_ids: object, logits: object) -> bool:
            # Called after each sampled token, before it is decoded: at the first one, every
            # decode so far was the prompt's.
            if not first:
                first.append((self._clock(), self._evaluated()))
            return False

        self._llama_cpp.llama_perf_context_reset(self._llama.ctx)
        started = self._clock()
        completion = self._llama.create_completion(
            tokens,
            max_tokens=max_tokens,
            temperature=0.0,
            stopping_criteria=self._llama_cpp.StoppingCriteriaList([at_first_token]),
        )
        if not isinstance(completion, dict):  # pragma: no cover - only stream=True iterates
            raise TypeError("create_completion streamed without stream=True")
        at, evaluated = first[0] if first else (self._clock(), self._evaluated())
        return EngineReply(
            prompt_tokens=len(tokens),
            evaluated_tokens=evaluated,
            cached_tokens=len(tokens) - evaluated,
            ttft_s=at - started,
            text=str(completion["choices"][0]["text"]),
        )

    def reset(self) -> None:
        """Forget the KV cache: the next prompt is evaluated from its first token."""
        self._llama.reset()  # type: ignore[no-untyped-call]  # llama-cpp-python leaves it bare

    def _evaluated(self) -> int:
        """Tokens decoded since the last perf reset (see the module docstring)."""
        data = self._llama_cpp.llama_perf_context(self._llama.ctx)
        batched = data.n_p_eval if data.t_p_eval_ms > 0 else 0
        single = data.n_eval if data.t_eval_ms > 0 else 0
        return int(batched + single)

    @property
    def llama(self) -> llama_cpp.Llama:
        """The wrapped `llama_cpp.Llama` (its cache is the engine's)."""
        return self._llama
