"""How sure a ranking is of its top candidate: what a gated ranker tests before running its encoder groups."""

import numpy as np


def top_margin(scores):
    """How far a query's best candidate scores above its second (infinite for a single candidate)."""
    if len(scores) < 2:
        return np.inf
    second, first = np.partition(scores, len(scores) - 2)[-2:]
    return float(first - second)
