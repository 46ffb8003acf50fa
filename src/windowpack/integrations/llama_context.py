"""How many tokens of an LLM's context window a packed window may fill under llama-index.

llama-index's response synthesizers put the retrieved text into a question prompt and keep
room for the answer; text past what is left is split over several LLM calls, each refining
the last answer (`compact`, `refine`). A window is one context laid out to be read whole, and
at 8K with MockLLM's 3,900-token window, the second call's prompt (the first answer plus the
rest) no longer fit: "Calculated available context size -63 was not non-negative". So the
retriever sizes the window to what one call can hold, measured the way the synthesizer
measures it before its first call (`compact`'s repacking): llama-index's `PromptHelper` over
the larger of its default question and refine prompts with the question filled in, less the
padding it keeps for the answer, in llama-index's own tokenizer (`Settings.tokenizer`).
"""

from __future__ import annotations

from windowpack.errors import MissingDependencyError

try:
    from llama_index.core import Settings
    from llama_index.core.indices.prompt_helper import PromptHelper
    from llama_index.core.llms import LLM
    from llama_index.core.prompts.default_prompt_selectors import (
        DEFAULT_REFINE_PROMPT_SEL,
        DEFAULT_TEXT_QA_PROMPT_SEL,
    )
    from llama_index.core.prompts.prompt_utils import get_biggest_prompt
    from llama_index.core.response_synthesizers.refine import DEFAULT_RESPONSE_PADDING_SIZE
except ImportError as error:
    raise MissingDependencyError("llama-index-core", "llama-index") from error


def settings_llm() -> LLM | None:
    """`Settings.llm` when one is set or can be made; None when llama-index cannot make its
    default (no OpenAI package or key): then the engine was given its LLM directly."""
    try:
        return Settings.llm
    except (ImportError, ValueError):
        return None


def context_room(llm: LLM, query: str) -> int:
    """Tokens (llama-index's tokenizer) left for retrieved text in one call of `llm` answering
    `query` with the default prompts: its context window less the larger prompt, the answer's
    tokens and the synthesizers' padding; 0 when nothing is left."""
    helper = PromptHelper.from_llm_metadata(llm.metadata)
    prompt = get_biggest_prompt(
        [
            DEFAULT_TEXT_QA_PROMPT_SEL.partial_format(query_str=query),
            DEFAULT_REFINE_PROMPT_SEL.partial_format(query_str=query),
        ]
    )
    try:
        splitter = helper.get_text_splitter_given_prompt(
            prompt, num_chunks=1, padding=DEFAULT_RESPONSE_PADDING_SIZE, llm=llm
        )
        return max(0, splitter.chunk_size)
    except ValueError:  # the prompt and the answer alone fill the context window
        return 0


def llama_tokens(text: str) -> int:
    """`text`'s length in the tokenizer llama-index measures prompts with."""
    return len(Settings.tokenizer(text))
