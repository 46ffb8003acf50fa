"""Where a text longer than the model reads is cut: overlapping windows of word pieces.

The bundled all-MiniLM-L6-v2 reads at most 256 word pieces and silently drops the rest. A
text longer than that is embedded as windows of the model's length, a few pieces
overlapping, whose vectors are averaged; documents (through torch) and questions (through
ONNX Runtime) are cut by this one rule, so that a long question lands where the same text
as a document would.
"""

from __future__ import annotations

from collections.abc import Sequence

_WINDOW_OVERLAP = 32
SPECIAL_TOKENS = 2
"""Pieces the model's tokenizer adds around a text ([CLS] and [SEP]): a window is this
much shorter than the model's length."""


def window_bounds(offsets: Sequence[tuple[int, int]], limit: int) -> list[tuple[int, int]]:
    """Char ranges of windows of at most `limit` word pieces, overlapping by a few pieces."""
    if len(offsets) <= limit:
        return [(0, offsets[-1][1] if offsets else 0)] if offsets else [(0, 0)]
    step = max(1, limit - min(_WINDOW_OVERLAP, limit // 2))
    bounds = []
    for first in range(0, len(offsets), step):
        last = min(first + limit, len(offsets)) - 1
        bounds.append((offsets[first][0], offsets[last][1]))
        if last == len(offsets) - 1:
            break
    return bounds
