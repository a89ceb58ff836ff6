"""Ranking metrics shared by every evaluation: the rank of the right answer, MRR, Recall@K (= Hits@K).

A rank is 1-based; ``NOT_FOUND`` (infinity) marks a right answer that was not among the candidates,
so it counts 0 towards MRR and towards every Recall@K without a special case. Linked mentions
(`eval`), Retrieved records (`eval` of `align` output) and the validation scores of training
(`train retriever`, `align train`) all rank and score through these functions.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence

import numpy as np

NOT_FOUND = math.inf


def first_rank(candidate_ids: Iterable[str], correct: Collection[str]) -> float:
    """1-based position of the first id in ``candidate_ids`` that is in ``correct``; NOT_FOUND when none is."""
    for position, candidate_id in enumerate(candidate_ids, 1):
        if candidate_id in correct:
            return float(position)
    return NOT_FOUND


def rank_by_score(scores, right_score: float) -> int:
    """Rank of an answer scoring ``right_score`` among ``scores``: 1 + the number scoring strictly higher
    (ties go to the right answer)."""
    return 1 + int((scores > right_score).sum())


def diagonal_ranks(similarity) -> np.ndarray:
    """Rank of the diagonal entry in each row of a square similarity matrix (row i's right answer is
    column i), by ``rank_by_score``'s rule."""
    similarity = np.asarray(similarity)
    return 1 + np.sum(similarity > np.diagonal(similarity)[:, None], axis=1)


def as_ranks(ranks: Sequence[float]) -> np.ndarray:
    return np.asarray(ranks, dtype=float)


def mean_reciprocal_rank(ranks: Sequence[float]) -> float:
    """Mean of 1 / rank (NaN when there are no ranks)."""
    values = as_ranks(ranks)
    return float(np.mean(1.0 / values)) if len(values) else math.nan


def recall_at(ranks: Sequence[float], k: int) -> float:
    """Share of ranks <= k: Recall@K, which retrieval calls Hits@K (NaN when there are no ranks)."""
    values = as_ranks(ranks)
    return float(np.mean(values <= k)) if len(values) else math.nan


def median_rank(ranks: Sequence[float]) -> float:
    values = as_ranks(ranks)
    return float(np.median(values)) if len(values) else math.nan


def recall_curve(ranks: Sequence[float], ks: Iterable[int]) -> list[tuple[int, float]]:
    """[(k, Recall@k)] for each k in ``ks``."""
    return [(k, recall_at(ranks, k)) for k in ks]
