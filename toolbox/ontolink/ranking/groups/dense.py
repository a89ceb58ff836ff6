"""dense: the retriever's score, its gap to the best candidate, log(1 + rank). Required: it orders the candidates."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ontolink.ranking.groups import FEATURE_GROUPS, FeatureGroup

if TYPE_CHECKING:
    from ontolink.ranking.groups.base import Candidates


@FEATURE_GROUPS.register("dense")
class RetrieverScores(FeatureGroup):
    columns = ("dense", "dense_gap", "rank")
    default = required = True
    position = 0

    def candidate_columns(self, found: Candidates) -> list[np.ndarray]:
        scores = found.scores
        return [scores, scores - scores.max(), np.log1p(np.arange(len(found.entities), dtype=np.float32))]
