"""Hybrid ranking: fusing the dense and lexical result lists into one.

The default, `z_score_fusion`, standardises each retriever's scores over its candidates and
adds them (the distribution-based score fusion of Qdrant; Bruch et al. 2023 found score
fusions beat RRF). Why not reciprocal rank fusion: RRF keeps only ranks, so a BM25 hit that
outscores everything else by 4x (a rare name, a code, an exact fact) counts the same as a
near tie, and loses to a chunk both retrievers rank modestly. Standardised scores keep that
margin, while staying independent of each retriever's scale. Measured on needles planted in
the essays: RRF put them at ranks 6, 0, 12, 2, 1; z-scores put all five first.
`reciprocal_rank_fusion` stays for callers that only have ranks.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

RRF_K = 60

RankedList = tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]


def z_score_fusion(
    results: Sequence[RankedList], weights: Sequence[float] | None = None
) -> list[tuple[int, float]]:
    """Sum of per-list z-scores (each scaled by its weight), best first; ties broken by
    smaller id."""
    ids, totals = z_scores_fused(results, weights)
    order = np.lexsort((ids, -totals))
    return list(zip(ids[order].tolist(), totals[order].tolist(), strict=True))


def z_scores_fused(
    results: Sequence[RankedList], weights: Sequence[float] | None = None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """The union of ids (sorted) and their summed z-scores, in numpy: packs fuse thousands.

    An id missing from a list gets that list's lowest z-score: it ranked below the list's
    cut-off, so it scored at most that. A list whose scores are all equal (one hit, above all)
    carries only membership: it is standardised with the ids it misses scored below it, as
    two values (`_membership_z`). Giving members a flat 1 let the one chunk that holds a rare
    query term (an error code, a name said once) lose to the dense list's top hits.
    `weights` (one per list; default all 1) scale each list's z-scores before they are added.
    """
    weights = [1.0] * len(results) if weights is None else list(weights)
    present = [
        (ids, scores, weight)
        for (ids, scores), weight in zip(results, weights, strict=True)
        if len(ids) and weight
    ]
    if not present:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    everyone = np.unique(np.concatenate([ids for ids, _, _ in present]).astype(np.int64))
    totals = np.zeros(len(everyone), dtype=np.float64)
    for ids, scores, weight in present:
        values = scores.astype(np.float64)
        spread = float(values.std())
        if spread > 0:
            z_scores = (values - values.mean()) / spread
            floor = float(z_scores.min())
        else:
            member, floor = _membership_z(len(values), len(everyone))
            z_scores = np.full(len(values), member)
        column = np.full(len(everyone), floor)
        column[np.searchsorted(everyone, ids)] = z_scores
        totals += weight * column
    return everyone, totals


def _membership_z(members: int, candidates: int) -> tuple[float, float]:
    """z-scores of members and of the others when `members` of `candidates` score one value
    and the rest another, lower: sqrt((1 - p) / p) and -sqrt(p / (1 - p)), p the members'
    share. All candidates members: no ranking at all (1 and 0, as a flat list)."""
    if members >= candidates:
        return 1.0, 0.0
    share = members / candidates
    return float(np.sqrt((1 - share) / share)), float(-np.sqrt(share / (1 - share)))


def reciprocal_rank_fusion(
    rankings: Sequence[npt.NDArray[np.int64]], *, k: int = RRF_K
) -> list[tuple[int, float]]:
    """Fuse ranked id lists into (id, score) pairs, best first; ties broken by smaller id.

    k=60 is the constant of Cormack et al. (2009), which damps differences between top ranks.
    """
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, chunk_id in enumerate(ranking.tolist()):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (k + rank + 1)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
