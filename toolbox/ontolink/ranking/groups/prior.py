"""prior: log(1 + count) of an entity prior (ranking/priors.py), and its gap to the most common candidate."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.ranking.groups import FEATURE_GROUPS, FeatureGroup

if TYPE_CHECKING:
    from ontolink.indexes.artifact import LoadedIndex
    from ontolink.ranking.groups.base import CandidateBatch


@FEATURE_GROUPS.register("prior")
class EntityPrior(FeatureGroup):
    columns = ("prior", "prior_gap")
    default = True
    position = 20

    def prepare(self, index: LoadedIndex, options: dict[str, Any]) -> None:
        # per entity row (the index's own table, `--prior auto`), or id -> count; none: a constant column,
        # which the fit weighs 0
        rows = options.get("prior_rows")
        if rows is not None:
            self._prior = np.log1p(np.asarray(rows, dtype=np.float32))
            return
        counts = options.get("prior") or {}
        self._prior = np.log1p(np.array([counts.get(entity_id, 0) for entity_id in index.entity_ids],
                                        dtype=np.float32))

    def flat_columns(self, batch: CandidateBatch) -> list[np.ndarray]:
        prior = self._prior[batch.every.entities]
        return [prior, prior - batch.record_max(prior)]
