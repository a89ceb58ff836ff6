"""abbreviation: the candidate was found through the long form of a short form defined in the document (the
long form is searched too, by CandidateFeatures; each candidate keeps the better of its two scores)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ontolink.ranking.groups import FEATURE_GROUPS, FeatureGroup

if TYPE_CHECKING:
    from ontolink.ranking.groups.base import CandidateBatch
    import numpy as np


@FEATURE_GROUPS.register("abbreviation")
class FoundByLongForm(FeatureGroup):
    columns = ("expanded",)
    default = True
    searches_long_forms = True
    position = 30

    def flat_columns(self, batch: CandidateBatch) -> list[np.ndarray]:
        return [batch.every.by_long_form]
