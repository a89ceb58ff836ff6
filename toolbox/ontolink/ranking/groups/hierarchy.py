"""hierarchy: consensus among the candidates: the score-weighted share of the other candidates that are
descendants (a general term whose children were all retrieved) or ancestors of this one, and whether it is a
parent, child, ancestor or descendant of the top candidate."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ontolink.core.errors import InputError
from ontolink.ranking.groups import FEATURE_GROUPS, FeatureGroup

if TYPE_CHECKING:
    from ontolink.indexes.artifact import LoadedIndex
    from ontolink.ranking.groups.base import Candidates

_CONSENSUS_TEMPERATURE = 0.05  # dense scores within about this of the best weigh in the consensus


@FEATURE_GROUPS.register("hierarchy")
class CandidateHierarchy(FeatureGroup):
    columns = ("descendant_share", "ancestor_share", "parent_of_top", "child_of_top", "ancestor_of_top",
               "descendant_of_top")
    position = 80

    def prepare(self, index: LoadedIndex, options: dict[str, Any]) -> None:
        if index.entity_parents is None:
            raise InputError("index predates hierarchy features (no parent links); rebuild it with `ontolink index`",
                             index.directory)
        self._parents = index.entity_parents
        self._ancestor_sets: dict[int, frozenset[int]] = {}

    def _ancestors(self, entity: int) -> frozenset[int]:
        """Rows of every is_a ancestor of entity row ``entity`` (memoised; the graph is a DAG)."""
        known = self._ancestor_sets.get(entity)
        if known is None:
            found: set[int] = set()
            for parent in self._parents[entity]:
                found.add(parent)
                found |= self._ancestors(parent)
            known = self._ancestor_sets[entity] = frozenset(found)
        return known

    def candidate_columns(self, found: Candidates) -> list[np.ndarray]:
        """Slot 0 is the top candidate (retriever order)."""
        rows, scores = found.entities.tolist(), found.scores
        count = len(rows)
        slot_of = {entity: slot for slot, entity in enumerate(rows)}
        # above[i, j]: candidate j is an ancestor of candidate i
        above = np.zeros((count, count), dtype=np.float32)
        for slot, entity in enumerate(rows):
            for ancestor in self._ancestors(entity) & slot_of.keys():
                above[slot, slot_of[ancestor]] = 1.0
        weight = np.exp((scores - scores.max()) / _CONSENSUS_TEMPERATURE).astype(np.float32)
        others = np.maximum(weight.sum() - weight, 1e-12)
        top_parents = set(self._parents[rows[0]])
        return [weight @ above / others,  # descendants of this candidate, weighted
                above @ weight / others,  # its ancestors among the candidates, weighted
                np.array([entity in top_parents for entity in rows], dtype=np.float32),
                np.array([rows[0] in self._parents[entity] for entity in rows], dtype=np.float32),
                above[0].copy(), above[:, 0].copy()]
