"""dense: the retriever's score, its gap to the best candidate, log(1 + rank). Required: it orders the candidates."""

import numpy as np

from ontolink.ranking.groups import FEATURE_GROUPS, FeatureGroup


@FEATURE_GROUPS.register("dense")
class RetrieverScores(FeatureGroup):
    columns = ("dense", "dense_gap", "rank")
    default = required = True
    position = 0

    def candidate_columns(self, found):
        scores = found.scores
        return [scores, scores - scores.max(), np.log1p(np.arange(len(found.entities), dtype=np.float32))]
