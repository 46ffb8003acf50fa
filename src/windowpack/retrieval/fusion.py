"""Hybrid ranking: reciprocal rank fusion of the dense and lexical result lists.

RRF rather than a weighted sum of scores: cosine similarities and BM25 scores live on
unrelated scales that shift with the query and the corpus, and RRF needs no calibration.
It rewards a chunk both retrievers rank well, and a chunk only one of them finds still
scores (so an exact term match the embedder misses is not lost). k=60 is the constant of
Cormack et al. (2009), which damps the difference between the very top ranks.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

RRF_K = 60


def reciprocal_rank_fusion(
    rankings: Sequence[npt.NDArray[np.int64]], *, k: int = RRF_K
) -> list[tuple[int, float]]:
    """Fuse ranked id lists into (id, score) pairs, best first; ties broken by smaller id."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, chunk_id in enumerate(ranking.tolist()):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (k + rank + 1)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
