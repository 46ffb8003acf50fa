"""A question's word pieces without transformers: the Hugging Face `tokenizers` library.

`SentenceTransformer.preprocess` tokenises through transformers, which imports torch (~4 s
of a cold CLI process). The fast tokenizer it wraps is the `tokenizers` library's, so the
same definition (the model's `tokenizer.json`, as transformers loaded it) run with the same
settings, truncation at the model's length and no padding for one text, gives the same ids,
attention mask and token types, without either import. The export checks that on probe
texts when it is made (`query_model`); `tests/embed/test_query_tokenizer.py` over many.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from windowpack.embed.windows import SPECIAL_TOKENS, window_bounds

if TYPE_CHECKING:
    from tokenizers import Tokenizer

Features = dict[str, npt.NDArray[np.int64]]


class QueryTokenizer:
    """One text to the features the exported graph takes, as `model.preprocess([text])`."""

    def __init__(self, definition: str, *, max_length: int, inputs: tuple[str, ...]) -> None:
        self.definition = definition
        """The tokenizer's JSON, as kept beside the graph."""
        self.max_length = max_length
        """The model's `max_seq_length`: longer texts are truncated, as preprocess does."""
        self.inputs = inputs
        """The features the graph takes, in its input order."""
        self._truncating = _tokenizer(definition, truncate_at=max_length)
        self._whole: Tokenizer | None = None  # offsets of a long text: made when one comes
        self._lock = threading.Lock()

    def features(self, text: str) -> Features:
        """The graph's inputs for `text`: arrays of shape (1, pieces), int64."""
        encoding = self._truncating.encode(text)
        columns = {
            "input_ids": encoding.ids,
            "attention_mask": encoding.attention_mask,
            "token_type_ids": encoding.type_ids,
        }
        return {name: np.asarray([columns[name]], dtype=np.int64) for name in self.inputs}

    def windows(self, text: str) -> list[str]:
        """The text cut as `SentenceTransformerEmbedder.embed` cuts one longer than the model
        reads: overlapping windows of at most `max_length` pieces, specials included."""
        with self._lock:
            if self._whole is None:
                self._whole = _tokenizer(self.definition, truncate_at=None)
            whole = self._whole
        offsets = whole.encode(text, add_special_tokens=False).offsets
        limit = self.max_length - SPECIAL_TOKENS
        return [text[start:end] for start, end in window_bounds(offsets, limit)]


def _tokenizer(definition: str, *, truncate_at: int | None) -> Tokenizer:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(definition)
    # The saved definition carries whatever padding and truncation transformers last set
    # (all-MiniLM-L6-v2's: pad and cut at 128); preprocess sets its own on every call.
    tokenizer.no_padding()
    if truncate_at is None:
        tokenizer.no_truncation()
    else:
        tokenizer.enable_truncation(truncate_at, stride=0, strategy="longest_first")
    return tokenizer
