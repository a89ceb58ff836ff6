"""dense: the retriever's score, its gap to the best candidate, log(1 + rank). Required: it orders the candidates."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ontolink.ranking.groups import FEATURE_GROUPS, FeatureGroup

if TYPE_CHECKING:
    from ontolink.ranking.groups.base import CandidateBatch


@FEATURE_GROUPS.register("dense")
class RetrieverScores(FeatureGroup):
    columns = ("dense", "dense_gap", "rank")
    default = required = True
    position = 0

    def flat_columns(self, batch: CandidateBatch) -> list[np.ndarray]:
        scores = batch.every.scores
        return [scores, scores - batch.record_max(scores), np.log1p(batch.slot.astype(np.float32))]
