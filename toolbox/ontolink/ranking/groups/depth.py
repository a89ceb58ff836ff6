"""depth: the candidate's depth in the is_a graph (at most 20), its difference to the top candidate's, leaf or not."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.core.errors import InputError
from ontolink.ranking.groups import FEATURE_GROUPS, FeatureGroup

if TYPE_CHECKING:
    from ontolink.indexes.artifact import LoadedIndex
    from ontolink.ranking.groups.base import CandidateBatch

MAX_DEPTH = 20.0


@FEATURE_GROUPS.register("depth")
class GraphDepth(FeatureGroup):
    columns = ("depth", "depth_gap", "leaf")
    default = True
    position = 50

    def prepare(self, index: LoadedIndex, options: dict[str, Any]) -> None:
        if index.entity_depths is None or index.name_kinds is None:
            raise InputError("index predates candidate features (no depths or name kinds); rebuild it with "
                             "`ontolink index`", index.directory)
        self._depths = np.minimum(np.asarray(index.entity_depths, dtype=np.float32), MAX_DEPTH)
        self._leaves = (np.asarray(index.entity_children) == 0).astype(np.float32)

    def flat_columns(self, batch: CandidateBatch) -> list[np.ndarray]:
        entities = batch.every.entities
        depths = self._depths[entities]
        return [depths, depths - batch.record_first(depths), self._leaves[entities]]
